/**
 * `kubesmith import crd --from-cluster NAME...` against a real API server (envtest): the CRDs read through
 * the kubeconfig's current context (kubectl, from the envtest binaries) give the very files an import of the
 * same CRDs from a file gives; a name the cluster does not have, and one that is no CRD name, are one line
 * each, with nothing written.
 */
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBinaryAssets, startEnvtest, type Envtest } from '../../runtime/src/envtest/index.js';
import { readFromCluster } from '../../src/importer/cluster.js';
import { removeTemp, runWithEnv, snapshot, tempDir } from '../helpers/run.js';

const CONTROLLER_GEN = path.resolve(import.meta.dirname, '../fixtures/import/controller-gen');
const CERTIFICATES = path.join(CONTROLLER_GEN, 'tls.example.com_certificates.yaml');
const WIDGETS = path.join(CONTROLLER_GEN, 'corpus.example.com_widgets.yaml');
let env: Envtest;
let dir: string;
let kubeEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
  env = await startEnvtest({ crdDirectoryPaths: [CERTIFICATES, WIDGETS] });
  // The kubeconfig of the environment, and kubectl where findKubectl looks first.
  kubeEnv = { ...process.env, KUBECONFIG: env.kubeconfigPath, KUBEBUILDER_ASSETS: findBinaryAssets() };
}, 120_000);

afterAll(async () => {
  await env?.stop();
});

async function project(name: string): Promise<string> {
  const root = await tempDir(name);
  expect((await runWithEnv(kubeEnv, root, 'init', '--domain', 'example.com', '--skip-install')).code).toBe(0);
  return root;
}

describe('import crd --from-cluster', () => {
  it('imports the named CRDs of the current context: the same files as from their files', async () => {
    dir = await project('cluster');
    const fromFiles = await project('files');
    try {
      const names = ['certificates.tls.example.com', 'widgets.corpus.example.com'];
      const result = await runWithEnv(kubeEnv, dir, 'import', 'crd', '--from-cluster', ...names);
      expect(result.stderr).not.toMatch(/^error/m);
      expect(result.code).toBe(0);
      expect(result.stderr).toMatch(
        /^imported Certificate\.tls\.example\.com \(v1\), Widget\.corpus\.example\.com \(v1, v2\)$/m,
      );
      expect((await runWithEnv(kubeEnv, fromFiles, 'import', 'crd', CERTIFICATES, WIDGETS)).code).toBe(0);
      const imported = (root: string) =>
        snapshot(root).then((files) =>
          Object.fromEntries(
            Object.entries(files).filter(([file]) => /^(src\/external|config\/crd)\//.test(file)),
          ),
        );
      const fromCluster = await imported(dir);
      expect(Object.keys(fromCluster)).toContain('config/crd/external/tls.example.com_certificates.yaml');
      expect(fromCluster).toEqual(await imported(fromFiles));
    } finally {
      await removeTemp(dir);
      await removeTemp(fromFiles);
    }
  });

  it('refuses a name the cluster does not have, and one that is no CRD name: one line, nothing written', async () => {
    dir = await project('missing');
    const refused = async (args: string[], code: number, message: RegExp) => {
      const before = await snapshot(dir);
      const result = await runWithEnv(kubeEnv, dir, 'import', 'crd', '--from-cluster', ...args);
      expect(result.code).toBe(code);
      const lines = result.stderr.trim().split('\n');
      expect(lines[0]).toMatch(message);
      expect(lines).toHaveLength(2);
      expect(lines[1]).toMatch(/^hint: /);
      expect(await snapshot(dir)).toEqual(before);
    };
    try {
      await refused(
        ['certificates.tls.example.com', 'nothings.example.com'],
        1,
        /^error: cluster \(certificates\.tls\.example\.com, nothings\.example\.com\): .*"nothings\.example\.com" not found/,
      );
      await refused(
        // After `--`, what looks like a flag of kubectl's is a name: refused as one.
        ['--', '--kubeconfig=/etc/passwd'],
        2,
        /^error: --from-cluster: "--kubeconfig=\/etc\/passwd" is not the name of a CRD/,
      );
    } finally {
      await removeTemp(dir);
    }
  });

  it('bounds every call: an answer too big, and a cluster that does not answer in time', async () => {
    const kubectl = path.join(findBinaryAssets(), 'kubectl');
    await expect(
      readFromCluster(kubectl, ['certificates.tls.example.com'], kubeEnv, {
        maxBytes: 1000,
        timeoutMs: 30_000,
      }),
    ).rejects.toThrow(/^cluster \(certificates\.tls\.example\.com\): larger than 1000 bytes$/);

    // A server that takes the connection and never answers.
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const root = await tempDir('silent');
    try {
      const kubeconfig = path.join(root, 'kubeconfig');
      await writeFile(
        kubeconfig,
        `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'http://127.0.0.1:${port}'}}]\n` +
          `contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {}}]\n`,
      );
      const started = Date.now();
      await expect(
        readFromCluster(
          kubectl,
          ['certificates.tls.example.com'],
          { ...kubeEnv, KUBECONFIG: kubeconfig },
          {
            maxBytes: 1 << 20,
            timeoutMs: 1000,
          },
        ),
      ).rejects.toThrow(/^cluster \(certificates\.tls\.example\.com\): /);
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      silent.close();
      await removeTemp(root);
    }
  }, 60_000);
});
