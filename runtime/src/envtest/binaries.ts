/**
 * Where the envtest binaries are: the same lookup as `kubesmith envtest`, minus the build. The CLI provides
 * the binaries (`npx kubesmith envtest`); tests only find them.
 */
import { accessSync, constants } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The Kubernetes version `kubesmith envtest` provides by default; keep in step with src/envtest/versions.ts. */
export const DEFAULT_K8S_VERSION = '1.37.2';

/** Raised when no directory holds the binaries envtest needs; the message says how to get them. */
export class EnvtestBinariesNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvtestBinariesNotFoundError';
  }
}

/** `$XDG_CACHE_HOME/kubesmith/envtest/<version>`, or `~/.cache/kubesmith/envtest/<version>`. */
export function cachedAssetsDirectory(
  version = DEFAULT_K8S_VERSION,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const xdg = env['XDG_CACHE_HOME'];
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env['HOME'] || os.homedir(), '.cache');
  return path.join(base, 'kubesmith', 'envtest', version);
}

const REQUIRED = ['etcd', 'kube-apiserver'] as const;

/** What cluster mode (`startEnvtest({ controllers: true })`) runs besides etcd and kube-apiserver. */
export const CONTROLLER_BINARIES = ['kube-controller-manager', 'kube-scheduler', 'kwok'] as const;

/**
 * The directory holding etcd and kube-apiserver (with `controllers`, also kube-controller-manager,
 * kube-scheduler and kwok): `explicit` when given (it must hold them), else KUBEBUILDER_ASSETS when it holds
 * them, else the kubesmith cache for `version`.
 */
export function findBinaryAssets(
  explicit?: string,
  options: { version?: string; env?: NodeJS.ProcessEnv; controllers?: boolean } = {},
): string {
  const env = options.env ?? process.env;
  const required = options.controllers ? [...REQUIRED, ...CONTROLLER_BINARIES] : REQUIRED;
  const tried: string[] = [];
  const candidates: [string, string][] = explicit
    ? [['binaryAssetsDirectory', explicit]]
    : [
        ...(env['KUBEBUILDER_ASSETS']
          ? [['KUBEBUILDER_ASSETS', env['KUBEBUILDER_ASSETS']] as [string, string]]
          : []),
        ['the kubesmith cache', cachedAssetsDirectory(options.version, env)],
      ];
  for (const [origin, dir] of candidates) {
    const missing = required.filter((name) => !isExecutable(path.join(dir, name)));
    if (missing.length === 0) return path.resolve(dir);
    tried.push(`${dir} (${origin}) lacks ${missing.join(' and ')}`);
  }
  if (options.controllers) {
    throw new EnvtestBinariesNotFoundError(
      `envtest cluster-mode binaries not found: ${tried.join('; ')}. Run \`npx kubesmith envtest --with-controllers\` ` +
        `to build kube-controller-manager, kube-scheduler and kwok beside etcd and kube-apiserver, then run the ` +
        `tests again (or set KUBEBUILDER_ASSETS to a directory holding all of them).`,
    );
  }
  throw new EnvtestBinariesNotFoundError(
    `envtest binaries not found: ${tried.join('; ')}. Run \`npx kubesmith envtest\` to build or locate ` +
      `etcd, kube-apiserver and kubectl, then run the tests again (or set KUBEBUILDER_ASSETS to a directory holding them).`,
  );
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
