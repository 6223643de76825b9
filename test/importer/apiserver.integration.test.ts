/**
 * The round trip's CRDs on a real kube-apiserver (envtest): every CRD of the corpus imported, then made
 * again by `kubesmith manifests --paths`, is accepted by strict server-side apply and established. kubectl
 * comes with the envtest binaries.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { symlink } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBinaryAssets, startEnvtest, type Envtest } from '../../runtime/src/envtest/index.js';
import { removeTemp, run, tempDir } from '../helpers/run.js';
import { corpus, crdDocuments } from './corpus.js';

const REPO = path.resolve(import.meta.dirname, '../..');
let env: Envtest;
let dir: string;

beforeAll(async () => {
  dir = await tempDir('apiserver');
  await symlink(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  env = await startEnvtest();
}, 120_000);

afterAll(async () => {
  await env?.stop();
  if (dir) await removeTemp(dir);
});

describe('imported and regenerated CRDs on a real API server', () => {
  it('accepts every one with strict server-side apply, and establishes it', async () => {
    const files = corpus();
    expect((await run(dir, 'import', 'crd', ...files, '--out', 'types')).code).toBe(0);
    const generated = await run(dir, 'manifests', '--paths', 'types', '--output-dir', 'crds');
    expect(generated.code).toBe(0);
    const crds = readdirSync(path.join(dir, 'crds')).sort();
    expect(crds.length).toBe(files.flatMap((f) => crdDocuments(readFileSync(f, 'utf8'))).length);
    const kubectl = (args: string[]) =>
      execa(path.join(findBinaryAssets(), 'kubectl'), ['--kubeconfig', env.kubeconfigPath, ...args], {
        reject: false,
        all: true,
      });
    for (const crd of crds) {
      const result = await kubectl([
        'apply',
        '--server-side',
        '--validate=strict',
        '-f',
        path.join(dir, 'crds', crd),
      ]);
      expect(result.exitCode, `${crd}\n${result.all}`).toBe(0);
    }
    type Crd = { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } };
    const notEstablished = async () => {
      const list = JSON.parse((await kubectl(['get', 'crd', '-o', 'json'])).stdout) as { items: Crd[] };
      return list.items
        .filter((c) => !c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True'))
        .map((c) => c.metadata.name);
    };
    await expect.poll(notEstablished, { timeout: 60_000, interval: 250 }).toEqual([]);
  }, 300_000);
});
