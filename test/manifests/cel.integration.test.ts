/**
 * kubesmith's verdict on CEL rules against the API server's: each case is a CRD with one rule (or a few),
 * given to `compileRules` (what `manifests` runs) and created on a real kube-apiserver (envtest, server-side
 * dry run). Where kubesmith accepts, the server accepts; where kubesmith refuses (a rule that does not
 * compile, oldSelf where it cannot be correlated, a cost over budget), the server refuses too.
 */
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBinaryAssets, startEnvtest, type Envtest } from '../../runtime/src/envtest/index.js';
import { compileRules } from '../../src/schema/cel-compile.js';
import type { JSONSchemaProps, ValidationRule } from '../../src/schema/types.js';

let env: Envtest;
let kubectlPath: string;

beforeAll(async () => {
  kubectlPath = path.join(findBinaryAssets(), 'kubectl');
  env = await startEnvtest();
}, 120_000);

afterAll(async () => {
  await env?.stop();
});

const str: JSONSchemaProps = { type: 'string' };
/** A spec of every shape the cases need. */
function spec(
  rules: ValidationRule[],
  extra: Partial<Record<string, JSONSchemaProps>> = {},
): JSONSchemaProps {
  return {
    type: 'object',
    properties: {
      name: { type: 'string', maxLength: 63 },
      free: str,
      replicas: { type: 'integer' },
      hosts: { type: 'array', items: str },
      shortHosts: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 63 } },
      labels: { type: 'object', additionalProperties: str },
      ...extra,
    },
    'x-kubernetes-validations': rules,
  };
}

function crd(specSchema: JSONSchemaProps) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'cases.lab.example.com' },
    spec: {
      group: 'lab.example.com',
      names: { kind: 'Case', listKind: 'CaseList', plural: 'cases', singular: 'case' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: 'object', properties: { spec: specSchema } },
          },
        },
      ],
    },
  };
}

interface Case {
  name: string;
  schema: JSONSchemaProps;
  accepted: boolean;
}

const items = (rules: ValidationRule[], listType?: string): JSONSchemaProps => ({
  type: 'array',
  ...(listType === 'map' ? { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] } : {}),
  items: {
    type: 'object',
    required: ['name'],
    properties: { name: str, port: { type: 'integer' } },
    'x-kubernetes-validations': rules,
  },
});

const CASES: Case[] = [
  // Accepted.
  { name: 'a plain rule', schema: spec([{ rule: 'self.replicas >= 0' }]), accepted: true },
  {
    name: 'a regex over a bounded list of bounded strings',
    schema: spec([{ rule: "self.shortHosts.all(h, h.matches('^[a-z]+$'))" }]),
    accepted: true,
  },
  {
    name: 'a regex over one unbounded string',
    schema: spec([{ rule: "self.free.matches('^a')" }]),
    accepted: true,
  },
  { name: 'has() of a known field', schema: spec([{ rule: 'has(self.free)' }]), accepted: true },
  {
    name: 'oldSelf with a string messageExpression',
    schema: spec([{ rule: 'self.name == oldSelf.name', messageExpression: "'was ' + oldSelf.name" }]),
    accepted: true,
  },
  {
    name: 'oldSelf with optionalOldSelf',
    schema: spec([
      { rule: '!oldSelf.hasValue() || self.name == oldSelf.value().name', optionalOldSelf: true },
    ]),
    accepted: true,
  },
  {
    name: 'oldSelf inside a map list',
    schema: spec([], { ports: items([{ rule: 'self.port == oldSelf.port' }], 'map') }),
    accepted: true,
  },
  {
    name: 'library functions',
    schema: spec([
      {
        rule: "self.shortHosts.isSorted() && sets.contains(self.shortHosts, ['a']) && self.name.lowerAscii().charAt(0) != '-' && (!has(self.free) || isQuantity(self.free) || isURL(self.free) || isIP(self.free) || isCIDR(self.free)) && !format.dns1123Label().validate(self.name).hasValue()",
      },
    ]),
    accepted: true,
  },
  {
    name: 'two-variable comprehensions',
    schema: spec([
      {
        rule: "self.labels.all(k, v, k != v) && self.shortHosts.exists(i, h, i > 0 && h != '') && self.shortHosts.transformList(i, h, h + 'x').size() >= 0 && self.labels.transformMap(k, v, v.size()).size() >= 0",
      },
    ]),
    accepted: true,
  },
  {
    name: 'a fieldPath to a field and to a map value',
    schema: spec([
      { rule: 'self.replicas >= 0', fieldPath: '.replicas' },
      { rule: 'self.replicas >= 0', fieldPath: ".labels['a.b']" },
    ]),
    accepted: true,
  },
  // Refused.
  { name: 'an unknown field', schema: spec([{ rule: 'self.nope == 1' }]), accepted: false },
  { name: 'an unknown field in has()', schema: spec([{ rule: 'has(self.nope)' }]), accepted: false },
  { name: 'a type error', schema: spec([{ rule: 'self.name + 1 == "a"' }]), accepted: false },
  { name: 'a rule that is not a bool', schema: spec([{ rule: 'self.name' }]), accepted: false },
  { name: 'a rule that does not parse', schema: spec([{ rule: 'self.name.size() <' }]), accepted: false },
  {
    name: 'a fieldPath to no field',
    schema: spec([{ rule: 'self.replicas >= 0', fieldPath: '.nope' }]),
    accepted: false,
  },
  {
    name: 'a fieldPath under a string',
    schema: spec([{ rule: 'self.replicas >= 0', fieldPath: '.name.first' }]),
    accepted: false,
  },
  {
    name: 'a messageExpression that is not a string',
    schema: spec([{ rule: 'self.replicas > 0', messageExpression: 'self.replicas' }]),
    accepted: false,
  },
  {
    name: 'optionalOldSelf without oldSelf',
    schema: spec([{ rule: 'self.replicas > 0', optionalOldSelf: true }]),
    accepted: false,
  },
  {
    name: 'oldSelf inside an atomic list',
    schema: spec([], { ports: items([{ rule: 'self.port == oldSelf.port' }]) }),
    accepted: false,
  },
  {
    name: 'a regex over an unbounded list of unbounded strings (cost)',
    schema: spec([{ rule: "self.hosts.all(h, h.matches('^[a-z]+$'))" }]),
    accepted: false,
  },
  {
    name: 'a regex on each item of an unbounded list (cost times cardinality)',
    schema: spec([], { ports: items([{ rule: "self.name.matches('^[a-z]+$')" }]) }),
    accepted: false,
  },
  {
    name: 'a messageExpression walking an unbounded list of unbounded strings (cost)',
    schema: spec([
      {
        rule: 'self.replicas >= 0',
        messageExpression: "self.hosts.filter(h, h.matches('^[a-z]+$')).join(',')",
      },
    ]),
    accepted: false,
  },
  {
    name: 'a messageExpression joining an unbounded string, on each item of an unbounded list (cost)',
    schema: spec([], {
      ports: items([
        { rule: 'self.port > 0', messageExpression: "'port ' + string(self.port) + ' of ' + self.name" },
      ]),
    }),
    accepted: false,
  },
  {
    name: "a messageExpression concatenating string() of an int (cost: cel-go cannot bound string()'s size)",
    schema: spec([{ rule: 'self.replicas > 0', messageExpression: "'replicas: ' + string(self.replicas)" }]),
    accepted: false,
  },
  {
    name: "a messageExpression joining the errors of a format's validate() (cost: their list has no bound)",
    schema: spec([
      {
        rule: '!format.dns1123Label().validate(self.name).hasValue()',
        messageExpression: "format.dns1123Label().validate(self.name).orValue([]).join(' | ')",
      },
    ]),
    accepted: false,
  },
  {
    name: "a rule asking whether a format's validate() found errors",
    schema: spec([{ rule: '!format.dns1123Label().validate(self.name).hasValue()' }]),
    accepted: true,
  },
  {
    name: 'a messageExpression that is string() alone',
    schema: spec([{ rule: 'self.replicas > 0', messageExpression: 'string(self.replicas)' }]),
    accepted: true,
  },
  {
    name: 'a messageExpression joining a bounded string',
    schema: spec([{ rule: 'self.replicas > 0', messageExpression: "'replicas of ' + self.name" }]),
    accepted: true,
  },
  {
    name: 'rules each within budget, together over the per-CRD budget',
    schema: spec(
      Array.from({ length: 20 }, (_, i) => ({ rule: `self.many.all(h, h.matches('^[a-z]{${i}}$'))` })),
      { many: { type: 'array', maxItems: 100_000, items: { type: 'string', maxLength: 63 } } },
    ),
    accepted: false,
  },
  {
    name: 'the same rules, fewer of them, within the per-CRD budget',
    schema: spec(
      Array.from({ length: 5 }, (_, i) => ({ rule: `self.many.all(h, h.matches('^[a-z]{${i}}$'))` })),
      { many: { type: 'array', maxItems: 100_000, items: { type: 'string', maxLength: 63 } } },
    ),
    accepted: true,
  },
];

async function serverAccepts(schema: JSONSchemaProps): Promise<{ ok: boolean; output: string }> {
  const result = await execa(
    kubectlPath,
    ['--kubeconfig', env.kubeconfigPath, 'create', '--dry-run=server', '-f', '-'],
    { reject: false, all: true, input: JSON.stringify(crd(schema)) },
  );
  return { ok: result.exitCode === 0, output: result.all ?? '' };
}

describe('CEL rules: kubesmith and the API server agree', () => {
  it.each(CASES)(
    '$name',
    async ({ schema, accepted }) => {
      const root: JSONSchemaProps = { type: 'object', properties: { spec: schema } };
      const problems = compileRules(root).map((p) => p.message);
      const server = await serverAccepts(schema);
      expect(server.ok, `the API server: ${server.output}`).toBe(accepted);
      expect(problems.length === 0, `kubesmith: ${problems.join('; ')}`).toBe(accepted);
    },
    30_000,
  );
});
