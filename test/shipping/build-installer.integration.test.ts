/**
 * `kubesmith build-installer`: config/default rendered by the real kubectl kustomize into dist/install.yaml,
 * then applied to a real API server in envtest's cluster mode (controllers, scheduler, fake nodes), where
 * the manager's Deployment must become available, and deleted again without leftovers.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryAssetsOrSkip, startEnvtest, type Envtest } from '../../runtime/src/envtest/index.js';
import { read, removeTemp, run, runWithEnv, runWithoutTools, tempDir } from '../helpers/run.js';
import { standInCrd } from '../helpers/stand-in-crds.js';

const binaries = binaryAssetsOrSkip({ controllers: true });
const IMAGE = 'registry.example.com/guestbook-operator:v1.2.3';

let dir: string;
beforeAll(async () => {
  dir = await tempDir('guestbook');
  for (const args of [
    ['init', '--domain', 'example.com', '--skip-install'],
    ['create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook'],
    ['create', 'webhook', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook', '--defaulting'],
  ]) {
    const result = await run(dir, ...args);
    expect(result.code, result.stderr).toBe(0);
  }
}, 120_000);
afterAll(async () => {
  await removeTemp(dir);
});

describe.skipIf(binaries === undefined)('kubesmith build-installer', () => {
  it('renders config/default with the image set, the same bytes every time', async () => {
    const first = await run(dir, 'build-installer', '--img', IMAGE);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(
      /^created {3}dist\/install\.yaml \(\d+ objects, image registry\.example\.com\/guestbook-operator:v1\.2\.3\)$/m,
    );
    const yaml = await read(dir, 'dist/install.yaml');
    expect(yaml).toContain(`image: ${IMAGE}\n`);
    expect(yaml).not.toContain('controller:latest');
    expect(yaml).toMatch(/^kind: CustomResourceDefinition$/m);
    expect(yaml).toMatch(/^kind: MutatingWebhookConfiguration$/m);
    expect(yaml).toContain('namespace: guestbook-system');
    // The user's kustomization is untouched (kubebuilder's `kustomize edit set image` would change it).
    expect(await read(dir, 'config/manager/kustomization.yaml')).toContain('newName: controller');

    const again = await run(dir, 'build-installer', '--img', IMAGE, '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({
      ok: true,
      file: 'dist/install.yaml',
      status: 'unchanged',
    });
    expect(await read(dir, 'dist/install.yaml')).toBe(yaml);
    // No overlay directory is left in the project.
    expect(
      (await import('node:fs/promises').then((fs) => fs.readdir(dir))).filter((f) =>
        f.startsWith('.kubesmith-installer'),
      ),
    ).toEqual([]);
  });

  it('a digest, a registry port and IMG work too', async () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    const env = { ...process.env, IMG: `localhost:5000/team/operator@${digest}` };
    const result = await runWithEnv(
      { ...env, KUBESMITH_RUNTIME_SPEC: '^0.1.0', KUBESMITH_CLI_SPEC: '^0.1.0' },
      dir,
      'build-installer',
      '--output',
      'dist/digest.yaml',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(await read(dir, 'dist/digest.yaml')).toContain(`image: localhost:5000/team/operator@${digest}\n`);
  });

  it.each([['Registry.example.com/UPPER:v1'], ['guestbook:'], ['a b'], ['guestbook@sha256:123']])(
    'refuses the image reference %s, and writes nothing',
    async (image) => {
      const result = await run(dir, 'build-installer', '--img', image, '--output', 'dist/bad.yaml');
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `error: invalid image reference "${image}"\nhint: give [registry[:port]/]name`,
      );
      expect(existsSync(path.join(dir, 'dist/bad.yaml'))).toBe(false);
    },
  );

  it('without kubectl: one line saying where it looked and what to do', async () => {
    const result = await runWithoutTools(dir, 'build-installer', '--output', 'dist/none.yaml');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'error: no kubectl found: it renders config/default (kubectl kustomize)\n' +
        'hint: run `npx kubesmith envtest` (it provides kubectl beside etcd and kube-apiserver), or install kubectl (https://kubernetes.io/docs/tasks/tools/)\n',
    );
    expect(existsSync(path.join(dir, 'dist/none.yaml'))).toBe(false);
  });

  it("a broken config/ is kustomize's error, and the previous install.yaml stays", async () => {
    const before = await read(dir, 'dist/install.yaml');
    const kustomization = path.join(dir, 'config/default/kustomization.yaml');
    const original = await readFile(kustomization, 'utf8');
    await writeFile(kustomization, original.replace('- ../manager', '- ../no-such-dir'));
    try {
      const result = await run(dir, 'build-installer', '--img', 'other:v9');
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^error: kubectl kustomize config\/default failed: .*no-such-dir/m);
      expect(await read(dir, 'dist/install.yaml')).toBe(before);
    } finally {
      await writeFile(kustomization, original);
    }
  });

  describe('applied to a cluster', () => {
    let env: Envtest;
    const kubectl = (...args: string[]) =>
      execa(path.join(binaries!, 'kubectl'), ['--kubeconfig', env.kubeconfigPath, ...args], {
        reject: false,
        all: true,
      });

    beforeAll(async () => {
      env = await startEnvtest({ binaryAssetsDirectory: binaries!, controllers: true });
    }, 120_000);
    afterAll(async () => {
      await env?.stop();
    }, 30_000);

    it('the manager Deployment becomes available, and deleting leaves nothing behind', async () => {
      // The webhook's Certificate and Issuer are cert-manager's kinds: stand-in CRDs that accept them.
      const certManager = [
        standInCrd('cert-manager.io', 'Certificate', 'certificates'),
        standInCrd('cert-manager.io', 'Issuer', 'issuers'),
      ];
      const crds = path.join(env.directory, 'cert-manager-crds.json');
      await writeFile(crds, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: certManager }));
      expect((await kubectl('apply', '-f', crds)).exitCode).toBe(0);
      expect(
        (await kubectl('wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s')).exitCode,
      ).toBe(0);

      expect((await run(dir, 'build-installer', '--img', IMAGE)).code).toBe(0);
      const install = path.join(dir, 'dist/install.yaml');
      const applied = await kubectl('apply', '--server-side', '-f', install);
      expect(applied.exitCode, String(applied.all)).toBe(0);
      const started = Date.now();
      const available = await kubectl(
        ...['-n', 'guestbook-system', 'wait', '--for=condition=Available'],
        ...['deployment/guestbook-controller-manager', '--timeout=60s'],
      );
      expect(available.exitCode, String(available.all)).toBe(0);
      console.log(`install.yaml: manager Deployment available ${Date.now() - started} ms after apply`);
      const pods = await kubectl(
        '-n',
        'guestbook-system',
        'get',
        'pods',
        '-o',
        'jsonpath={.items[*].spec.containers[0].image}',
      );
      expect(String(pods.stdout)).toBe(IMAGE);

      const objects = [
        ['namespace', 'guestbook-system'],
        ['crd', 'guestbooks.webapp.example.com'],
        ['clusterrole', 'guestbook-manager-role'],
        ['mutatingwebhookconfiguration', 'guestbook-mutating-webhook-configuration'],
      ];
      for (const [kind, name] of objects) {
        const there = await kubectl('get', kind!, name!, '-o', 'name');
        expect(there.exitCode, `${kind} ${name} was installed: ${String(there.all)}`).toBe(0);
      }

      const deleting = Date.now();
      const deleted = await kubectl('delete', '--wait', '--timeout=120s', '-f', install);
      // What the API server says of a deletion that did not end: the CRD's Terminating condition names
      // the step of its instance cleanup that failed or is still waiting.
      const crd =
        deleted.exitCode === 0
          ? undefined
          : await kubectl(
              ...['get', 'crd', 'guestbooks.webapp.example.com', '--ignore-not-found'],
              ...['-o', 'jsonpath={.status.conditions}{.metadata.finalizers}'],
            );
      expect(deleted.exitCode, `${String(deleted.all)}\nthe CRD: ${String(crd?.all)}`).toBe(0);
      console.log(`install.yaml: deleted in ${Date.now() - deleting} ms`);
      for (const [kind, name] of objects) {
        const left = await kubectl('get', kind!, name!, '--ignore-not-found', '-o', 'name');
        expect(String(left.stdout), `${kind} ${name} is left`).toBe('');
      }
    }, 240_000);
  });
});
