/**
 * controller-runtime for `npm run bench:runtime`: builds the Go reconciler of test/bench/controller-runtime/
 * (its modules from the Go module proxy, pinned by its go.mod and go.sum) into kubesmith's cache, once per
 * version of its source: the binary's name carries a hash of main.go, go.mod and go.sum.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCE = fileURLToPath(new URL('./controller-runtime/', import.meta.url));
const FILES = ['main.go', 'go.mod', 'go.sum'];
/** Downloading controller-runtime's modules and compiling them takes 4 to 20 minutes on 2 busy CPUs. */
const BUILD_TIMEOUT_MS = 30 * 60 * 1000;

/** $XDG_CACHE_HOME/kubesmith/bench (else ~/.cache/kubesmith/bench): built benchmark contenders. */
function benchCacheDir() {
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cache, 'kubesmith', 'bench');
}

/** The controller-runtime version the source pins (go.mod). */
export function controllerRuntimeVersion() {
  const goMod = readFileSync(path.join(SOURCE, 'go.mod'), 'utf8');
  return /sigs\.k8s\.io\/controller-runtime (v\S+)/.exec(goMod)?.[1] ?? 'unknown';
}

/**
 * The path of the built reconciler, built with `go build` when the cache has none for this source.
 * Throws a one-line reason with what to do when it cannot.
 */
export function ensureControllerRuntimeBench() {
  const hash = createHash('sha256');
  for (const file of FILES)
    hash
      .update(file)
      .update('\0')
      .update(readFileSync(path.join(SOURCE, file)));
  const dir = benchCacheDir();
  const binary = path.join(dir, `controller-runtime-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(binary)) return binary;
  const go = spawnSync('go', ['version'], { encoding: 'utf8', timeout: 30_000 });
  if (go.error || go.status !== 0) {
    throw new Error(
      `the controller-runtime contender is not built in ${dir} and Go is not installed to build it\n` +
        'hint: install Go 1.26+ (https://go.dev/dl/), then run npm run bench:runtime again',
    );
  }
  mkdirSync(dir, { recursive: true });
  process.stderr.write(
    `building the controller-runtime contender (${controllerRuntimeVersion()}) into ${dir} (go build)...\n`,
  );
  const partial = `${binary}.partial-${process.pid}`;
  const build = spawnSync('go', ['build', '-o', partial, '.'], {
    cwd: SOURCE,
    // The module's go.sum pins every module: the build must not rewrite the checked-out source.
    env: { ...process.env, GOFLAGS: `${process.env.GOFLAGS ?? ''} -mod=readonly`.trim() },
    encoding: 'utf8',
    timeout: BUILD_TIMEOUT_MS,
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  if (build.error?.code === 'ETIMEDOUT' || build.signal) {
    rmSync(partial, { force: true });
    throw new Error(
      `go build of test/bench/controller-runtime took more than ${BUILD_TIMEOUT_MS / 60000} minutes\n` +
        'hint: check the access to the Go module proxy (GOPROXY), then run npm run bench:runtime again',
    );
  }
  if (build.status !== 0) {
    rmSync(partial, { force: true });
    throw new Error(
      `go build of test/bench/controller-runtime failed:\n${build.stderr}\n` +
        `hint: run go build in ${SOURCE} yourself to see why, then run npm run bench:runtime again`,
    );
  }
  renameSync(partial, binary);
  // Builds of earlier versions of the source are of no further use.
  for (const name of readdirSync(dir)) {
    if (name.startsWith('controller-runtime-') && name !== path.basename(binary))
      rmSync(path.join(dir, name));
  }
  return binary;
}
