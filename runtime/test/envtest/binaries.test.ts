import { readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  cachedAssetsDirectory,
  CONTROLLER_BINARIES,
  DEFAULT_K8S_VERSION,
  EnvtestBinariesNotFoundError,
  findBinaryAssets,
  startEnvtest,
} from '../../src/envtest/index.js';

// The CLI package is outside the runtime's sources; read its constant rather than import it.
const CLI_DEFAULT = /DEFAULT_K8S_VERSION = '([^']+)'/.exec(
  readFileSync(fileURLToPath(new URL('../../../src/envtest/versions.ts', import.meta.url)), 'utf8'),
)?.[1];

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-envtest-bin-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function binaries(dir: string, names = ['etcd', 'kube-apiserver', 'kubectl']): Promise<string> {
  await mkdir(dir, { recursive: true });
  for (const name of names) {
    await writeFile(path.join(dir, name), '#!/bin/sh\n');
    await chmod(path.join(dir, name), 0o755);
  }
  return dir;
}

describe('findBinaryAssets', () => {
  it('looks where `kubesmith envtest` puts them, for the same default version', () => {
    expect(DEFAULT_K8S_VERSION).toBe(CLI_DEFAULT);
    expect(cachedAssetsDirectory(undefined, { XDG_CACHE_HOME: '/c' })).toBe(
      `/c/kubesmith/envtest/${CLI_DEFAULT}`,
    );
    expect(cachedAssetsDirectory('1.34.2', { HOME: '/h' })).toBe('/h/.cache/kubesmith/envtest/1.34.2');
  });

  it('prefers an explicit directory, then KUBEBUILDER_ASSETS, then the cache', async () => {
    const explicit = await binaries(path.join(tmp, 'explicit'));
    const assets = await binaries(path.join(tmp, 'assets'));
    const cache = await binaries(path.join(tmp, 'cache', 'kubesmith', 'envtest', DEFAULT_K8S_VERSION));
    const env = { XDG_CACHE_HOME: path.join(tmp, 'cache'), KUBEBUILDER_ASSETS: assets };
    expect(findBinaryAssets(explicit, { env })).toBe(explicit);
    expect(findBinaryAssets(undefined, { env })).toBe(assets);
    expect(findBinaryAssets(undefined, { env: { ...env, KUBEBUILDER_ASSETS: path.join(tmp, 'none') } })).toBe(
      cache,
    );
  });

  it('fails with a message saying to run `npx kubesmith envtest`', async () => {
    await binaries(path.join(tmp, 'half'), ['etcd']);
    const env = { XDG_CACHE_HOME: path.join(tmp, 'cache'), KUBEBUILDER_ASSETS: path.join(tmp, 'half') };
    expect(() => findBinaryAssets(undefined, { env })).toThrow(EnvtestBinariesNotFoundError);
    expect(() => findBinaryAssets(undefined, { env })).toThrow(
      new RegExp(
        `${tmp}/half \\(KUBEBUILDER_ASSETS\\) lacks kube-apiserver; .* lacks etcd and kube-apiserver\\. Run \`npx kubesmith envtest\``,
      ),
    );
  });

  it('in cluster mode wants the controllers in the same directory, and says to run --with-controllers', async () => {
    const assets = await binaries(path.join(tmp, 'assets'));
    const full = await binaries(path.join(tmp, 'cache', 'kubesmith', 'envtest', DEFAULT_K8S_VERSION), [
      'etcd',
      'kube-apiserver',
      'kubectl',
      ...CONTROLLER_BINARIES,
    ]);
    const env = { XDG_CACHE_HOME: path.join(tmp, 'cache'), KUBEBUILDER_ASSETS: assets };
    expect(findBinaryAssets(undefined, { env })).toBe(assets);
    expect(findBinaryAssets(undefined, { env, controllers: true })).toBe(full);
    await rm(path.join(full, 'kwok'));
    expect(() => findBinaryAssets(undefined, { env, controllers: true })).toThrow(
      new RegExp(
        `${assets} \\(KUBEBUILDER_ASSETS\\) lacks kube-controller-manager and kube-scheduler and kwok; ` +
          `.* lacks kwok\\. Run \`npx kubesmith envtest --with-controllers\``,
      ),
    );
    await expect(
      startEnvtest({ binaryAssetsDirectory: assets, controllers: true, tmpDir: tmp }),
    ).rejects.toThrow(
      /lacks kube-controller-manager and kube-scheduler and kwok\. Run `npx kubesmith envtest --with-controllers`/,
    );
  });

  it('refuses cluster-mode options without controllers: true, before starting anything', async () => {
    const assets = await binaries(path.join(tmp, 'assets'));
    await expect(startEnvtest({ binaryAssetsDirectory: assets, nodes: 3, tmpDir: tmp })).rejects.toThrow(
      'envtest: nodes needs controllers: true (cluster mode)',
    );
    const all = await binaries(path.join(tmp, 'all'), ['etcd', 'kube-apiserver', ...CONTROLLER_BINARIES]);
    await expect(
      startEnvtest({ binaryAssetsDirectory: all, controllers: true, nodes: 1.5, tmpDir: tmp }),
    ).rejects.toThrow(/nodes must be a whole number from 0 to 100, or a list; got 1\.5/);
    await expect(
      startEnvtest({
        binaryAssetsDirectory: all,
        controllers: true,
        nodes: [{ name: 'a' }, { name: 'a' }],
        tmpDir: tmp,
      }),
    ).rejects.toThrow('the node name "a" is given twice');
    expect((await readdir(tmp)).sort()).toEqual(['all', 'assets']);
  });

  it('makes startEnvtest fail before it creates anything', async () => {
    await expect(
      startEnvtest({ binaryAssetsDirectory: path.join(tmp, 'none'), tmpDir: tmp }),
    ).rejects.toThrow(/npx kubesmith envtest/);
  });
});
