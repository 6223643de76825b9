import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KubesmithError } from '../../src/errors.js';
import { ensureClusterBinaries, type BuildRequest } from '../../src/envtest/index.js';
import { run } from '../helpers/run.js';

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-envtest-controllers-'));
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await rm(tmp, { recursive: true, force: true });
});

const BASE = {
  etcd: 'etcd Version: 3.7.3',
  'kube-apiserver': 'Kubernetes v1.37.2',
  kubectl: 'Client Version: v1.37.2',
};
const CONTROLLERS = {
  'kube-controller-manager': 'Kubernetes v1.37.2',
  'kube-scheduler': 'Kubernetes v1.37.2',
  kwok: 'kwok version v0.8.0 (go1.26.8 linux/amd64)',
};

/** Shell scripts standing in for the binaries: each prints what the real one prints for --version. */
async function fakeBinaries(dir: string, outputs: Record<string, string>): Promise<string> {
  await mkdir(dir, { recursive: true });
  for (const [name, output] of Object.entries(outputs)) {
    await writeFile(path.join(dir, name), `#!/bin/sh\necho "${output}"\n`);
    await chmod(path.join(dir, name), 0o755);
  }
  return dir;
}

async function pathWithGo(): Promise<string> {
  const bin = path.join(tmp, 'gobin');
  await mkdir(bin, { recursive: true });
  await writeFile(path.join(bin, 'go'), '#!/bin/sh\nexit 1\n');
  await chmod(path.join(bin, 'go'), 0o755);
  return bin;
}

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    HOME: path.join(tmp, 'home'),
    XDG_CACHE_HOME: path.join(tmp, 'cache'),
    PATH: '/nonexistent',
    ...extra,
  };
}

const cacheEntry = (): string => path.join(tmp, 'cache', 'kubesmith', 'envtest', '1.37.2');

describe('ensureClusterBinaries', () => {
  it('uses KUBEBUILDER_ASSETS when it holds all six binaries', async () => {
    const assets = await fakeBinaries(path.join(tmp, 'assets'), { ...BASE, ...CONTROLLERS });
    const buildControllers = vi.fn();
    const result = await ensureClusterBinaries({
      env: env({ KUBEBUILDER_ASSETS: assets }),
      buildControllers,
    });
    expect(result).toEqual({ dir: assets, source: 'KUBEBUILDER_ASSETS', version: '1.37.2' });
    expect(buildControllers).not.toHaveBeenCalled();
  });

  it('falls back to the cache, with a note, when KUBEBUILDER_ASSETS has only the base binaries', async () => {
    const assets = await fakeBinaries(path.join(tmp, 'assets'), BASE);
    await fakeBinaries(cacheEntry(), { ...BASE, ...CONTROLLERS });
    const progress = vi.fn();
    const result = await ensureClusterBinaries({ env: env({ KUBEBUILDER_ASSETS: assets }), progress });
    expect(result).toEqual({ dir: cacheEntry(), source: 'cache', version: '1.37.2' });
    expect(progress).toHaveBeenCalledWith(
      expect.stringContaining('lacks kube-controller-manager, kube-scheduler, kwok; using the cache'),
    );
  });

  it('adds the three to a cache entry that has the base binaries, leaving those untouched', async () => {
    await fakeBinaries(cacheEntry(), BASE);
    const before = await stat(path.join(cacheEntry(), 'kube-apiserver'));
    const buildControllers = vi.fn(async (request: BuildRequest) => {
      // Built beside the entry, never into it: the base entry stays complete and usable meanwhile.
      expect(path.dirname(request.outDir)).toBe(path.dirname(cacheEntry()));
      expect((await readdir(cacheEntry())).sort()).toEqual(['etcd', 'kube-apiserver', 'kubectl']);
      await fakeBinaries(request.outDir, CONTROLLERS);
    });
    const result = await ensureClusterBinaries({ env: env({ PATH: await pathWithGo() }), buildControllers });
    expect(result).toEqual({ dir: cacheEntry(), source: 'build', version: '1.37.2' });
    expect((await readdir(cacheEntry())).sort()).toEqual([
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
      'kubectl',
      'kwok',
    ]);
    expect((await stat(path.join(cacheEntry(), 'kube-apiserver'))).ino).toBe(before.ino);
    expect(await readdir(path.dirname(cacheEntry()))).toEqual(['1.37.2']);
    // Second run: the cache answers.
    const again = await ensureClusterBinaries({ env: env({ PATH: await pathWithGo() }), buildControllers });
    expect(again.source).toBe('cache');
    expect(buildControllers).toHaveBeenCalledOnce();
  });

  it('builds the base binaries first when the cache has none', async () => {
    const order: string[] = [];
    const result = await ensureClusterBinaries({
      env: env({ PATH: await pathWithGo() }),
      build: async (request) => {
        order.push('base');
        await fakeBinaries(request.outDir, BASE);
      },
      buildControllers: async (request) => {
        order.push('controllers');
        await fakeBinaries(request.outDir, CONTROLLERS);
      },
    });
    expect(order).toEqual(['base', 'controllers']);
    expect(result.dir).toBe(cacheEntry());
  });

  it('keeps the base entry as it was when the build fails or a binary reports another version', async () => {
    await fakeBinaries(cacheEntry(), BASE);
    const failing = async (request: BuildRequest): Promise<void> => {
      await fakeBinaries(request.outDir, { 'kube-controller-manager': 'Kubernetes v1.37.2' });
      throw new KubesmithError('building the envtest binaries failed while building kwok: network');
    };
    await expect(
      ensureClusterBinaries({ env: env({ PATH: await pathWithGo() }), buildControllers: failing }),
    ).rejects.toThrow(/network/);
    const wrong = async (request: BuildRequest): Promise<void> =>
      void (await fakeBinaries(request.outDir, { ...CONTROLLERS, kwok: 'kwok version v0.7.0' }));
    await expect(
      ensureClusterBinaries({ env: env({ PATH: await pathWithGo() }), buildControllers: wrong }),
    ).rejects.toThrow(/verifying kwok: .*expected v0\.8\.0/);
    expect((await readdir(cacheEntry())).sort()).toEqual(['etcd', 'kube-apiserver', 'kubectl']);
    expect(await readdir(path.dirname(cacheEntry()))).toEqual(['1.37.2']);
  });

  it('completes a partial set left by a run killed between two renames', async () => {
    await fakeBinaries(cacheEntry(), { ...BASE, 'kube-controller-manager': 'Kubernetes v1.37.2' });
    const buildControllers = vi.fn(
      async (request: BuildRequest) => void (await fakeBinaries(request.outDir, CONTROLLERS)),
    );
    await ensureClusterBinaries({ env: env({ PATH: await pathWithGo() }), buildControllers });
    expect(buildControllers).toHaveBeenCalledOnce();
    expect(existsSync(path.join(cacheEntry(), 'kwok'))).toBe(true);
  });

  it('fails with one error and a hint when the extras are missing and Go is not on PATH', async () => {
    await fakeBinaries(cacheEntry(), BASE);
    const error = (await ensureClusterBinaries({ env: env() }).catch((e: unknown) => e)) as KubesmithError;
    expect(error).toBeInstanceOf(KubesmithError);
    expect(error.message).toBe(
      `no cluster-mode binaries for Kubernetes 1.37.2: ${cacheEntry()} lacks kube-controller-manager, ` +
        'kube-scheduler, kwok, and Go is not on PATH to build them',
    );
    expect(error.hint).toContain('kubesmith envtest --with-controllers');
  });
});

describe('kubesmith envtest --with-controllers', () => {
  it('prints the directory holding all six binaries', async () => {
    const assets = await fakeBinaries(path.join(tmp, 'assets'), { ...BASE, ...CONTROLLERS });
    vi.stubEnv('XDG_CACHE_HOME', path.join(tmp, 'cache'));
    vi.stubEnv('PATH', path.join(tmp, 'empty'));
    vi.stubEnv('KUBEBUILDER_ASSETS', assets);
    expect(await run(tmp, 'envtest', '--with-controllers')).toEqual({
      code: 0,
      stdout: `${assets}\n`,
      stderr: '',
    });
  });

  it('exits 1 with the hint when only the base binaries exist and Go is missing', async () => {
    await fakeBinaries(cacheEntry(), BASE);
    vi.stubEnv('XDG_CACHE_HOME', path.join(tmp, 'cache'));
    vi.stubEnv('PATH', path.join(tmp, 'empty'));
    vi.stubEnv('KUBEBUILDER_ASSETS', '');
    const result = await run(tmp, 'envtest', '--with-controllers');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: no cluster-mode binaries for Kubernetes 1\.37\.2: /);
    expect(result.stderr).toMatch(/\nhint: install Go .*--with-controllers/);
    // Without the flag, the base binaries are enough.
    expect((await run(tmp, 'envtest')).stdout).toBe(`${cacheEntry()}\n`);
  });
});
