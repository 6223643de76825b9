/**
 * Deciding, in a test file, whether its envtest tests run. On a laptop without the binaries they are
 * skipped with one line saying how to get them; in CI a skip must not pass for green, so there a missing
 * binary fails the run.
 */
import { findBinaryAssets } from './binaries.js';

export interface SkipOptions {
  /** Kubernetes version of the cached binaries. Default: DEFAULT_K8S_VERSION. */
  version?: string;
  /** Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** The tests start envtest's cluster mode: kube-controller-manager, kube-scheduler and kwok too. Default: false. */
  controllers?: boolean;
  /** Where the skip line goes. Default: console.warn. */
  warn?: (line: string) => void;
}

/**
 * Whether a missing binary must fail the tests: `KUBESMITH_REQUIRE_ENVTEST=1` (or `true`) forces it,
 * `KUBESMITH_REQUIRE_ENVTEST=0` (or `false`) turns it off, and otherwise `CI` decides, set as GitHub Actions,
 * GitLab CI and most CI systems set it (`CI=false` or `CI=0` count as unset).
 */
export function envtestRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  const explicit = flag(env['KUBESMITH_REQUIRE_ENVTEST']);
  return explicit ?? flag(env['CI']) ?? false;
}

/**
 * The directory holding etcd and kube-apiserver, or undefined after one warning line, for
 * `describe.skipIf(binaries === undefined)`. Throws the lookup's error instead when envtestRequired().
 */
export function binaryAssetsOrSkip(options: SkipOptions = {}): string | undefined {
  const env = options.env ?? process.env;
  try {
    return findBinaryAssets(undefined, {
      env,
      ...(options.version ? { version: options.version } : {}),
      ...(options.controllers ? { controllers: true } : {}),
    });
  } catch (error) {
    if (envtestRequired(env)) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(
        `${reason} The envtest tests must run here (CI or KUBESMITH_REQUIRE_ENVTEST is set): run ` +
          '`npx kubesmith envtest` before the tests, or set KUBESMITH_REQUIRE_ENVTEST=0 to skip them.',
        { cause: error },
      );
    }
    (options.warn ?? console.warn)(
      options.controllers
        ? 'skipping the envtest cluster-mode tests: no kube-controller-manager, kube-scheduler and kwok found; run `npx kubesmith envtest --with-controllers`'
        : 'skipping the envtest tests: no etcd and kube-apiserver found; run `npm run setup-envtest`',
    );
    return undefined;
  }
}

function flag(value: string | undefined): boolean | undefined {
  if (value === undefined || value === '') return undefined;
  return !['0', 'false', 'no'].includes(value.toLowerCase());
}
