/**
 * validate() of @kubesmith/runtime/testing: the API server's verdict on an object, in process. Held to the
 * recorded kube-apiserver verdicts of test/fixtures/validate (the cases `kubesmith validate` is held to,
 * recorded by test/fixtures/validate/record.mjs on envtest), word for word; and its own contract: where
 * the CRDs come from, the kind, the Status it would answer, and that nothing of it loads before it is called.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import verdicts from '../../test/fixtures/validate/verdicts.json' with { type: 'json' };
import { groupVersion } from '../src/kinds.js';
import { loadCrds, validate } from '../src/testing/index.js';

interface Recorded {
  name: string;
  schema: object;
  status?: boolean;
  object: Record<string, unknown>;
  statusValue?: Record<string, unknown>;
  old?: Record<string, unknown>;
  oldSchema?: object;
  accepted: boolean;
  errors: string[];
  warnings: string[];
}

const CaseKind = groupVersion('verdicts.example.com', 'v1').kind('Case', { plural: 'cases' });

/** The case's CRD, as record.mjs gives it to the API server. */
const crd = (schema: object, status: boolean) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'cases.verdicts.example.com' },
  spec: {
    group: 'verdicts.example.com',
    names: { kind: 'Case', listKind: 'CaseList', plural: 'cases', singular: 'case' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        ...(status ? { subresources: { status: {} } } : {}),
        schema: { openAPIV3Schema: schema },
      },
    ],
  },
});

const object = (spec: unknown, status?: unknown) => ({
  metadata: { name: 'x', namespace: 'default' },
  spec,
  ...(status !== undefined ? { status } : {}),
});

describe('validate() agrees with kube-apiserver', () => {
  const cases = verdicts as unknown as Recorded[];
  it('on the recorded cases, accepted and rejected', () => {
    expect(cases.length).toBeGreaterThanOrEqual(96);
    expect(cases.filter((c) => c.accepted).length).toBeGreaterThan(10);
    expect(cases.filter((c) => !c.accepted).length).toBeGreaterThan(10);
  });
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const crds = await loadCrds(crd(c.schema, c.status === true));
    let old: object | undefined;
    if (c.old) {
      // The stored object, as the API server stored it under the schema of its day (defaults applied).
      const stored = await loadCrds(crd(c.oldSchema!, c.status === true));
      old = (await validate(CaseKind, object(c.old), { crds: stored })).object;
    }
    const verdict = await validate(CaseKind, object(c.object, c.statusValue), { crds, old });
    expect(verdict.valid).toBe(c.accepted);
    expect({ errors: [...verdict.errors].sort(), warnings: [...verdict.warnings].sort() }).toEqual({
      errors: [...c.errors].sort(),
      warnings: [...c.warnings].sort(),
    });
  });
});

const GATE_CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gates.lab.example.com}
spec:
  group: lab.example.com
  names: {kind: Gate, listKind: GateList, plural: gates, singular: gate}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [host]
            properties:
              host:
                type: string
                maxLength: 10
                x-kubernetes-validations: [{rule: "self == oldSelf", message: host is immutable}]
              replicas: {type: integer, minimum: 1, default: 1}
          status: {type: object, properties: {ready: {type: boolean}}}
`;

interface Gate {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string };
  spec: { host: string; replicas?: number };
}
const GateKind = groupVersion('lab.example.com', 'v1').kind<Gate>('Gate', { plural: 'gates' });

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'validate-'));
  mkdirSync(path.join(dir, 'config/crd/bases'), { recursive: true });
  writeFileSync(path.join(dir, 'config/crd/bases/lab.example.com_gates.yaml'), GATE_CRD);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('validate()', () => {
  const crdDir = () => path.join(dir, 'config/crd/bases');

  it('says what the API server would: field errors, causes and the Invalid Status message', async () => {
    const verdict = await validate(
      GateKind,
      { metadata: { name: 'a' }, spec: { host: 'a-very-long-host', replicas: 0 } },
      { crds: await loadCrds(crdDir()) },
    );
    expect(verdict.valid).toBe(false);
    expect(verdict.errors).toEqual([
      'spec.host: Too long: may not be more than 10 bytes',
      'spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1',
    ]);
    expect(verdict.causes.map((c) => c.reason)).toEqual(['FieldValueTooLong', 'FieldValueInvalid']);
    expect(verdict.message).toBe(
      'Gate.lab.example.com "a" is invalid: [spec.host: Too long: may not be more than 10 bytes, spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1]',
    );
  });

  it('returns the object as stored (defaults, pruning) and leaves the given one as it was', async () => {
    const given = { metadata: { name: 'a' }, spec: { host: 'h', colour: 'red' } };
    // The CRDs by file URL, as a test finds them beside itself (`new URL('../../config/crd/bases/', import.meta.url)`).
    const crds = await loadCrds(pathToFileURL(`${crdDir()}/`));
    const verdict = await validate(GateKind, given, { crds });
    expect(verdict).toMatchObject({ valid: true, errors: [], warnings: ['unknown field "spec.colour"'] });
    expect(verdict.object.spec).toEqual({ host: 'h', replicas: 1 });
    expect(verdict.object.apiVersion).toBe('lab.example.com/v1');
    expect(given.spec).toEqual({ host: 'h', colour: 'red' });
  });

  it('checks an update from `old`: transition rules see oldSelf', async () => {
    const crds = await loadCrds(crdDir());
    const old = { metadata: { name: 'a' }, spec: { host: 'h' } };
    const changed = await validate(GateKind, { metadata: { name: 'a' }, spec: { host: 'g' } }, { crds, old });
    expect(changed.errors).toEqual(['spec.host: Invalid value: "g": host is immutable']);
    // A create has no oldSelf: the rule does not run.
    expect((await validate(GateKind, { metadata: { name: 'a' }, spec: { host: 'g' } }, { crds })).valid).toBe(
      true,
    );
  });

  it('refuses a kind its CRDs do not serve, an object of another kind, an old object of another name, and a file that is no CRD', async () => {
    const crds = await loadCrds(crdDir());
    const Other = groupVersion('lab.example.com', 'v2').kind('Gate', { plural: 'gates' });
    await expect(validate(Other, { metadata: { name: 'a' } }, { crds })).rejects.toThrow(
      'validate: no CRD for Gate (lab.example.com/v2) among lab.example.com/v1 Gate; run kubesmith manifests, or give loadCrds(...) the CRD',
    );
    await expect(
      validate(GateKind, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' } }, { crds }),
    ).rejects.toThrow('validate: the object is apiVersion v1, not lab.example.com/v1');
    await expect(
      validate(GateKind, { metadata: { name: 'a' } }, { crds, old: { metadata: { name: 'b' } } }),
    ).rejects.toThrow('validate: the old object is "b", not "a": give the stored version of the same object');
    const notCrd = path.join(dir, 'pod.yaml');
    writeFileSync(notCrd, 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n');
    await expect(loadCrds(notCrd)).rejects.toThrow(
      `loadCrds: ${notCrd}: not a CustomResourceDefinition (apiextensions.k8s.io/v1)`,
    );
  });
});

/**
 * The built runtime in a child process, in the project's directory: what a generated project's unit test
 * does. A resolve hook writes down every module the process loads, and can make a package missing.
 */
describe('validate() from the built @kubesmith/runtime/testing', () => {
  const testing = fileURLToPath(new URL('../dist/testing/index.js', import.meta.url));
  const run = (body: string, missing = ''): string => {
    const log = path.join(dir, 'modules.log');
    rmSync(log, { force: true });
    const hook = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  if (specifier === ${JSON.stringify(missing)})
    throw Object.assign(new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL), { code: 'ERR_MODULE_NOT_FOUND' });
  const resolved = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, resolved.url + '\\n');
  return resolved;
}`;
    const script = `
import { readFileSync } from 'node:fs';
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
const loaded = (part) => readFileSync(${JSON.stringify(log)}, 'utf8').split('\\n').some((url) => url.includes(part));
const t = await import(${JSON.stringify(pathToFileURL(testing).href)});
const kind = { group: 'lab.example.com', version: 'v1', apiVersion: 'lab.example.com/v1', kind: 'Gate', plural: 'gates', namespaced: true };
${body}`;
    return execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 30_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  };

  it("reads the project's config/crd/bases by default, and loads the validator and CEL only when called", () => {
    expect(existsSync(testing), 'runtime/dist is missing: run `npm run build`').toBe(true);
    const out = run(`
console.log('on import:', loaded('/dist/chunks/validate-'), loaded('/@marcbachmann/cel-js/'));
const v = await t.validate(kind, { metadata: { name: 'a' }, spec: { host: 'h', replicas: 0 } });
console.log(v.errors.join('\\n'));
console.log('after validate():', loaded('/dist/chunks/validate-'), loaded('/@marcbachmann/cel-js/'));
`);
    expect(out.split('\n')).toEqual([
      'on import: false false',
      'spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1',
      'after validate(): true true',
      '',
    ]);
  });

  it('says which optional peer to install when the CEL library is missing', () => {
    const out = run(
      `
try { await t.validate(kind, { metadata: { name: 'a' }, spec: { host: 'h' } }); } catch (e) { console.log(e.message); }
`,
      '@marcbachmann/cel-js',
    );
    expect(out.trim()).toBe(
      'validate() needs @marcbachmann/cel-js, an optional peer of @kubesmith/runtime: npm install --save-dev @marcbachmann/cel-js re2js',
    );
  });
});
