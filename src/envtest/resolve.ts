/**
 * Finds or provides the envtest binaries (etcd, kube-apiserver, kubectl), in this order:
 * 1. `KUBEBUILDER_ASSETS`, when it holds all three (same variable and names as Go's envtest);
 * 2. the per-version cache, `<cache root>/<version>`; the root is `--bin-dir`, else
 *    `$XDG_CACHE_HOME/kubesmith/envtest`, else `~/.cache/kubesmith/envtest`;
 * 3. a build from Go modules when `go` is on PATH, into that cache;
 * 4. otherwise one error saying how to get them.
 *
 * A cache entry is complete by construction: a build goes into a temporary directory beside the entry, each
 * binary is run once (`--version`), and only then is the directory renamed into place (one atomic rename).
 */
import { execFile } from 'node:child_process';
import { constants, rmSync } from 'node:fs';
import { access, mkdir, readdir, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { KubesmithError } from '../errors.js';
import { buildFromGoModules, type BuildRequest } from './build.js';
import { buildFailed, incompleteAssets, noBinaries } from './messages.js';
import { BINARIES, resolveRelease, type K8sRelease } from './versions.js';

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
}

export type BinarySource = 'KUBEBUILDER_ASSETS' | 'cache' | 'build';

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
  const release = resolveRelease(options.version);

  const assets = env['KUBEBUILDER_ASSETS'];
  if (assets) {
    const missing = await missingBinaries(assets);
    if (missing.length === 0)
      return { dir: path.resolve(assets), source: 'KUBEBUILDER_ASSETS', version: release.version };
    progress(incompleteAssets(assets, missing));
  }

  const root = path.resolve(options.binDir ?? defaultCacheRoot(env));
  const entry = path.join(root, release.version);
  if ((await missingBinaries(entry)).length === 0)
    return { dir: entry, source: 'cache', version: release.version };

  const go = await findExecutable('go', env);
  if (!go) {
    const { message, hint } = noBinaries(release.version, entry);
    throw new KubesmithError(message, { hint });
  }
  await buildIntoCache({ release, root, entry, go, env, progress, options });
  return { dir: entry, source: 'build', version: release.version };
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
  await mkdir(root, { recursive: true });
  await removeAbandonedBuilds(root);
  // The pid in the name lets a later run tell an abandoned build (its process is gone) from a running one.
  const staging = path.join(root, `.build-${release.version}-${process.pid}-${Date.now().toString(36)}`);
  await mkdir(staging);
  // A build interrupted by Ctrl-C still removes its staging directory, then dies of the signal as it would have.
  const onSignal = (signal: NodeJS.Signals): void => {
    rmSync(staging, { recursive: true, force: true, maxRetries: 3 });
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  const started = Date.now();
  try {
    const build = options.build ?? buildFromGoModules;
    await build({
      release,
      outDir: staging,
      go,
      env,
      progress,
      ...(options.detail ? { detail: options.detail } : {}),
    });
    await verifyBinaries(staging, release);
    try {
      await rename(staging, entry);
    } catch (error) {
      // Another run finished the same version first: keep its entry when complete.
      if ((await missingBinaries(entry)).length > 0) throw error;
    }
    progress(`built in ${Math.round((Date.now() - started) / 1000)} s: ${entry}`);
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    await rm(staging, { recursive: true, force: true });
  }
}

/** Runs each binary once and checks it reports the version it was built for. */
async function verifyBinaries(dir: string, release: K8sRelease): Promise<void> {
  const checks: { name: string; args: string[]; expect: string }[] = [
    { name: 'etcd', args: ['--version'], expect: release.etcd },
    { name: 'kube-apiserver', args: ['--version'], expect: `v${release.version}` },
    { name: 'kubectl', args: ['version', '--client'], expect: `v${release.version}` },
  ];
  for (const check of checks) {
    const binary = path.join(dir, check.name);
    let output: string;
    try {
      const result = await promisify(execFile)(binary, check.args, { timeout: 30_000 });
      output = result.stdout + result.stderr;
    } catch (error) {
      const { message, hint } = buildFailed(`verifying ${check.name}`, (error as Error).message);
      throw new KubesmithError(message, { hint });
    }
    if (!output.includes(check.expect)) {
      const { message, hint } = buildFailed(
        `verifying ${check.name}`,
        `\`${check.name} ${check.args.join(' ')}\` printed "${output.trim()}", expected ${check.expect}`,
      );
      throw new KubesmithError(message, { hint });
    }
  }
}

/** Staging directories of builds whose process no longer runs (killed with SIGKILL, machine restarted). */
export async function removeAbandonedBuilds(root: string): Promise<void> {
  for (const name of await readdir(root)) {
    const pid = /^\.build-.+-(\d+)-[0-9a-z]+$/.exec(name)?.[1];
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
