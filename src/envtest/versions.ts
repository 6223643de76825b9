/**
 * The Kubernetes versions `kubesmith envtest` can build from Go modules, and the etcd release each one is
 * built with. Only versions verified end to end on a kube-apiserver built from Go modules are listed
 * (KUBERNETES.md). Downloads are not limited to these: any version in the envtest release index will do.
 */
import { KubesmithError } from '../errors.js';
import { unsupportedVersion } from './messages.js';

/** The version used when none is asked for: the newest verified one. */
export const DEFAULT_K8S_VERSION = '1.37.2';

/** The three binaries of a test control plane, named as Go's envtest (setup-envtest) names them. */
export const BINARIES = ['etcd', 'kube-apiserver', 'kubectl'] as const;
export type BinaryName = (typeof BINARIES)[number];

/**
 * Per Kubernetes minor version: the etcd release it is built with, and the patch release we verified. From
 * 1.35 on, the etcd minor is the one the Kubernetes release pins in its build/dependencies.yaml (1.37: 3.7.0,
 * 1.36: 3.6.8, 1.35: 3.6.5) at the newest patch the Go module proxy serves, so 1.35 and 1.36 share one etcd
 * build; 1.34 keeps the 3.5 etcd it was first verified with.
 */
const RELEASES: Readonly<Record<string, { etcd: string; verified: string }>> = {
  '1.37': { etcd: '3.7.3', verified: '1.37.2' },
  '1.36': { etcd: '3.6.16', verified: '1.36.3' },
  '1.35': { etcd: '3.6.16', verified: '1.35.4' },
  '1.34': { etcd: '3.5.21', verified: '1.34.2' },
};

export interface K8sRelease {
  /** `1.36.3`: no leading `v`. */
  version: string;
  major: number;
  minor: number;
  /** The etcd version built alongside, without a leading `v`. */
  etcd: string;
}

/** Parses `1.36.3` or `v1.36.3`; throws a KubesmithError listing the supported versions otherwise. */
export function resolveRelease(requested: string = DEFAULT_K8S_VERSION): K8sRelease {
  const release = buildableRelease(requested);
  if (!release) {
    const { message, hint } = unsupportedVersion(requested, supportedVersions());
    throw new KubesmithError(message, { hint });
  }
  return release;
}

/** `1.36.3` for `1.36.3` or `v1.36.3`; undefined when it is not such a version. */
export function normalizeVersion(requested: string): string | undefined {
  const match = /^v?(\d+\.\d+\.\d+)$/.exec(requested.trim());
  return match?.[1];
}

/** The release the Go build can make for `requested`, or undefined when its minor version is not supported. */
export function buildableRelease(requested: string): K8sRelease | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)$/.exec(requested.trim());
  const release = match ? RELEASES[`${match[1]}.${match[2]}`] : undefined;
  if (!match || !release) return undefined;
  return {
    version: `${match[1]}.${match[2]}.${match[3]}`,
    major: Number(match[1]),
    minor: Number(match[2]),
    etcd: release.etcd,
  };
}

/**
 * The releases besides the default that `npm test` runs the compatibility suite on (`npm run test:compat`:
 * the runtime's core integration tests and the golden project's), oldest first. The oldest supported minor
 * alone: it is the largest gap from the default, so it finds the most (each version costs CI a cold Go
 * build of 4-5 min and a run of about a minute); `--versions all` adds the minors between.
 */
const COMPATIBILITY_VERSIONS = ['1.34.2'];

export function compatibilityVersions(): string[] {
  return [...COMPATIBILITY_VERSIONS];
}

/** Every supported minor's verified patch, oldest first (the default included): `--versions all`. */
export function verifiedVersions(): string[] {
  return Object.values(RELEASES)
    .map((r) => r.verified)
    .sort((a, b) => minorOf(a) - minorOf(b));
}

/**
 * The releases a compatibility run covers: compatibilityVersions() without `spec`, verifiedVersions() for
 * `all`, else the comma-separated versions of `spec` in its order (each one the Go build supports; a
 * repeated one runs once). Throws resolveRelease's error for a version it cannot build.
 */
export function compatibilityRun(spec?: string): string[] {
  if (spec === undefined) return compatibilityVersions();
  if (spec.trim() === 'all') return verifiedVersions();
  return [...new Set(spec.split(',').map((v) => resolveRelease(v.trim()).version))];
}

function minorOf(version: string): number {
  return Number(version.split('.')[1]);
}

/** `1.36.x (verified: 1.36.3)` ..., newest first, for messages and --help. */
export function supportedVersions(): string[] {
  return Object.entries(RELEASES).map(([minor, r]) => `${minor}.x (verified: ${r.verified}, etcd ${r.etcd})`);
}
