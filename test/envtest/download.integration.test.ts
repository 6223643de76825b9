/**
 * The download path of `kubesmith envtest`, for real: a local HTTP server (node:http on 127.0.0.1) serves an
 * envtest release index and a tar.gz made from real binaries, laid out as controller-tools packs them. Each
 * failure case checks the exact message and that the cache is left as it was.
 *
 * The real binaries come from the cache `kubesmith envtest` fills (~/.cache/kubesmith/envtest/1.36.3).
 * Without them the tests are skipped with one line, except in CI (CI=true), where that is a failure. Named
 * `*.integration.test.ts` as the other tests that need the binaries, so `npm run test:unit` leaves it out.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_K8S_VERSION,
  defaultCacheRoot,
  ensureEnvtestBinaries,
  missingBinaries,
  type BuildRequest,
  type EnsureOptions,
} from '../../src/envtest/index.js';
import { archiveName, envtestPlatform } from '../../src/envtest/index-file.js';
import { KubesmithError } from '../../src/errors.js';
import { run } from '../helpers/run.js';
import { ENVTEST_DIRS, envtestFiles, writeTarGz } from './tar-helpers.js';

const VERSION = DEFAULT_K8S_VERSION;
const REAL = path.join(defaultCacheRoot(process.env), VERSION);
const haveReal = (await missingBinaries(REAL)).length === 0;
const inCi = process.env['CI'] === 'true';
if (!haveReal && !inCi)
  console.warn(
    `skipping the envtest download tests: no envtest binaries in ${REAL} (run \`kubesmith envtest\`)`,
  );

const ARCHIVE = archiveName(VERSION, envtestPlatform());
const repo = fileURLToPath(new URL('../..', import.meta.url));

let fixtures: string; // the archive, built once for this file
let archivePath: string;
let archiveSize: number;
let archiveHash: string;
let halfArchive: Buffer;
let server: http.Server;
let base: string;
let index = '';
const requests: string[] = [];
let tmp: string;

/** An index in controller-tools' format; versions other than VERSION carry a made-up hash. */
function indexYaml(releases: Record<string, { link: string; hash?: string }>): string {
  const lines = ['releases:'];
  const all = { 'v1.29.3': {}, 'v1.29.4': {}, 'v1.30.0': {}, ...releases } as Record<
    string,
    { link?: string; hash?: string }
  >;
  for (const [key, archive] of Object.entries(all)) {
    const version = key.replace(/^v/, '');
    const name = archiveName(version, envtestPlatform());
    lines.push(`  v${version}:`, `    ${name}:`);
    lines.push(`      hash: ${archive.hash ?? (version === VERSION ? archiveHash : 'ab'.repeat(64))}`);
    lines.push(`      selfLink: ${archive.link ?? `https://example.invalid/${name}`}`);
    // Other platforms are there too, and ignored.
    lines.push(
      `    envtest-v${version}-plan9-mips.tar.gz:`,
      `      hash: ${'cd'.repeat(64)}`,
      `      selfLink: x`,
    );
  }
  return `${lines.join('\n')}\n`;
}

const cacheRoot = (): string => path.join(tmp, 'cache', 'kubesmith', 'envtest');
const entry = (): string => path.join(cacheRoot(), VERSION);

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    HOME: path.join(tmp, 'home'),
    XDG_CACHE_HOME: path.join(tmp, 'cache'),
    PATH: path.join(tmp, 'empty'),
    ...extra,
  };
}

function ensure(options: EnsureOptions = {}): Promise<Awaited<ReturnType<typeof ensureEnvtestBinaries>>> {
  return ensureEnvtestBinaries({
    env: env(),
    indexUrl: `${base}/index.yaml`,
    // The server speaks plain http (index-trust.test.ts has the refusal without the flag, and https).
    allowInsecureIndex: true,
    warn: () => {},
    // Generous on a busy machine; the timeout test passes its own.
    fetch: { idleTimeoutMs: 5_000, retries: 0 },
    ...options,
  });
}

/** Every path below `dir`, sorted; undefined when `dir` does not exist. */
async function tree(dir: string): Promise<string[] | undefined> {
  if (!existsSync(dir)) return undefined;
  return (await readdir(dir, { recursive: true })).map(String).sort();
}

/** A cache root holding something else already, so "left as it was" means more than "absent". */
async function existingCache(): Promise<string[] | undefined> {
  await mkdir(path.join(cacheRoot(), '1.34.2'), { recursive: true });
  await writeFile(path.join(cacheRoot(), '1.34.2', 'notes.txt'), 'kept');
  return tree(cacheRoot());
}

async function failure(options: EnsureOptions = {}): Promise<KubesmithError> {
  const error = await ensure(options).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(KubesmithError);
  return error as KubesmithError;
}

const NO_GO = ', and Go is not on PATH to build them';
const RETRY_HINT =
  'run again to retry the download, or point --index-url (or KUBESMITH_ENVTEST_INDEX_URL) at another mirror; ' +
  'or install Go (https://go.dev/dl/) and run again to build them from Go modules; or point KUBEBUILDER_ASSETS ' +
  `at binaries from setup-envtest (\`export KUBEBUILDER_ASSETS=$(setup-envtest use -p path ${VERSION})\`)`;

describe.skipIf(!haveReal && !inCi)('kubesmith envtest: download from the envtest release index', () => {
  beforeAll(async () => {
    if (!haveReal)
      throw new Error(`CI=true but no envtest binaries in ${REAL}: run \`kubesmith envtest\` first`);
    fixtures = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-download-fixtures-'));
    archivePath = path.join(fixtures, ARCHIVE);
    await writeTarGz(archivePath, ENVTEST_DIRS, envtestFiles(REAL));
    archiveSize = (await stat(archivePath)).size;
    const hash = createHash('sha512');
    for await (const chunk of createReadStream(archivePath)) hash.update(chunk as Buffer);
    archiveHash = hash.digest('hex');
    halfArchive = (await readFile(archivePath)).subarray(0, Math.floor(archiveSize / 2));

    server = http.createServer((request, response) => {
      const url = request.url ?? '/';
      requests.push(url);
      if (url === '/index.yaml') {
        response.writeHead(200, { 'content-type': 'application/yaml' }).end(index);
      } else if (url === '/stalled/index.yaml') {
        // Accepts the request and never answers.
      } else if (url === `/archives/${ARCHIVE}`) {
        response.writeHead(200, { 'content-length': archiveSize });
        createReadStream(archivePath).pipe(response);
      } else if (url === `/truncated/${ARCHIVE}` || url === `/stalled/${ARCHIVE}`) {
        // Half the archive, then the connection closes (truncated) or goes silent (stalled).
        response.writeHead(200, { 'content-length': archiveSize });
        // The write callback runs once the bytes are handed to the kernel, so the client gets exactly half.
        response.write(halfArchive, () => {
          if (url.startsWith('/truncated/')) setTimeout(() => response.socket?.destroy(), 50);
        });
      } else {
        response.writeHead(404).end('not found');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 120_000);

  afterAll(async () => {
    if (server) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    if (fixtures) await rm(fixtures, { recursive: true, force: true });
  });

  beforeEach(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-download-test-'));
    requests.length = 0;
    index = indexYaml({ [VERSION]: { link: `archives/${ARCHIVE}` } });
  });
  afterEach(async () => {
    vi.unstubAllEnvs();
    await rm(tmp, { recursive: true, force: true });
  });

  it(
    'downloads, verifies and caches the binaries; the second run uses the cache',
    { timeout: 60_000 },
    async () => {
      const progress = vi.fn();
      const result = await ensure({ progress });
      expect(result).toEqual({ dir: entry(), source: 'download', version: VERSION });
      // Only the entry in the cache root, and only the binaries in it (no staging directory, no archive).
      expect(await tree(cacheRoot())).toEqual([
        VERSION,
        ...['etcd', 'kube-apiserver', 'kubectl'].map((b) => path.join(VERSION, b)),
      ]);
      for (const binary of ['etcd', 'kube-apiserver', 'kubectl'])
        expect((await stat(path.join(entry(), binary))).size).toBe(
          (await stat(path.join(REAL, binary))).size,
        );
      const lines = progress.mock.calls.map(([line]) => String(line));
      expect(lines[0]).toBe(
        `downloading ${ARCHIVE} (${(archiveSize / 1e6).toFixed(1)} MB) from ${base}/archives/${ARCHIVE}`,
      );
      expect(lines).toContainEqual(
        expect.stringMatching(new RegExp(`^  ${ARCHIVE}: SHA-512 verified \\(.* s\\); unpacking$`)),
      );
      expect(lines.at(-1)).toMatch(new RegExp(`^downloaded and verified in \\d+ s: ${entry()}$`));
      expect(requests).toEqual(['/index.yaml', `/archives/${ARCHIVE}`]);

      requests.length = 0;
      expect(await ensure()).toEqual({ dir: entry(), source: 'cache', version: VERSION });
      expect(requests).toEqual([]);
    },
  );

  it('refuses an archive whose SHA-512 differs from the index', async () => {
    const wrong = createHash('sha512').update('another archive').digest('hex');
    index = indexYaml({ [VERSION]: { link: `archives/${ARCHIVE}`, hash: wrong } });
    const before = await existingCache();
    const error = await failure();
    expect(error.message).toBe(
      `no envtest binaries for Kubernetes ${VERSION} in ${entry()}: the SHA-512 of ${ARCHIVE} from ` +
        `${base}/archives/${ARCHIVE} is ${archiveHash.slice(0, 16)}..., the index says ${wrong.slice(0, 16)}...${NO_GO}`,
    );
    expect(error.hint).toBe(RETRY_HINT);
    expect(await tree(cacheRoot())).toEqual(before);
  }, 30_000);

  it('leaves no cache directory behind when there was none', async () => {
    index = indexYaml({ [VERSION]: { link: `archives/${ARCHIVE}`, hash: 'ef'.repeat(64) } });
    await failure();
    expect(existsSync(path.join(tmp, 'cache'))).toBe(false);
  }, 30_000);

  it('reports a 404 for the archive', async () => {
    index = indexYaml({ [VERSION]: { link: `${base}/gone/${ARCHIVE}` } });
    const before = await existingCache();
    const error = await failure();
    expect(error.message).toBe(
      `no envtest binaries for Kubernetes ${VERSION} in ${entry()}: downloading ${ARCHIVE} failed: ` +
        `${base}/gone/${ARCHIVE} answered 404 Not Found${NO_GO}`,
    );
    expect(error.hint).toBe(RETRY_HINT);
    expect(await tree(cacheRoot())).toEqual(before);
  });

  it('reports an archive cut off mid-body', async () => {
    index = indexYaml({ [VERSION]: { link: `${base}/truncated/${ARCHIVE}` } });
    const before = await existingCache();
    const error = await failure();
    // The count is what the client had read when the close arrived: Node drops bytes still buffered in the
    // response, so it is at most the half the server sent, and varies with the machine's load.
    const received = Number(/closed after (\d+) of/.exec(error.message)?.[1]);
    expect(received).toBeGreaterThan(0);
    expect(received).toBeLessThanOrEqual(Math.floor(archiveSize / 2));
    expect(error.message).toBe(
      `no envtest binaries for Kubernetes ${VERSION} in ${entry()}: downloading ${ARCHIVE} failed: the connection ` +
        `to ${base.slice('http://'.length)} closed after ${received} of ${archiveSize} bytes${NO_GO}`,
    );
    expect(error.hint).toBe(RETRY_HINT);
    expect(await tree(cacheRoot())).toEqual(before);
  }, 30_000);

  it('gives up on a server that stops answering, mid-archive or before the index', async () => {
    index = indexYaml({ [VERSION]: { link: `${base}/stalled/${ARCHIVE}` } });
    const before = await existingCache();
    const started = Date.now();
    const fetch = { idleTimeoutMs: 500, retries: 0 };
    const error = await failure({ fetch });
    expect(error.message).toBe(
      `no envtest binaries for Kubernetes ${VERSION} in ${entry()}: downloading ${ARCHIVE} failed: ` +
        `${base.slice('http://'.length)} stopped answering (nothing for 500 ms)${NO_GO}`,
    );
    const index2 = await failure({ indexUrl: `${base}/stalled/index.yaml`, fetch });
    expect(index2.message).toBe(
      `no envtest binaries for Kubernetes ${VERSION} in ${entry()}: cannot read the envtest release index ` +
        `${base}/stalled/index.yaml: ${base.slice('http://'.length)} stopped answering (nothing for 500 ms)${NO_GO}`,
    );
    expect(index2.hint).toMatch(
      /^check the network, or point --index-url \(or KUBESMITH_ENVTEST_INDEX_URL\) at a reachable copy of envtest-releases\.yaml; or install Go/,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await tree(cacheRoot())).toEqual(before);
  }, 30_000);

  it('names nearby versions for a version neither in the index nor buildable', async () => {
    const before = await existingCache();
    const error = await failure({ version: '1.29.9' });
    expect(error.message).toBe(
      `Kubernetes 1.29.9 is not in the envtest release index ${base}/index.yaml (nearby versions in the index: ` +
        `1.29.4, 1.29.3, 1.30.0, ${VERSION}) and the Go build supports only 1.37.x (verified: 1.37.2, etcd 3.7.3), ` +
        `1.36.x (verified: 1.36.3, etcd 3.6.16), 1.35.x (verified: 1.35.4, etcd 3.6.16), 1.34.x (verified: 1.34.2, etcd 3.5.21)`,
    );
    expect(error.hint).toBe('pass --k8s-version with one of those versions, e.g. --k8s-version 1.29.4');
    expect(requests).toEqual(['/index.yaml']);
    expect(await tree(cacheRoot())).toEqual(before);
  });

  it('reports an index that does not parse', async () => {
    const before = await existingCache();
    index = '<html><body>Rate limited</body></html>\n';
    const error = await failure();
    expect(error.message).toBe(
      `no envtest binaries for Kubernetes ${VERSION} in ${entry()}: the envtest release index ${base}/index.yaml ` +
        `does not parse: it has no "releases" mapping${NO_GO}`,
    );
    expect(error.hint).toMatch(
      /^point --index-url \(or KUBESMITH_ENVTEST_INDEX_URL\) at a valid envtest-releases\.yaml; or install Go/,
    );
    index = 'releases: [unclosed\n';
    expect((await failure()).message).toMatch(
      new RegExp(`the envtest release index ${base}/index\\.yaml does not parse: .+, and Go is not on PATH`),
    );
    expect(await tree(cacheRoot())).toEqual(before);
  });

  it('refuses an incomplete cache entry without touching it or the network', async () => {
    await mkdir(entry(), { recursive: true });
    await copyFile(path.join(REAL, 'etcd'), path.join(entry(), 'etcd'));
    const before = await tree(cacheRoot());
    const error = await failure();
    expect(error.message).toBe(
      `the envtest cache entry ${entry()} is incomplete: kube-apiserver, kubectl missing or not executable`,
    );
    expect(error.hint).toBe(
      `remove it (rm -rf '${entry()}') and run again, or pass --bin-dir with another cache directory`,
    );
    expect(requests).toEqual([]);
    expect(await tree(cacheRoot())).toEqual(before);
  });

  it('says in one line why the download failed, then builds with Go when go is on PATH', async () => {
    index = indexYaml({ [VERSION]: { link: `gone/${ARCHIVE}` } });
    const gobin = path.join(tmp, 'gobin');
    await mkdir(gobin);
    await writeFile(path.join(gobin, 'go'), '#!/bin/sh\nexit 1\n');
    await chmod(path.join(gobin, 'go'), 0o755);
    const progress = vi.fn();
    const build = vi.fn(async (request: BuildRequest) => {
      for (const binary of ['etcd', 'kube-apiserver', 'kubectl'])
        await copyFile(path.join(REAL, binary), path.join(request.outDir, binary));
    });
    const result = await ensure({ env: env({ PATH: gobin }), progress, build });
    expect(result).toEqual({ dir: entry(), source: 'build', version: VERSION });
    expect(progress).toHaveBeenCalledWith(
      `no download: downloading ${ARCHIVE} failed: ${base}/gone/${ARCHIVE} answered 404 Not Found; ` +
        'building from Go modules instead',
    );
    expect(build).toHaveBeenCalledOnce();
  }, 30_000);

  it(
    'takes the index from --index-url as a path, with archive links relative to it',
    { timeout: 60_000 },
    async () => {
      const mirror = path.join(tmp, 'mirror');
      await mkdir(path.join(mirror, 'archives'), { recursive: true });
      await copyFile(archivePath, path.join(mirror, 'archives', ARCHIVE));
      await writeFile(path.join(mirror, 'envtest-releases.yaml'), index);
      vi.stubEnv('XDG_CACHE_HOME', path.join(tmp, 'cache'));
      vi.stubEnv('PATH', path.join(tmp, 'empty'));
      vi.stubEnv('KUBEBUILDER_ASSETS', '');
      vi.stubEnv('KUBESMITH_ENVTEST_INDEX_URL', `${base}/not-used.yaml`);
      const result = await run(tmp, 'envtest', '--index-url', 'mirror/envtest-releases.yaml', '--json');
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ source: 'download', dir: entry() });
      expect(result.stderr).toContain(`from file://${mirror}/archives/${ARCHIVE}\n`);
      expect(requests).toEqual([]);
    },
  );

  it('takes the index from KUBESMITH_ENVTEST_INDEX_URL', { timeout: 60_000 }, async () => {
    vi.stubEnv('XDG_CACHE_HOME', path.join(tmp, 'cache'));
    vi.stubEnv('PATH', path.join(tmp, 'empty'));
    vi.stubEnv('KUBEBUILDER_ASSETS', '');
    vi.stubEnv('KUBESMITH_ENVTEST_INDEX_URL', `${base}/index.yaml`);
    const result = await run(tmp, 'envtest', '--allow-insecure-index');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${entry()}\n`);
    expect(requests).toEqual(['/index.yaml', `/archives/${ARCHIVE}`]);
  });

  it('leaves nothing in the cache when interrupted with Ctrl-C', { timeout: 30_000 }, async () => {
    const cli = path.join(repo, 'dist', 'cli', 'main.js');
    expect(existsSync(cli), `${cli} is missing: run \`npm run build\` first`).toBe(true);
    index = indexYaml({ [VERSION]: { link: `${base}/stalled/${ARCHIVE}` } });
    const child = spawn(
      process.execPath,
      [
        path.join(repo, 'bin', 'kubesmith.js'),
        'envtest',
        '--index-url',
        `${base}/index.yaml`,
        '--allow-insecure-index',
      ],
      {
        env: { ...env(), KUBEBUILDER_ASSETS: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
      child.on('exit', (code, signal) => resolve(signal ?? code)),
    );
    await new Promise<void>((resolve) =>
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('downloading ')) resolve();
      }),
    );
    // The staging directory exists while the download runs...
    expect((await readdir(cacheRoot())).filter((name) => name.startsWith('.download-'))).toHaveLength(1);
    child.kill('SIGINT');
    expect(await exited).toBe('SIGINT');
    // ...and is gone after Ctrl-C: nothing a later run would trust, nothing left over.
    expect(await readdir(cacheRoot())).toEqual([]);
  });

  it('builds its archive as controller-tools packs it', async () => {
    const { execFileSync } = await import('node:child_process');
    const listing = execFileSync('tar', ['-tzf', archivePath], { encoding: 'utf8' });
    expect(listing.split('\n').filter(Boolean)).toEqual([
      'controller-tools/',
      'controller-tools/envtest/',
      'controller-tools/envtest/etcd',
      'controller-tools/envtest/kube-apiserver',
      'controller-tools/envtest/kubectl',
    ]);
    expect(await readFile(archivePath)).toHaveLength(archiveSize);
  });
});
