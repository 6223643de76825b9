/** `kubesmith validate`: objects checked offline against CRDs, one positioned line per problem. */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTemp, run, tempDir } from '../helpers/run.js';

const CRD = `apiVersion: apiextensions.k8s.io/v1
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
            x-kubernetes-validations:
            - rule: "self.replicas <= 5 || self.host.startsWith('big')"
              message: only big gates may have more than 5 replicas
            properties:
              host: {type: string, maxLength: 10, x-kubernetes-validations: [{rule: "self == oldSelf", message: host is immutable}]}
              replicas: {type: integer, minimum: 1, default: 1}
          status: {type: object, properties: {ready: {type: boolean}}}
`;

const gate = (name: string, spec: string) =>
  `apiVersion: lab.example.com/v1\nkind: Gate\nmetadata:\n  name: ${name}\nspec:\n${spec}`;

let dir: string;
beforeEach(async () => {
  dir = await tempDir('validate');
  await writeFile(path.join(dir, 'crd.yaml'), CRD);
});
afterEach(async () => {
  await removeTemp(dir);
});

describe('kubesmith validate', () => {
  it('exits 0 when every object is valid (defaults applied, status of the subresource ignored)', async () => {
    await writeFile(
      path.join(dir, 'ok.yaml'),
      `${gate('a', '  host: a.example')}\nstatus:\n  ready: "not checked"\n---\n${gate('b', '  host: b\n  replicas: 3')}\n`,
    );
    const result = await run(dir, 'validate', '--crd', 'crd.yaml', 'ok.yaml');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
  });

  it('gives each error and warning one line with the file, the line and the API server’s words; exit 1', async () => {
    await writeFile(
      path.join(dir, 'bad.yaml'),
      `${gate('a', '  host: a\n  replicas: 9')}\n---\n${gate('b', '  host: far-too-long-a-host\n  replicas: 0\n  color: red')}\n---\n${gate('c', '  replicas: 2')}\n`,
    );
    const result = await run(dir, 'validate', '--crd', 'crd.yaml', 'bad.yaml');
    expect(result.code).toBe(1);
    expect(result.stdout.trim().split('\n')).toEqual([
      'bad.yaml:5: spec: Invalid value: only big gates may have more than 5 replicas',
      'bad.yaml:16: spec.color: warning: unknown field "spec.color"',
      'bad.yaml:14: spec.host: Too long: may not be more than 10 bytes',
      'bad.yaml:15: spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1',
      'bad.yaml:22: spec.host: Required value',
      // A missing required field stops the rules, as on the API server.
      'bad.yaml:18: <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
    expect(result.stderr).toMatch(/^error: 3 of 3 objects invalid$/m);
  });

  it('with --old, checks an update: transition rules, and an unchanged invalid value passes', async () => {
    await writeFile(path.join(dir, 'old.yaml'), gate('a', '  host: a\n  replicas: 9\n'));
    await writeFile(path.join(dir, 'same.yaml'), gate('a', '  host: a\n  replicas: 9\n'));
    await writeFile(path.join(dir, 'moved.yaml'), gate('a', '  host: b\n  replicas: 2\n'));
    const same = await run(dir, 'validate', '--crd', 'crd.yaml', '--old', 'old.yaml', 'same.yaml');
    expect(same.code, same.stdout).toBe(0);
    expect(same.stdout).toMatch(/warning: spec: Invalid value: only big gates/);
    const moved = await run(dir, 'validate', '--crd', 'crd.yaml', '--old', 'old.yaml', 'moved.yaml');
    expect(moved.code).toBe(1);
    expect(moved.stdout).toBe('moved.yaml:6: spec.host: Invalid value: "b": host is immutable\n');
  });

  it('skips kustomization.yaml among the samples, and needs no CRD when there is no object', async () => {
    await mkdir(path.join(dir, 'samples'));
    await writeFile(path.join(dir, 'samples', 'kustomization.yaml'), 'resources:\n- gate.yaml\n');
    const none = await run(dir, 'validate', '--crd', 'absent', 'samples');
    expect(none.code, none.stderr).toBe(0);
    await writeFile(path.join(dir, 'samples', 'gate.yaml'), gate('a', '  host: a\n'));
    const one = await run(dir, 'validate', '--crd', 'crd.yaml', 'samples');
    expect(one.code, one.stderr).toBe(0);
  });

  it('--json: the verdict of each object', async () => {
    await writeFile(path.join(dir, 'bad.yaml'), gate('a', '  host: a\n  replicas: 0\n'));
    const result = await run(dir, 'validate', '--json', '--crd', 'crd.yaml', 'bad.yaml');
    expect(result.code).toBe(1);
    const json = JSON.parse(result.stdout) as { ok: boolean; objects: unknown[] };
    expect(json.ok).toBe(false);
    expect(json.objects).toEqual([
      {
        file: 'bad.yaml',
        line: 1,
        kind: 'Gate',
        name: 'a',
        valid: false,
        errors: [
          {
            line: 7,
            field: 'spec.replicas',
            message: 'Invalid value: 0: spec.replicas in body should be greater than or equal to 1',
          },
        ],
        warnings: [],
      },
    ]);
  });

  it('takes the project’s CRDs (config/crd/bases) by default, not one leading out of the project', async () => {
    await writeFile(path.join(dir, 'PROJECT'), 'domain: example.com\n');
    await mkdir(path.join(dir, 'config', 'crd', 'bases'), { recursive: true });
    await writeFile(path.join(dir, 'config', 'crd', 'bases', 'gates.yaml'), CRD);
    await writeFile(path.join(dir, 'ok.yaml'), gate('a', '  host: a\n'));
    expect((await run(dir, 'validate', 'ok.yaml')).code).toBe(0);

    const outside = await tempDir('outside');
    try {
      await writeFile(path.join(outside, 'gates.yaml'), CRD);
      const { rm } = await import('node:fs/promises');
      await rm(path.join(dir, 'config', 'crd', 'bases'), { recursive: true });
      await symlink(outside, path.join(dir, 'config', 'crd', 'bases'));
      const result = await run(dir, 'validate', 'ok.yaml');
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^error: config\/crd\/bases: leads out of the project/m);
    } finally {
      await removeTemp(outside);
    }
  });

  it('bad input: one positioned line each, non-zero exit', async () => {
    await writeFile(path.join(dir, 'notyaml.yaml'), 'apiVersion: v1\nkind: [\n');
    await writeFile(
      path.join(dir, 'other.yaml'),
      'apiVersion: lab.example.com/v1\nkind: Door\nmetadata: {name: a}\n',
    );
    await writeFile(path.join(dir, 'obj.yaml'), gate('a', '  host: a\n'));
    await writeFile(path.join(dir, 'old.yaml'), gate('b', '  host: a\n'));
    const cases: [string[], RegExp][] = [
      [['--crd', 'crd.yaml', 'notyaml.yaml'], /^error: notyaml\.yaml:\d+: not YAML: /m],
      [
        ['--crd', 'crd.yaml', 'other.yaml'],
        /^error: other\.yaml:1: no CRD for Door \(lab\.example\.com\/v1\)$/m,
      ],
      [['--crd', 'obj.yaml', 'obj.yaml'], /^error: obj\.yaml:1: not a CustomResourceDefinition/m],
      [
        ['--crd', 'crd.yaml', '--old', 'old.yaml', 'obj.yaml'],
        /^error: old\.yaml:1: --old is Gate b, not Gate a/m,
      ],
      [['--crd', 'crd.yaml', 'missing.yaml'], /^error: missing\.yaml: no such file or directory$/m],
    ];
    for (const [args, message] of cases) {
      const result = await run(dir, 'validate', ...args);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).toMatch(/^hint: /m);
    }
    expect((await run(dir, 'validate', '--crd', 'crd.yaml')).code).toBe(2);
  });
});
