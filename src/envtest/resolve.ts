/**
 * Finds or provides the envtest binaries (etcd, kube-apiserver, kubectl), in this order:
 * 1. `KUBEBUILDER_ASSETS`, when it holds all three (same variable and names as Go's envtest);
 * 2. the per-version cache, `<cache root>/<version>`; the root is `--bin-dir`, else
 *    `$XDG_CACHE_HOME/kubesmith/envtest`, else `~/.cache/kubesmith/envtest`;
 * 3. a download from the envtest release index (download.ts), into that cache;
 * 4. a build from Go modules when `go` is on PATH and the version is one it supports, into that cache;
 * 5. otherwise one error naming both ways and how to fix them.
 *
 * A cache entry is complete by construction: a download or a build goes into a staging directory beside the
 * entry, each binary is run once (`--version`), and only then is the directory renamed into place (one
 * atomic rename). fillCacheEntry() is that mechanism, for both.
 */
import { execFile } from 'node:child_process';
import { constants, rmSync } from 'node:fs';
import { access, mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { KubesmithError } from '../errors.js';
import { buildFromGoModules, type BuildRequest } from './build.js';
import { downloadArchive, DownloadError, locateArchive, type DownloadContext } from './download.js';
import type { FetchOptions } from './http.js';
import { indexLocation, IndexError } from './index-file.js';
import {
  buildFailed,
  downloadFallsBack,
  incompleteAssets,
  incompleteCacheEntry,
  malformedVersion,
  noBinaries,
  unknownVersion,
} from './messages.js';
import { checkIndexUrl, Refused } from './trust.js';
import {
  BINARIES,
  buildableRelease,
  DEFAULT_K8S_VERSION,
  normalizeVersion,
  supportedVersions,
  type K8sRelease,
} from './versions.js';

export interface EnsureOptions {
  /** Kubernetes version, `X.Y.Z`. Default: DEFAULT_K8S_VERSION. */
  version?: string;
  /** The cache root (the binaries go to `<binDir>/<version>`). Default: defaultCacheRoot(env). */
  binDir?: string;
  /** Environment to read KUBEBUILDER_ASSETS, PATH and XDG_CACHE_HOME from. Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** Progress lines for people. Default: none. */
  progress?: (line: string) => void;
  /** Go's own output, for --verbose. Default: none. */
  detail?: (line: string) => void;
  /** Test seam: builds the binaries into an empty directory. Default: buildFromGoModules. */
  build?: (request: BuildRequest) => Promise<void>;
  /**
   * The envtest release index: a URL (`https:`, `file:`; `http:` with allowInsecureIndex) or a path,
   * relative to `cwd`. Default: $KUBESMITH_ENVTEST_INDEX_URL, else controller-tools' envtest-releases.yaml.
   */
  indexUrl?: string;
  /** --allow-insecure-index: accept an index and archives over plain http (each says so in a warning). */
  allowInsecureIndex?: boolean;
  /** Warning lines for people. Default: progress. */
  warn?: (line: string) => void;
  /** Resolves a relative index path. Default: process.cwd(). */
  cwd?: string;
  /** On a terminal: a download status line that replaces the previous one ('' clears it). Default: none. */
  transient?: (line: string) => void;
  /** Test seam: timeouts, retries and CA of each request of the download. Default: http.ts's. */
  fetch?: Omit<FetchOptions, 'maxBytes' | 'addressRule'>;
}

export type BinarySource = 'KUBEBUILDER_ASSETS' | 'cache' | 'download' | 'build';

export interface EnsureResult {
  /** The directory holding etcd, kube-apiserver and kubectl: the value for KUBEBUILDER_ASSETS. */
  dir: string;
  source: BinarySource;
  /** The Kubernetes version asked for (KUBEBUILDER_ASSETS is used as it is, whatever it holds). */
  version: string;
}

/** `$XDG_CACHE_HOME/kubesmith/envtest`, or `~/.cache/kubesmith/envtest`. */
export function defaultCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env['XDG_CACHE_HOME'];
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env['HOME'] || os.homedir(), '.cache');
  return path.join(base, 'kubesmith', 'envtest');
}

export async function ensureEnvtestBinaries(options: EnsureOptions = {}): Promise<EnsureResult> {
  const env = options.env ?? process.env;
  const progress = options.progress ?? (() => {});
  const requested = options.version ?? DEFAULT_K8S_VERSION;
  const version = normalizeVersion(requested);
  if (!version) {
    const { message, hint } = malformedVersion(requested);
    throw new KubesmithError(message, { hint });
  }
  checkIndexOption(options, env);

  const assets = env['KUBEBUILDER_ASSETS'];
  if (assets) {
    const missing = await missingBinaries(assets);
    if (missing.length === 0) return { dir: path.resolve(assets), source: 'KUBEBUILDER_ASSETS', version };
    progress(incompleteAssets(assets, missing));
  }

  const root = path.resolve(options.binDir ?? defaultCacheRoot(env));
  const entry = path.join(root, version);
  const missing = await missingBinaries(entry);
  if (missing.length === 0) return { dir: entry, source: 'cache', version };
  // Entries appear whole (one rename), so a partial one was made or changed by hand: say so, touch nothing.
  if (await exists(entry)) {
    const { message, hint } = incompleteCacheEntry(entry, missing);
    throw new KubesmithError(message, { hint });
  }

  const downloadProblem = await downloadIntoCache(version, root, entry, options, env, progress);
  if (!downloadProblem) return { dir: entry, source: 'download', version };

  const release = buildableRelease(version);
  const go = await findExecutable('go', env);
  if (release && go) {
    progress(downloadFallsBack(downloadProblem.message));
    await buildIntoCache({ release, root, entry, go, env, progress, options });
    return { dir: entry, source: 'build', version };
  }
  const { message, hint } =
    !release && downloadProblem.kind === 'missing'
      ? unknownVersion(version, downloadProblem.indexUrl, downloadProblem.nearby, supportedVersions())
      : noBinaries(version, entry, downloadProblem, {
          buildable: release !== undefined,
          supported: supportedVersions(),
        });
  throw new KubesmithError(message, { hint });
}

/**
 * Refuses an index location that is plain http (without allowInsecureIndex) or neither https: nor on disk,
 * whether or not this run downloads: the same settings fail the same way with a full cache or an empty one.
 * A location that does not parse is reported when the download needs it.
 */
export function checkIndexOption(options: EnsureOptions, env: NodeJS.ProcessEnv): void {
  let url: URL;
  try {
    url = indexLocation(options.indexUrl, env, options.cwd);
  } catch (error) {
    if (error instanceof IndexError) return;
    throw error;
  }
  try {
    checkIndexUrl(url, options.allowInsecureIndex ?? false);
  } catch (error) {
    if (error instanceof Refused) throw new KubesmithError(error.message, { hint: error.hint });
    throw error;
  }
}

/** Why the download did not provide the binaries; undefined when it did. */
type DownloadOutcome =
  (Pick<DownloadError, 'message' | 'kind' | 'nearby'> & { indexUrl: string }) | undefined;

async function downloadIntoCache(
  version: string,
  root: string,
  entry: string,
  options: EnsureOptions,
  env: NodeJS.ProcessEnv,
  progress: (line: string) => void,
): Promise<DownloadOutcome> {
  let indexUrl: URL;
  try {
    indexUrl = indexLocation(options.indexUrl, env, options.cwd);
  } catch (error) {
    if (error instanceof IndexError)
      return { message: error.message, kind: 'invalid', nearby: [], indexUrl: '' };
    throw error;
  }
  const context: DownloadContext = {
    version,
    indexUrl,
    progress,
    allowInsecure: options.allowInsecureIndex ?? false,
    ...(options.warn ? { warn: options.warn } : {}),
    ...(options.transient ? { transient: options.transient } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
  const started = Date.now();
  try {
    const archive = await locateArchive(context);
    await fillCacheEntry(root, entry, `.download-${version}`, async (staging) => {
      await downloadArchive(archive, staging, context);
      const problem = await verifyBinaries(staging, { version });
      if (problem) throw new DownloadError(`the downloaded ${problem}`, 'failed');
    });
  } catch (error) {
    if (error instanceof DownloadError)
      return { message: error.message, kind: error.kind, nearby: error.nearby, indexUrl: indexUrl.href };
    // A refusal is not a failure to route around with a build: the settings or the index need fixing.
    if (error instanceof Refused) throw new KubesmithError(error.message, { hint: error.hint });
    throw error;
  }
  progress(`downloaded and verified in ${Math.round((Date.now() - started) / 1000)} s: ${entry}`);
  return undefined;
}

interface BuildIntoCache {
  release: K8sRelease;
  root: string;
  entry: string;
  go: string;
  env: NodeJS.ProcessEnv;
  progress: (line: string) => void;
  options: EnsureOptions;
}

async function buildIntoCache({
  release,
  root,
  entry,
  go,
  env,
  progress,
  options,
}: BuildIntoCache): Promise<void> {
  const started = Date.now();
  await fillCacheEntry(root, entry, `.build-${release.version}`, async (staging) => {
    const build = options.build ?? buildFromGoModules;
    await build({
      release,
      outDir: staging,
      go,
      env,
      progress,
      ...(options.detail ? { detail: options.detail } : {}),
    });
    const problem = await verifyBinaries(staging, { version: release.version, etcd: release.etcd });
    if (problem) {
      const [name = '', detail = ''] = problem.split(/: (.*)/s);
      const { message, hint } = buildFailed(`verifying ${name}`, detail);
      throw new KubesmithError(message, { hint });
    }
  });
  progress(`built in ${Math.round((Date.now() - started) / 1000)} s: ${entry}`);
}

/**
 * Makes the cache entry `entry` (in `root`) from what `fill` puts into an empty staging directory beside it,
 * `<root>/<prefix>-<pid>-<time>`, with one atomic rename once `fill` (which verifies) succeeds. Whatever
 * happens, including Ctrl-C, the staging directory is removed, as are the directories this call created for
 * the cache root, so a failure leaves the cache as it was. A process killed outright leaves its staging
 * directory behind; the next call removes those whose process is gone.
 */
async function fillCacheEntry(
  root: string,
  entry: string,
  prefix: string,
  fill: (staging: string) => Promise<void>,
): Promise<void> {
  const created = await mkdir(root, { recursive: true });
  let done = false;
  try {
    await withStagingDirectory(root, prefix, async (staging) => {
      await fill(staging);
      try {
        await rename(staging, entry);
      } catch (error) {
        // Another run finished the same version first: keep its entry when complete.
        if ((await missingBinaries(entry)).length > 0) throw error;
      }
    });
    done = true;
  } finally {
    if (!done && created) await removeEmptyDirs(root, created);
  }
}

/**
 * Runs `work` with a new staging directory `<root>/<prefix>-<pid>-<time>`, removed afterwards whatever
 * happens, also on Ctrl-C (SIGINT, SIGTERM: removed, then the process dies of the signal as it would have).
 * Staging directories of processes that are gone (killed outright) are removed first.
 */
export async function withStagingDirectory(
  root: string,
  prefix: string,
  work: (staging: string) => Promise<void>,
): Promise<void> {
  await removeAbandonedStaging(root);
  // The pid in the name lets a later run tell an abandoned staging directory (its process is gone) from a live one.
  const staging = path.join(root, `${prefix}-${process.pid}-${Date.now().toString(36)}`);
  await mkdir(staging);
  const onSignal = (signal: NodeJS.Signals): void => {
    rmSync(staging, { recursive: true, force: true, maxRetries: 3 });
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    await work(staging);
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    await rm(staging, { recursive: true, force: true });
  }
}

/** Removes `dir` and its parents up to `top` (inclusive) while they are empty. */
async function removeEmptyDirs(dir: string, top: string): Promise<void> {
  for (let current = dir; current.startsWith(top); current = path.dirname(current)) {
    try {
      await rmdir(current);
    } catch {
      return;
    }
    if (current === top) return;
  }
}

/**
 * Runs each binary once; kube-apiserver and kubectl must report `v<version>`, etcd `etcd` (when given) or at
 * least some etcd version. Returns what is wrong as `<binary>: <problem>`, or undefined.
 */
async function verifyBinaries(
  dir: string,
  expect: { version: string; etcd?: string },
): Promise<string | undefined> {
  const checks: { name: string; args: string[]; expect: RegExp | string }[] = [
    { name: 'etcd', args: ['--version'], expect: expect.etcd ?? /etcd Version: \d/ },
    { name: 'kube-apiserver', args: ['--version'], expect: `v${expect.version}` },
    { name: 'kubectl', args: ['version', '--client'], expect: `v${expect.version}` },
  ];
  for (const check of checks) {
    let output: string;
    try {
      const result = await promisify(execFile)(path.join(dir, check.name), check.args, { timeout: 30_000 });
      output = result.stdout + result.stderr;
    } catch (error) {
      return `${check.name}: ${(error as Error).message.split('\n')[0]}`;
    }
    const ok = typeof check.expect === 'string' ? output.includes(check.expect) : check.expect.test(output);
    if (!ok)
      return `${check.name}: \`${check.name} ${check.args.join(' ')}\` printed "${output.trim()}", expected ${check.expect}`;
  }
  return undefined;
}

/** Staging directories whose process no longer runs (killed with SIGKILL, machine restarted). */
async function removeAbandonedStaging(root: string): Promise<void> {
  for (const name of await readdir(root)) {
    const pid = /^\.(?:build|download)-.+-(\d+)-[0-9a-z]+$/.exec(name)?.[1];
    if (pid && !isRunning(Number(pid))) await rm(path.join(root, name), { recursive: true, force: true });
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/** The binaries absent from `dir`, or not executable there. */
export async function missingBinaries(dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (const name of BINARIES) if (!(await isExecutable(path.join(dir, name)))) missing.push(name);
  return missing;
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `name` on `env.PATH`, as `which` finds it. */
export async function findExecutable(name: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  for (const dir of (env['PATH'] ?? '').split(path.delimiter)) {
    if (dir && (await isExecutable(path.join(dir, name)))) return path.join(dir, name);
  }
  return undefined;
}
