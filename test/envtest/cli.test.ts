import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { run } from '../helpers/run.js';

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-envtest-cli-'));
  vi.stubEnv('XDG_CACHE_HOME', path.join(tmp, 'cache'));
  vi.stubEnv('PATH', path.join(tmp, 'empty'));
  vi.stubEnv('KUBEBUILDER_ASSETS', '');
  // No network in these tests: the download fails at once (download.integration.test.ts covers it).
  vi.stubEnv('KUBESMITH_ENVTEST_INDEX_URL', path.join(tmp, 'no-index.yaml'));
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await rm(tmp, { recursive: true, force: true });
});

async function fakeBinaries(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  for (const name of ['etcd', 'kube-apiserver', 'kubectl']) {
    await writeFile(path.join(dir, name), '#!/bin/sh\n');
    await chmod(path.join(dir, name), 0o755);
  }
  return dir;
}

describe('kubesmith envtest', () => {
  it('prints the directory of the binaries', async () => {
    const assets = await fakeBinaries(path.join(tmp, 'assets'));
    vi.stubEnv('KUBEBUILDER_ASSETS', assets);
    const result = await run(tmp, 'envtest');
    expect(result).toEqual({ code: 0, stdout: `${assets}\n`, stderr: '' });
  });

  it('prints a shell line with --print env, quoting when needed', async () => {
    const assets = await fakeBinaries(path.join(tmp, 'with space'));
    vi.stubEnv('KUBEBUILDER_ASSETS', assets);
    const result = await run(tmp, 'envtest', '--print', 'env');
    expect(result.stdout).toBe(`export KUBEBUILDER_ASSETS='${assets}'\n`);
  });

  it('resolves --bin-dir against the working directory and prints JSON with --json', async () => {
    await fakeBinaries(path.join(tmp, '.envtest', '1.34.2'));
    const result = await run(tmp, 'envtest', '--bin-dir', '.envtest', '--k8s-version', 'v1.34.2', '--json');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      command: 'envtest',
      ok: true,
      dir: path.join(tmp, '.envtest', '1.34.2'),
      source: 'cache',
      version: '1.34.2',
    });
  });

  it('exits 1 with one error and a hint when there are no binaries and no Go', async () => {
    const result = await run(tmp, 'envtest');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^error: no envtest binaries for Kubernetes 1\.37\.2 in .*: cannot read the envtest release index .*, and Go is not on PATH to build them\n/,
    );
    expect(result.stderr).toMatch(/\nhint: check the network, .* install Go .* KUBEBUILDER_ASSETS/);
    expect(result.stderr.split('\n')).toHaveLength(3);
  });

  it('exits 1 for an unsupported version and 2 for a malformed one', async () => {
    const unsupported = await run(tmp, 'envtest', '--k8s-version', '1.20.0');
    expect(unsupported.code).toBe(1);
    expect(unsupported.stderr).toContain('and the Go build supports only 1.37.x');
    expect((await run(tmp, 'envtest', '--k8s-version', 'latest')).code).toBe(2);
    expect((await run(tmp, 'envtest', '--print', 'yaml')).code).toBe(2);
  });

  it('keeps the provisioning code out of start-up: the command module imports it lazily', async () => {
    const source = await readFile(
      fileURLToPath(new URL('../../src/cli/envtest.ts', import.meta.url)),
      'utf8',
    );
    expect(source).not.toMatch(/^import .*from '\.\.\/envtest\//m);
    expect(source).toContain("await import('../envtest/index.js')");
  });
});
