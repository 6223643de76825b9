/**
 * `kubesmith envtest --with-controllers`: the base binaries (as resolve.ts provides them) plus the three of
 * envtest's cluster mode, kube-controller-manager, kube-scheduler and kwok, all in one directory.
 *
 * Where the extras go: into the same per-version cache entry as the base binaries, one file at a time. One
 * directory holds everything cluster mode runs, so it is one KUBEBUILDER_ASSETS value (as Go's envtest and
 * setup-envtest use a single directory), `--print env` stays one line, and the controllers sit beside the
 * kube-apiserver of the same version (a sibling entry could pair them with another one). The base entry
 * stays valid throughout: its files are never touched, the extras are built into a staging directory beside
 * the entry, each is run once (`--version`), and only then renamed into the entry, one atomic rename per
 * file. The extras count as present only when all three are; a run killed between two renames leaves a
 * partial set that the next run completes.
 */
import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, rename } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { KubesmithError } from '../errors.js';
import { CONTROLLER_BINARIES, KWOK_VERSION, buildControllersFromGoModules } from './build-controllers.js';
import type { BuildRequest } from './build.js';
import { assetsLackControllers, buildFailed, noControllerBinaries } from './messages.js';
import {
  checkIndexOption,
  ensureEnvtestBinaries,
  findExecutable,
  missingBinaries,
  withStagingDirectory,
  type EnsureOptions,
  type EnsureResult,
} from './resolve.js';
import { resolveRelease, type K8sRelease } from './versions.js';

export interface EnsureClusterOptions extends EnsureOptions {
  /** Test seam: builds the cluster-mode binaries into an empty directory. Default: buildControllersFromGoModules. */
  buildControllers?: (request: BuildRequest) => Promise<void>;
}

/**
 * Makes sure one directory holds etcd, kube-apiserver, kubectl, kube-controller-manager, kube-scheduler and
 * kwok: KUBEBUILDER_ASSETS when it holds all six, else the cache entry of the version, built where needed.
 */
export async function ensureClusterBinaries(options: EnsureClusterOptions = {}): Promise<EnsureResult> {
  const env = options.env ?? process.env;
  const progress = options.progress ?? (() => {});
  const release = resolveRelease(options.version);
  checkIndexOption(options, env);

  const assets = env['KUBEBUILDER_ASSETS'];
  if (assets) {
    const missing = [...(await missingBinaries(assets)), ...(await missingControllers(assets))];
    if (missing.length === 0)
      return { dir: path.resolve(assets), source: 'KUBEBUILDER_ASSETS', version: release.version };
    progress(assetsLackControllers(assets, missing));
  }

  // The base binaries come from the cache (or are built into it) whatever KUBEBUILDER_ASSETS holds: cluster
  // mode needs all six in one directory.
  const { KUBEBUILDER_ASSETS: _ignored, ...withoutAssets } = env;
  const base = await ensureEnvtestBinaries({ ...options, env: withoutAssets });
  const missing = await missingControllers(base.dir);
  if (missing.length === 0) return base;

  const go = await findExecutable('go', env);
  if (!go) {
    const { message, hint } = noControllerBinaries(release.version, base.dir, missing);
    throw new KubesmithError(message, { hint });
  }
  await addControllers({ release, entry: base.dir, go, env, progress, options });
  return { dir: base.dir, source: 'build', version: release.version };
}

/** The cluster-mode binaries absent from `dir`, or not executable there. */
export async function missingControllers(dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (const name of CONTROLLER_BINARIES) {
    try {
      await access(path.join(dir, name), constants.X_OK);
    } catch {
      missing.push(name);
    }
  }
  return missing;
}

interface AddControllers {
  release: K8sRelease;
  entry: string;
  go: string;
  env: NodeJS.ProcessEnv;
  progress: (line: string) => void;
  options: EnsureClusterOptions;
}

async function addControllers({ release, entry, go, env, progress, options }: AddControllers): Promise<void> {
  const started = Date.now();
  // Named like resolve.ts's staging directories, so either command removes it once its process is gone.
  await withStagingDirectory(
    path.dirname(entry),
    `.build-${release.version}-controllers`,
    async (staging) => {
      const build = options.buildControllers ?? buildControllersFromGoModules;
      await build({
        release,
        outDir: staging,
        go,
        env,
        progress,
        ...(options.detail ? { detail: options.detail } : {}),
      });
      await verifyControllers(staging, release);
      // kwok last: a reader that sees it sees the other two (the check wants all three anyway).
      for (const name of CONTROLLER_BINARIES) {
        try {
          await rename(path.join(staging, name), path.join(entry, name));
        } catch (error) {
          const { message, hint } = buildFailed(`adding ${name} to ${entry}`, (error as Error).message);
          throw new KubesmithError(message, { hint });
        }
      }
    },
  );
  progress(`built in ${Math.round((Date.now() - started) / 1000)} s: ${entry}`);
}

/** Runs each program once and checks it reports the version it was built for. */
async function verifyControllers(dir: string, release: K8sRelease): Promise<void> {
  const expected: Record<(typeof CONTROLLER_BINARIES)[number], string> = {
    'kube-controller-manager': `v${release.version}`,
    'kube-scheduler': `v${release.version}`,
    kwok: `v${KWOK_VERSION}`,
  };
  for (const name of CONTROLLER_BINARIES) {
    let output: string;
    try {
      const result = await promisify(execFile)(path.join(dir, name), ['--version'], { timeout: 30_000 });
      output = result.stdout + result.stderr;
    } catch (error) {
      const { message, hint } = buildFailed(`verifying ${name}`, (error as Error).message);
      throw new KubesmithError(message, { hint });
    }
    if (!output.includes(expected[name])) {
      const { message, hint } = buildFailed(
        `verifying ${name}`,
        `\`${name} --version\` printed "${output.trim()}", expected ${expected[name]}`,
      );
      throw new KubesmithError(message, { hint });
    }
  }
}
