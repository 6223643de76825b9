/**
 * What an envtest release index may make `kubesmith envtest` fetch, end to end: local http and https servers
 * on 127.0.0.1 serve an index and an archive of stand-in binaries (shell scripts printing the versions the
 * real ones print), so the whole download runs without the real binaries. Each refusal is checked to stop
 * before the request it refuses, to leave the cache as it was and not to fall back to a build.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeServingCertificates } from '../../runtime/src/internal/certs.js';
import {
  ensureClusterBinaries,
  ensureEnvtestBinaries,
  type BuildRequest,
  type EnsureOptions,
} from '../../src/envtest/index.js';
import { DEFAULT_K8S_VERSION, resolveRelease } from '../../src/envtest/versions.js';
import { archiveName, envtestPlatform } from '../../src/envtest/index-file.js';
import { KubesmithError } from '../../src/errors.js';
import { run } from '../helpers/run.js';
import { END, ENVTEST_DIRS, envtestFiles, file, writeTarGz } from './tar-helpers.js';

// The default release: what ensureEnvtestBinaries fetches when no version is asked for.
const VERSION = DEFAULT_K8S_VERSION;
const ETCD = resolveRelease(VERSION).etcd;
const ARCHIVE = archiveName(VERSION, envtestPlatform());
const certs = makeServingCertificates(['127.0.0.1', 'localhost']);

let fixtures: string;
let archivePath: string;
let archiveHash: string;
let plain: http.Server;
let secure: https.Server;
let plainBase: string;
let secureBase: string;
let index = '';
const requests: string[] = [];
let tmp: string;

/** Shell scripts standing in for the binaries: each prints what the real one prints when verified. */
async function fakeBinaries(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const outputs = {
    etcd: `etcd Version: ${ETCD}`,
    'kube-apiserver': `Kubernetes v${VERSION}`,
    kubectl: `Client Version: v${VERSION}`,
  };
  for (const [name, output] of Object.entries(outputs)) {
    await writeFile(path.join(dir, name), `#!/bin/sh\necho "${output}"\n`);
    await chmod(path.join(dir, name), 0o755);
  }
  return dir;
}

/** An index in controller-tools' format naming the archive at `selfLink`, with its true digest. */
function indexYaml(selfLink: string): string {
  return `releases:\n  v${VERSION}:\n    ${ARCHIVE}:\n      hash: ${archiveHash}\n      selfLink: ${selfLink}\n`;
}

beforeAll(async () => {
  fixtures = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-index-trust-fixtures-'));
  archivePath = path.join(fixtures, ARCHIVE);
  await writeTarGz(archivePath, ENVTEST_DIRS, envtestFiles(await fakeBinaries(path.join(fixtures, 'bin'))));
  archiveHash = createHash('sha512')
    .update(await readFile(archivePath))
    .digest('hex');
  const answer = (scheme: string) => (request: http.IncomingMessage, response: http.ServerResponse) => {
    const url = request.url ?? '/';
    requests.push(`${scheme} ${url}`);
    if (url === '/index.yaml') response.writeHead(200).end(index);
    else if (url === `/archives/${ARCHIVE}`) void readFile(archivePath).then((data) => response.end(data));
    else if (url === `/to-http/${ARCHIVE}`)
      response.writeHead(302, { location: `${plainBase}/archives/${ARCHIVE}` }).end();
    else response.writeHead(404).end();
  };
  plain = http.createServer(answer('http'));
  secure = https.createServer({ cert: certs.cert, key: certs.key }, answer('https'));
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => secure.listen(0, '127.0.0.1', resolve));
  plainBase = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
  secureBase = `https://127.0.0.1:${(secure.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const server of [plain, secure]) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await rm(fixtures, { recursive: true, force: true });
});
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-index-trust-test-'));
  requests.length = 0;
  index = indexYaml(`archives/${ARCHIVE}`);
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await rm(tmp, { recursive: true, force: true });
});

const cacheRoot = (): string => path.join(tmp, 'cache', 'kubesmith', 'envtest');

/** A PATH with a `go` on it: a refusal must not turn into a build from Go modules. */
async function pathWithGo(): Promise<string> {
  const bin = path.join(tmp, 'gobin');
  await mkdir(bin, { recursive: true });
  await writeFile(path.join(bin, 'go'), '#!/bin/sh\nexit 1\n');
  await chmod(path.join(bin, 'go'), 0o755);
  return bin;
}

const build = vi.fn(async (request: BuildRequest) => void (await fakeBinaries(request.outDir)));
const warn = vi.fn();

async function ensure(
  options: EnsureOptions = {},
): Promise<Awaited<ReturnType<typeof ensureEnvtestBinaries>>> {
  build.mockClear();
  warn.mockClear();
  return ensureEnvtestBinaries({
    env: { HOME: path.join(tmp, 'home'), XDG_CACHE_HOME: path.join(tmp, 'cache'), PATH: await pathWithGo() },
    fetch: { retries: 0, ca: certs.caCert },
    build,
    warn,
    ...options,
  });
}

/** The refusal: a KubesmithError, no build instead, and no cache directory made. */
async function refusal(options: EnsureOptions): Promise<KubesmithError> {
  const error = await ensure(options).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(KubesmithError);
  expect(build).not.toHaveBeenCalled();
  expect(existsSync(cacheRoot()) ? await readdir(cacheRoot()) : []).toEqual([]);
  return error as KubesmithError;
}

describe('the envtest release index must come over https or from disk', () => {
  it('refuses an index over plain http before asking it anything, even with the binaries at hand', async () => {
    const error = await refusal({ indexUrl: `${plainBase}/index.yaml` });
    expect(error.message).toBe(
      `refusing the envtest release index ${plainBase}/index.yaml: it comes over plain http, so anyone on ` +
        'the way can change the binaries it names and the SHA-512 digests that check them',
    );
    expect(error.hint).toContain('--allow-insecure-index');
    expect(error.exitCode).toBe(1);
    expect(requests).toEqual([]);
    // Whether or not this run would download: the same settings fail the same way.
    const assets = await fakeBinaries(path.join(tmp, 'assets'));
    const env = { KUBEBUILDER_ASSETS: assets, PATH: '' };
    await expect(ensure({ env, indexUrl: `${plainBase}/index.yaml` })).rejects.toThrow(/^refusing/);
    await expect(ensureClusterBinaries({ env, indexUrl: `${plainBase}/index.yaml` })).rejects.toThrow(
      /^refusing/,
    );
  });

  it('accepts it with --allow-insecure-index, and says in a warning what comes over plain http', async () => {
    const result = await ensure({ indexUrl: `${plainBase}/index.yaml`, allowInsecureIndex: true });
    expect(result).toEqual({ dir: path.join(cacheRoot(), VERSION), source: 'download', version: VERSION });
    expect(warn.mock.calls).toEqual([
      [
        `the envtest release index ${plainBase}/index.yaml comes over plain http (--allow-insecure-index): ` +
          'the SHA-512 digests it gives prove nothing',
      ],
      [
        `${ARCHIVE} comes over plain http from ${plainBase}/archives/${ARCHIVE} (--allow-insecure-index): ` +
          'nothing checks it',
      ],
    ]);
    expect(requests).toEqual(['http /index.yaml', `http /archives/${ARCHIVE}`]);
  });

  it('downloads from an https index with https links, without a warning', async () => {
    const result = await ensure({ indexUrl: `${secureBase}/index.yaml` });
    expect(result.source).toBe('download');
    expect(warn).not.toHaveBeenCalled();
    expect(requests).toEqual(['https /index.yaml', `https /archives/${ARCHIVE}`]);
  });

  it('refuses the flag’s index and the variable’s alike, in one line and a hint (CLI)', async () => {
    vi.stubEnv('XDG_CACHE_HOME', path.join(tmp, 'cache'));
    vi.stubEnv('KUBEBUILDER_ASSETS', '');
    vi.stubEnv('KUBESMITH_ENVTEST_INDEX_URL', `${plainBase}/index.yaml`);
    for (const args of [[], ['--index-url', `${plainBase}/other.yaml`]]) {
      const result = await run(tmp, 'envtest', ...args);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      const lines = result.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^error: refusing the envtest release index http:\/\/127\.0\.0\.1:\d+\//);
      expect(lines[1]).toMatch(/^hint: .*--allow-insecure-index/);
    }
    const assets = await fakeBinaries(path.join(tmp, 'assets'));
    vi.stubEnv('KUBEBUILDER_ASSETS', assets);
    expect(await run(tmp, 'envtest', '--allow-insecure-index')).toEqual({
      code: 0,
      stdout: `${assets}\n`,
      stderr: '',
    });
    expect(requests).toEqual([]);
  });
});

describe('an index’s archive links keep its class', () => {
  it('refuses a file: link from an https index, even to an archive with the right digest', async () => {
    index = indexYaml(pathToFileURL(archivePath).href);
    const error = await refusal({ indexUrl: `${secureBase}/index.yaml`, allowInsecureIndex: true });
    expect(error.message).toBe(
      `refusing ${ARCHIVE} from the envtest release index ${secureBase}/index.yaml: it links to ` +
        `${pathToFileURL(archivePath).href}, a file on this machine; an index on a server links to https: URLs only`,
    );
    expect(error.hint).toMatch(/^fix the index's selfLink for /);
  });

  it('refuses a plain http link from an https index without the flag', async () => {
    index = indexYaml(`${plainBase}/archives/${ARCHIVE}`);
    const error = await refusal({ indexUrl: `${secureBase}/index.yaml` });
    expect(error.message).toMatch(/: it links to http:\/\/127\.0\.0\.1:\d+\/archives\/.*, over plain http$/);
    expect(error.hint).toContain('--allow-insecure-index');
    expect(requests).toEqual(['https /index.yaml']);
  });

  it('refuses a redirect of the archive from https to http, even with the flag', async () => {
    index = indexYaml(`to-http/${ARCHIVE}`);
    const error = await refusal({ indexUrl: `${secureBase}/index.yaml`, allowInsecureIndex: true });
    expect(error.message).toBe(
      `refusing ${ARCHIVE} from the envtest release index ${secureBase}/index.yaml: ${secureBase}/to-http/` +
        `${ARCHIVE} redirects to ${plainBase}/archives/${ARCHIVE}, from https to http`,
    );
    expect(requests).toEqual(['https /index.yaml', `https /to-http/${ARCHIVE}`]);
  });

  it('refuses a link from an index on disk to a file outside its directory', async () => {
    const mirror = path.join(tmp, 'mirror');
    await mkdir(path.join(tmp, 'elsewhere'), { recursive: true });
    await mkdir(mirror);
    await copyFile(archivePath, path.join(tmp, 'elsewhere', ARCHIVE));
    await writeFile(path.join(mirror, 'envtest-releases.yaml'), indexYaml(`../elsewhere/${ARCHIVE}`));
    const error = await refusal({ indexUrl: path.join(mirror, 'envtest-releases.yaml') });
    expect(error.message).toMatch(
      new RegExp(`: it links to ${path.join(tmp, 'elsewhere', ARCHIVE)}, outside the index's directory$`),
    );
    // Beside the index, the same archive is fine.
    await copyFile(archivePath, path.join(mirror, ARCHIVE));
    await writeFile(path.join(mirror, 'envtest-releases.yaml'), indexYaml(ARCHIVE));
    expect((await ensure({ indexUrl: path.join(mirror, 'envtest-releases.yaml') })).source).toBe('download');
  });
});

describe('an index cannot aim the download at internal addresses', () => {
  it('refuses the cloud metadata address from an index on another kind of address, without connecting', async () => {
    index = indexYaml(`https://169.254.169.254/latest/meta-data/${ARCHIVE}`);
    const started = Date.now();
    const error = await refusal({ indexUrl: `${secureBase}/index.yaml` });
    expect(error.message).toBe(
      `refusing ${ARCHIVE} from the envtest release index ${secureBase}/index.yaml: https://169.254.169.254/` +
        `latest/meta-data/${ARCHIVE}: 169.254.169.254 is a link-local address, and the index came from a ` +
        'loopback address',
    );
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('refuses localhost from an index on disk, and allows it from an index on localhost', async () => {
    const port = new URL(secureBase).port;
    await writeFile(
      path.join(tmp, 'envtest-releases.yaml'),
      indexYaml(`https://localhost:${port}/archives/${ARCHIVE}`),
    );
    const error = await refusal({ indexUrl: path.join(tmp, 'envtest-releases.yaml') });
    expect(error.message).toMatch(
      /: https:\/\/localhost:\d+\/archives\/.*: localhost resolves to (127\.0\.0\.1|::1), a loopback address, and the index is on disk$/,
    );
    expect(requests).toEqual([]);
    index = indexYaml(`https://localhost:${port}/archives/${ARCHIVE}`);
    expect((await ensure({ indexUrl: `${secureBase}/index.yaml` })).source).toBe('download');
  });
});

describe('the archive', () => {
  it('is a broken archive when it holds a binary twice, said in one line (not a raw EEXIST)', async () => {
    const twice = gzipSync(
      Buffer.concat([
        file('controller-tools/envtest/etcd', `#!/bin/sh\necho "etcd Version: ${ETCD}"\n`),
        file('controller-tools/envtest/etcd', `#!/bin/sh\necho "etcd Version: ${ETCD}"\n`),
        END,
      ]),
    );
    const mirror = path.join(tmp, 'mirror');
    await mkdir(mirror);
    await writeFile(path.join(mirror, ARCHIVE), twice);
    const hash = createHash('sha512').update(twice).digest('hex');
    await writeFile(
      path.join(mirror, 'envtest-releases.yaml'),
      `releases:\n  v${VERSION}:\n    ${ARCHIVE}:\n      hash: ${hash}\n      selfLink: ${ARCHIVE}\n`,
    );
    const progress = vi.fn();
    const result = await ensure({ indexUrl: path.join(mirror, 'envtest-releases.yaml'), progress });
    expect(progress).toHaveBeenCalledWith(
      `no download: ${ARCHIVE} is not a valid tar.gz archive: controller-tools/envtest/etcd is in the archive ` +
        'twice; building from Go modules instead',
    );
    expect(result.source).toBe('build');
  });
});

describe('no version string leads out of the cache', () => {
  it.each(['../../x', '1.36.3/../../x', '..', '1.36.3/x', '/tmp/x'])(
    'refuses %j before touching the cache or the network',
    async (version) => {
      const error = await refusal({ version, indexUrl: `${secureBase}/index.yaml` });
      expect(error.message).toBe(`"${version}" is not a Kubernetes version`);
      await expect(ensureClusterBinaries({ version })).rejects.toThrow(/unsupported Kubernetes version/);
      expect(requests).toEqual([]);
      expect(await readdir(tmp)).toEqual(['gobin']);
    },
  );

  it('ignores a release in the index keyed by a path: the cache entry is named by the version asked for', async () => {
    index = `releases:\n  ../../../escape:\n    ${ARCHIVE}:\n      hash: ${archiveHash}\n      selfLink: archives/${ARCHIVE}\n`;
    const result = await ensure({ indexUrl: `${secureBase}/index.yaml` });
    expect(result.dir).toBe(path.join(cacheRoot(), VERSION));
    expect(await readdir(tmp)).toEqual(['cache', 'gobin']);
  });

  it('refuses such a --k8s-version as a usage error (CLI)', async () => {
    vi.stubEnv('XDG_CACHE_HOME', path.join(tmp, 'cache'));
    const result = await run(tmp, 'envtest', '--k8s-version', '../../x');
    expect(result.code).toBe(2);
    expect(existsSync(path.join(tmp, 'cache'))).toBe(false);
  });
});
