/**
 * What the generator emits, given to a real kube-apiserver (envtest): every golden CRD, role and webhook
 * configuration is accepted by server-side apply with strict field validation, and objects prove that the
 * schemas work: defaults applied, bounds, enums and patterns enforced, CEL rules enforced with their
 * messages. kubectl comes with the envtest binaries.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBinaryAssets, startEnvtest, type Envtest } from '../../runtime/src/envtest/index.js';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures');
let env: Envtest;
let kubectlPath: string;

function goldenFiles(kind: 'crd/bases' | 'rbac' | 'webhook'): string[] {
  const files: string[] = [];
  for (const fixture of readdirSync(FIXTURES).sort()) {
    const dir = path.join(FIXTURES, fixture, 'expected/config', kind);
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names.filter((n) => n.endsWith('.yaml')).sort()) files.push(path.join(dir, name));
  }
  return files;
}

async function kubectl(args: string[], input?: string) {
  return execa(kubectlPath, ['--kubeconfig', env.kubeconfigPath, ...args], {
    reject: false,
    all: true,
    ...(input !== undefined ? { input } : {}),
  });
}

async function apply(manifest: object, extra: string[] = []) {
  return kubectl(
    ['apply', '--server-side', '--validate=strict', '-f', '-', ...extra],
    JSON.stringify(manifest),
  );
}

beforeAll(async () => {
  kubectlPath = path.join(findBinaryAssets(), 'kubectl');
  env = await startEnvtest();
}, 120_000);

afterAll(async () => {
  await env?.stop();
});

describe('generated manifests on a real API server', () => {
  it('accepts every golden CRD with strict server-side apply, and establishes it', async () => {
    const files = goldenFiles('crd/bases');
    expect(files.length).toBeGreaterThanOrEqual(7);
    for (const file of files) {
      const result = await kubectl(['apply', '--server-side', '--validate=strict', '-f', file]);
      expect(result.exitCode, `${path.relative(FIXTURES, file)}\n${result.all}`).toBe(0);
    }
    // Polled rather than `kubectl wait`, which fails on a CRD whose status has no conditions yet.
    type Crd = { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } };
    const notEstablished = async () => {
      const list = JSON.parse((await kubectl(['get', 'crd', '-o', 'json'])).stdout) as { items: Crd[] };
      return list.items
        .filter(
          (crd) => !crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'),
        )
        .map((crd) => crd.metadata.name);
    };
    await expect.poll(notEstablished, { timeout: 60_000, interval: 250 }).toEqual([]);
  }, 90_000);

  it('accepts the golden roles, and the webhook configurations (server dry run: no webhook serves)', async () => {
    for (const file of goldenFiles('rbac')) {
      // Roles of `+kubebuilder:rbac:...,namespace=x` markers live in namespaces that must exist first.
      const namespaces = new Set(
        parseAllDocuments(readFileSync(file, 'utf8'))
          .map((doc) => (doc.toJS() as { metadata?: { namespace?: string } } | null)?.metadata?.namespace)
          .filter((ns): ns is string => ns !== undefined),
      );
      for (const ns of namespaces)
        await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      const result = await kubectl(['apply', '--server-side', '--validate=strict', '-f', file]);
      expect(result.exitCode, result.all).toBe(0);
    }
    for (const file of goldenFiles('webhook')) {
      const result = await kubectl([
        'apply',
        '--server-side',
        '--validate=strict',
        '--dry-run=server',
        '-f',
        file,
      ]);
      expect(result.exitCode, result.all).toBe(0);
    }
  });

  describe('crd-basic: Guestbook', () => {
    const guestbook = (spec: object) => ({
      apiVersion: 'webapp.example.com/v1',
      kind: 'Guestbook',
      metadata: { name: `g-${Math.random().toString(36).slice(2, 8)}`, namespace: 'default' },
      spec,
    });

    it('stores a valid object with its defaults', async () => {
      const object = guestbook({ size: 'small', schedule: '0 * * * *' });
      expect((await apply(object)).exitCode).toBe(0);
      const got = await kubectl(['get', 'guestbooks.webapp.example.com', object.metadata.name, '-o', 'json']);
      expect(JSON.parse(got.stdout)).toMatchObject({ spec: { replicas: 1, size: 'small' } });
    });

    it.each([
      [{ size: 'huge', schedule: '0 * * * *' }, /spec\.size: Unsupported value: "huge"/],
      [{ size: 'small', schedule: 'hourly' }, /spec\.schedule in body should match/],
      [
        { size: 'small', schedule: '0 * * * *', primary: { host: 'a', port: 70000 } },
        /spec\.primary\.port in body should be less than or equal to 65535/,
      ],
      [
        { size: 'small', schedule: '0 * * * *', replicas: -1 },
        /spec\.replicas in body should be greater than or equal to 0/,
      ],
      [{ schedule: '0 * * * *' }, /spec\.size: Required value/],
    ])('refuses %j', async (spec, message) => {
      const result = await apply(guestbook(spec));
      expect(result.exitCode).not.toBe(0);
      expect(result.all).toMatch(message);
    });
  });

  describe('crd-validation: Widget CEL rules', () => {
    const widget = (spec: object) => ({
      apiVersion: 'lab.example.com/v1',
      kind: 'Widget',
      metadata: { name: `w-${Math.random().toString(36).slice(2, 8)}`, namespace: 'default' },
      spec: { owner: 'me', size: 'small', ...spec },
    });

    it('stores a valid object', async () => {
      const result = await apply(widget({ mode: 'fast', limits: { soft: 1 } }));
      expect(result.exitCode, result.all).toBe(0);
    });

    it.each([
      [{ mode: 'turbo' }, /unknown mode turbo/],
      [{ limits: { hard: -1 } }, /hard must be positive/],
      [{ limits: { soft: 1, hard: 2 } }, /at most one of the fields in \[soft hard\] may be set/],
      [{ limits: {} }, /at least one of the fields in \[soft hard none\] must be set/],
    ])('refuses %j with the rule message', async (spec, message) => {
      const result = await apply(widget(spec));
      expect(result.exitCode).not.toBe(0);
      expect(result.all).toMatch(message);
    });
  });

  describe('crd-semantics: Locker', () => {
    const locker = (spec: object, name = `l-${Math.random().toString(36).slice(2, 8)}`) => ({
      apiVersion: 'storage.example.com/v1',
      kind: 'Locker',
      metadata: { name, namespace: 'default' },
      spec: { region: 'north', ...spec },
    });
    const replace = (manifest: object) => kubectl(['replace', '-f', '-'], JSON.stringify(manifest));

    it('refuses an update that changes or removes an immutable field once set', async () => {
      const created = locker({ owner: 'ann', zone: 'east' });
      const name = created.metadata.name;
      expect((await apply(created)).all).toMatch(/serverside-applied/);
      const changed = await replace(locker({ owner: 'bob', zone: 'east' }, name));
      expect(changed.exitCode).not.toBe(0);
      expect(changed.all).toMatch(/spec\.owner: Invalid value: "bob": field is immutable/);
      const removed = await replace(locker({ zone: 'east' }, name));
      expect(removed.exitCode).not.toBe(0);
      expect(removed.all).toMatch(/field owner is immutable once set/);
      const zoneRemoved = await replace(locker({ owner: 'ann' }, name));
      expect(zoneRemoved.all).toMatch(/field zone is immutable once set/);
      // Setting an optional immutable field that was never set is allowed.
      const unset = locker({});
      expect((await apply(unset)).exitCode).toBe(0);
      const set = await replace(locker({ owner: 'cid' }, unset.metadata.name));
      expect(set.exitCode, set.all).toBe(0);
    });

    it.each([
      // The field's minLength=10 and the type's minLength=1 both hold (allOf).
      [
        { code: 'abcdef' },
        /spec\.code: Invalid value: "abcdef": spec\.code in body should be at least 10 chars long/,
      ],
      // The type's pattern and rule still hold under the field's own.
      [{ code: 'abcdefghij1' }, /spec\.code in body should match '\^\[a-z\]\+\$'/],
      [{ zone: 'xeast' }, /names do not start with x/],
      [{ half: 'xyz' }, /spec\.half in body should match '\^\[a-m\]\+\$'/],
      [{ count: 55 }, /spec\.count in body should be less than or equal to 50/],
      [{ tags: ['a', 'b', 'c', 'd'] }, /spec\.tags: Too many: 4: must have at most 3 items/],
      [{ mode: 'sealed', address: { port: 0 } }, /a host is needed/],
    ])('refuses %j', async (spec, message) => {
      const result = await apply(locker(spec));
      expect(result.exitCode).not.toBe(0);
      expect(result.all).toMatch(message);
    });
  });
});
