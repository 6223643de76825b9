/**
 * Each function of the CEL environment of CRD rules, and the type checker on each kind of field (objects,
 * nullable ones, maps, lists, int-or-string, formats, mixed numbers, embedded resources, preserved unknown
 * fields), one rule at a time, given both to `compileRules` and
 * to a real kube-apiserver (envtest, server-side dry run of a CRD holding the rule): both must accept the
 * functions Kubernetes gives CRD rules and refuse those it does not (cel-go's math and base64 extensions,
 * strings v3's reverse, cel.bind).
 */
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBinaryAssets, startEnvtest, type Envtest } from '../../runtime/src/envtest/index.js';
import { compileRules } from '../../src/schema/cel-compile.js';
import type { JSONSchemaProps } from '../../src/schema/types.js';

let env: Envtest;
let kubectlPath: string;

beforeAll(async () => {
  kubectlPath = path.join(findBinaryAssets(), 'kubectl');
  env = await startEnvtest();
}, 120_000);

afterAll(async () => {
  await env?.stop();
});

const ACCEPTED = [
  'self.l.slice(0, 1).size() >= 0',
  'lists.range(3).size() > 0',
  '[[1]].flatten().size() > 0',
  'self.l.sort().size() >= 0',
  'self.l.distinct().size() >= 0',
  'self.l.reverse().size() >= 0',
  'self.l.first().hasValue()',
  'self.l.last().hasValue()',
  'self.l.sortBy(x, x).size() >= 0',
  "'%s'.format(['a']) != ''",
  // format's arguments may mix types (ext.Strings exempts them from the homogeneous-literal rule).
  "'%s-%d'.format([self.s, 1]) != ''",
  "'%s %s'.format([[self.s, 1], {'a': 1, 'b': 'c'}]) != ''",
  'sign(quantity(self.s)) >= 0',
  "strings.quote(self.s) != ''",
  "self.s.lastIndexOf('a', 1) >= -1",
  'optional.none().orValue(1) > 0',
  "self.?s.orValue('') != ''",
  "self.l.all(x, x.matches('a'))",
  '[1].exists_one(x, x == 1)',
  "self.s.split('a', 2).size() > 0",
  "self.l.join('') != ''",
  "self.s.charAt(0) != ''",
  "self.s.replace('a', 'b', 1) != ''",
  "self.s.substring(1) != '' && self.s.trim() != '' && self.s.lowerAscii() != ''",
  "self.s.upperAscii() == 'A'",
  "self.l.indexOf('a') >= -1 && self.l.lastIndexOf('a') >= -1",
  '[1, 2].max() > 0 && [1, 2].min() > 0 && [1, 2].sum() > 0',
  'self.l.isSorted()',
  'sets.contains([1], [1]) && sets.intersects([1], [2]) && sets.equivalent([1], [1])',
  "self.s.find('a') == '' && self.s.findAll('a').size() >= 0 && self.s.findAll('a', 1).size() >= 0",
  'isSemver(self.s) && semver(self.s).major() > 0',
  "format.named('uuid').hasValue() && format.uuid().validate(self.s).hasValue()",
  'ip.isCanonical(self.s) && isIP(self.s) && ip(self.s).family() == 4 && ip(self.s).isLoopback()',
  'isCIDR(self.s) && cidr(self.s).masked() == cidr(self.s) && cidr(self.s).containsIP(ip(self.s))',
  'isQuantity(self.s) && quantity(self.s).isInteger() && quantity(self.s).add(1).isGreaterThan(quantity(self.s))',
  "isURL(self.s) && url(self.s).getQuery().size() > 0 && url(self.s).getHost() != ''",
  "dyn(self.s) == 'a' && type(self.s) == string",
  "duration('1s') > duration('0s')",
  "int('1') > 0 && uint(1) > 0u && bytes('a').size() > 0 && string(b'a') != ''",
  "self.l.all(i, v, i >= 0 && v != '')",
  // The type checker on the schema's types.
  'self.i < 1.5',
  'self.l == [] && self.m == {}',
  "self.m.a == 'x' && 'a' in self.m && self.m['a'] == 'b' && has(self.m.a)",
  "self.s in self.l && self.l[0] == 'a'",
  'self.o == self.o && self.o != oldSelf.o',
  "has(self.o.x) && self.o.x.startsWith('a')",
  "self.t > timestamp('2020-01-01T00:00:00Z') && self.du > duration('1s')",
  'self.b.size() > 0',
  "self.ios == 1 || self.ios == 'a'",
  "int(self.d) > 0 && string(self.i) != '' && double(self.i) > 0.0",
  'self.i / 2 > 0 && self.i % 2 == 0 && -self.i < 0',
  'self.no == null || self.no != null',
  "self.e.kind == 'a' && self.e.metadata.name == 'a'",
  "self.po.a == 'x'",
];

const REFUSED = [
  'math.greatest(1, 2) > 0',
  'math.abs(-1) > 0',
  "base64.encode(b'a') != ''",
  "self.s.reverse() != ''",
  'quantity(self.s).sign() > 0',
  // cel-go's string.format validator: a constant format string against a list literal.
  "'%d'.format([self.s]) != ''",
  "'%s'.format([self.s, self.s]) != ''",
  "'%s %s'.format([self.s]) != ''",
  "'%z'.format([self.s]) != ''",
  'self.q.isInteger()',
  "self.s.nope() == ''",
  'self.d == 1',
  'self.i == 1.0',
  "[1, 'a'].size() > 0",
  'self.s == null',
  'size(self.s) == 1u',
  'self.i + self.d > 0.0',
  "self.l.exists(x, x == 'a') ? 1 : 2 > 0",
  'self.missing.x == 1',
  'self.o.y == 1',
  "self.e.metadata.namespace == 'a'",
  'self.pu.x == 1',
  'has(self.pu.x)',
  'self.po.b == 1',
  "cel.bind(x, self.s, x != '')",
];

function spec(rule: string): JSONSchemaProps {
  return {
    type: 'object',
    properties: {
      s: { type: 'string', maxLength: 10 },
      l: { type: 'array', maxItems: 5, items: { type: 'string', maxLength: 5 } },
      i: { type: 'integer' },
      d: { type: 'number' },
      m: { type: 'object', maxProperties: 5, additionalProperties: { type: 'string', maxLength: 5 } },
      o: { type: 'object', properties: { x: { type: 'string', maxLength: 5 } } },
      t: { type: 'string', format: 'date-time' },
      du: { type: 'string', format: 'duration' },
      b: { type: 'string', format: 'byte', maxLength: 10 },
      ios: { 'x-kubernetes-int-or-string': true, maxLength: 5 },
      no: { type: 'object', nullable: true, properties: { x: { type: 'string', maxLength: 5 } } },
      e: {
        type: 'object',
        'x-kubernetes-embedded-resource': true,
        'x-kubernetes-preserve-unknown-fields': true,
      },
      pu: { 'x-kubernetes-preserve-unknown-fields': true },
      po: {
        type: 'object',
        'x-kubernetes-preserve-unknown-fields': true,
        properties: { a: { type: 'string', maxLength: 5 } },
      },
    },
    'x-kubernetes-validations': [{ rule }],
  };
}

async function serverAccepts(schema: JSONSchemaProps): Promise<{ ok: boolean; output: string }> {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'functions.lab.example.com' },
    spec: {
      group: 'lab.example.com',
      names: { kind: 'Function', listKind: 'FunctionList', plural: 'functions', singular: 'function' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: schema } } },
        },
      ],
    },
  };
  const result = await execa(
    kubectlPath,
    ['--kubeconfig', env.kubeconfigPath, 'create', '--dry-run=server', '-f', '-'],
    { reject: false, all: true, input: JSON.stringify(crd) },
  );
  return { ok: result.exitCode === 0, output: result.all ?? '' };
}

describe('the CEL library of CRD rules: kubesmith and the API server agree', () => {
  const cases = [
    ...ACCEPTED.map((rule) => ({ rule, accepted: true })),
    ...REFUSED.map((rule) => ({ rule, accepted: false })),
  ];
  it.each(cases)(
    '$rule',
    async ({ rule, accepted }) => {
      const schema = spec(rule);
      const problems = compileRules({ type: 'object', properties: { spec: schema } }).map((p) => p.message);
      const server = await serverAccepts(schema);
      expect(server.ok, `the API server: ${server.output}`).toBe(accepted);
      expect(problems.length === 0, `kubesmith: ${problems.join('; ')}`).toBe(accepted);
    },
    30_000,
  );
});
