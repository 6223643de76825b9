import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KubesmithError } from '../../src/errors.js';
import {
  DEFAULT_K8S_VERSION,
  defaultCacheRoot,
  ensureEnvtestBinaries,
  compatibilityRun,
  compatibilityVersions,
  resolveRelease,
  stagingModules,
  verifiedVersions,
  type BuildRequest,
} from '../../src/envtest/index.js';

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-envtest-test-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** Shell scripts standing in for the binaries: each prints what the real one prints for --version. */
async function fakeBinaries(dir: string, version = '1.37.2', etcd = '3.7.3'): Promise<string> {
  await mkdir(dir, { recursive: true });
  const outputs: Record<string, string> = {
    etcd: `etcd Version: ${etcd}`,
    'kube-apiserver': `Kubernetes v${version}`,
    kubectl: `Client Version: v${version}`,
  };
  for (const [name, output] of Object.entries(outputs)) {
    await writeFile(path.join(dir, name), `#!/bin/sh\necho "${output}"\n`);
    await chmod(path.join(dir, name), 0o755);
  }
  return dir;
}

/** A directory on PATH with a `go` that is never run (the build is faked). */
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
    PATH: path.join(tmp, 'empty'),
    // No network in these tests: the download fails at once (download.integration.test.ts covers it).
    KUBESMITH_ENVTEST_INDEX_URL: path.join(tmp, 'no-index.yaml'),
    ...extra,
  };
}

const cacheEntry = (version = DEFAULT_K8S_VERSION): string =>
  path.join(tmp, 'cache', 'kubesmith', 'envtest', version);

describe('ensureEnvtestBinaries: where the binaries come from', () => {
  it('uses KUBEBUILDER_ASSETS first when it holds all three binaries', async () => {
    const assets = await fakeBinaries(path.join(tmp, 'assets'));
    await fakeBinaries(cacheEntry());
    const build = vi.fn();
    const result = await ensureEnvtestBinaries({ env: env({ KUBEBUILDER_ASSETS: assets }), build });
    expect(result).toEqual({ dir: assets, source: 'KUBEBUILDER_ASSETS', version: '1.37.2' });
    expect(build).not.toHaveBeenCalled();
  });

  it('falls back to the cache, with a note, when KUBEBUILDER_ASSETS lacks a binary', async () => {
    const assets = await fakeBinaries(path.join(tmp, 'assets'));
    await rm(path.join(assets, 'kubectl'));
    await fakeBinaries(cacheEntry());
    const progress = vi.fn();
    const result = await ensureEnvtestBinaries({ env: env({ KUBEBUILDER_ASSETS: assets }), progress });
    expect(result).toEqual({ dir: cacheEntry(), source: 'cache', version: '1.37.2' });
    expect(progress).toHaveBeenCalledWith(expect.stringContaining('lacks kubectl'));
  });

  it('finds the per-version cache under $XDG_CACHE_HOME, else ~/.cache', async () => {
    expect(defaultCacheRoot({ XDG_CACHE_HOME: '/x' })).toBe('/x/kubesmith/envtest');
    expect(defaultCacheRoot({ HOME: '/home/me' })).toBe('/home/me/.cache/kubesmith/envtest');
    // A relative XDG_CACHE_HOME is invalid per the XDG spec and ignored.
    expect(defaultCacheRoot({ XDG_CACHE_HOME: 'rel', HOME: '/home/me' })).toBe(
      '/home/me/.cache/kubesmith/envtest',
    );
    await fakeBinaries(cacheEntry('1.34.2'), '1.34.2', '3.5.21');
    const result = await ensureEnvtestBinaries({ env: env(), version: 'v1.34.2' });
    expect(result).toEqual({ dir: cacheEntry('1.34.2'), source: 'cache', version: '1.34.2' });
  });

  it('uses --bin-dir as the cache root', async () => {
    const root = path.join(tmp, 'bin-dir');
    await fakeBinaries(path.join(root, '1.37.2'));
    const result = await ensureEnvtestBinaries({ env: env(), binDir: root });
    expect(result.dir).toBe(path.join(root, '1.37.2'));
    expect(result.source).toBe('cache');
  });

  it('fails with one clear error when nothing holds them and Go is not on PATH', async () => {
    const error = await ensureEnvtestBinaries({ env: env() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubesmithError);
    const { message, hint, exitCode } = error as KubesmithError;
    expect(message).toBe(
      `no envtest binaries for Kubernetes 1.37.2 in ${cacheEntry()}: cannot read the envtest release index ` +
        `file://${tmp}/no-index.yaml: ${tmp}/no-index.yaml does not exist, and Go is not on PATH to build them`,
    );
    expect(hint).toContain('install Go');
    expect(hint).toContain('KUBEBUILDER_ASSETS');
    expect(hint).toContain('setup-envtest');
    expect(exitCode).toBe(1);
    expect(existsSync(path.join(tmp, 'cache'))).toBe(false);
  });

  it('builds into the cache when Go is on PATH, and renames a verified build into place', async () => {
    const build = vi.fn(async (request: BuildRequest) => {
      // The build writes into a staging directory beside the entry, never into the entry itself.
      expect(path.dirname(request.outDir)).toBe(path.dirname(cacheEntry()));
      expect(existsSync(cacheEntry())).toBe(false);
      expect(request.release).toMatchObject({ version: '1.37.2', etcd: '3.7.3' });
      await fakeBinaries(request.outDir);
    });
    const progress = vi.fn();
    const result = await ensureEnvtestBinaries({ env: env({ PATH: await pathWithGo() }), build, progress });
    expect(result).toEqual({ dir: cacheEntry(), source: 'build', version: '1.37.2' });
    expect(progress).toHaveBeenCalledWith(
      `no download: cannot read the envtest release index file://${tmp}/no-index.yaml: ` +
        `${tmp}/no-index.yaml does not exist; building from Go modules instead`,
    );
    expect(build).toHaveBeenCalledOnce();
    expect((await readdir(path.dirname(cacheEntry()))).sort()).toEqual(['1.37.2']);
    // Second run: the cache answers.
    const again = await ensureEnvtestBinaries({ env: env({ PATH: await pathWithGo() }), build });
    expect(again.source).toBe('cache');
    expect(build).toHaveBeenCalledOnce();
  });

  it('leaves no cache entry and no staging directory when the build fails half way', async () => {
    const build = async (request: BuildRequest): Promise<void> => {
      await writeFile(path.join(request.outDir, 'kube-apiserver'), 'half');
      throw new KubesmithError('building the envtest binaries failed while building etcd: network');
    };
    await expect(ensureEnvtestBinaries({ env: env({ PATH: await pathWithGo() }), build })).rejects.toThrow(
      /network/,
    );
    // The directories this run created for the cache are gone too.
    expect(existsSync(path.join(tmp, 'cache'))).toBe(false);
  });

  it('rejects a build whose binaries do not report the version asked for', async () => {
    const build = async (request: BuildRequest): Promise<void> =>
      void (await fakeBinaries(request.outDir, '0.0.0-master'));
    const error = (await ensureEnvtestBinaries({ env: env({ PATH: await pathWithGo() }), build }).catch(
      (e: unknown) => e,
    )) as KubesmithError;
    expect(error.message).toMatch(/verifying kube-apiserver: .*expected v1\.37\.2/);
    expect(existsSync(path.join(tmp, 'cache'))).toBe(false);
  });

  it('removes the staging directory of an abandoned build (its process is gone)', async () => {
    const abandoned = path.join(path.dirname(cacheEntry()), '.build-1.37.2-999999999-abc');
    await mkdir(abandoned, { recursive: true });
    const build = async (request: BuildRequest): Promise<void> => void (await fakeBinaries(request.outDir));
    await ensureEnvtestBinaries({ env: env({ PATH: await pathWithGo() }), build });
    expect(existsSync(abandoned)).toBe(false);
  });
});

describe('versions', () => {
  it('accepts the verified minors with or without a v, and pairs each with its etcd', () => {
    expect(resolveRelease()).toEqual({ version: '1.37.2', major: 1, minor: 37, etcd: '3.7.3' });
    expect(resolveRelease('v1.36.3')).toMatchObject({ version: '1.36.3', etcd: '3.6.16' });
    expect(resolveRelease('1.35.4')).toMatchObject({ version: '1.35.4', etcd: '3.6.16' });
    expect(resolveRelease('v1.34.2')).toMatchObject({ version: '1.34.2', etcd: '3.5.21' });
  });

  it('runs the compatibility suite on verified releases other than the default, each one the Go build makes', () => {
    const versions = compatibilityVersions();
    expect(versions).not.toContain(DEFAULT_K8S_VERSION);
    for (const version of versions) expect(resolveRelease(version).version).toBe(version);
  });

  it("runs npm test's compatibility suite on the oldest supported release, the largest gap from the default", () => {
    expect(compatibilityVersions()).toEqual(['1.34.2']);
    expect(compatibilityRun()).toEqual(['1.34.2']);
  });

  it("takes --versions all as every supported minor's verified patch, oldest first", () => {
    expect(verifiedVersions()).toEqual(['1.34.2', '1.35.4', '1.36.3', DEFAULT_K8S_VERSION]);
    expect(compatibilityRun('all')).toEqual(verifiedVersions());
  });

  it('takes --versions as a list in its order, each version once, and refuses one the Go build cannot make', () => {
    expect(compatibilityRun('1.36.3, v1.35.4,1.36.3')).toEqual(['1.36.3', '1.35.4']);
    expect(() => compatibilityRun('1.35.4,1.29.0')).toThrow('unsupported Kubernetes version "1.29.0"');
    expect(() => compatibilityRun('')).toThrow('unsupported Kubernetes version ""');
  });

  it('refuses an unknown version and lists the supported ones', () => {
    expect(() => resolveRelease('1.29.0')).toThrow(
      'unsupported Kubernetes version "1.29.0"; supported: ' +
        '1.37.x (verified: 1.37.2, etcd 3.7.3), 1.36.x (verified: 1.36.3, etcd 3.6.16), 1.35.x (verified: 1.35.4, etcd 3.6.16), 1.34.x (verified: 1.34.2, etcd 3.5.21)',
    );
    expect(() => resolveRelease('latest')).toThrow(KubesmithError);
  });
});

describe('stagingModules', () => {
  it('lists the modules k8s.io/kubernetes replaces with ./staging directories', () => {
    const goMod = [
      'module k8s.io/kubernetes',
      'require (',
      '\tk8s.io/api v0.0.0',
      ')',
      'replace (',
      '\tk8s.io/api => ./staging/src/k8s.io/api',
      '\tk8s.io/client-go => ./staging/src/k8s.io/client-go',
      '\tgithub.com/other/x => github.com/other/x v1.2.3',
      ')',
      'replace k8s.io/kubectl v0.0.0 => ./staging/src/k8s.io/kubectl',
    ].join('\n');
    expect(stagingModules(goMod)).toEqual(['k8s.io/api', 'k8s.io/client-go', 'k8s.io/kubectl']);
  });
});
