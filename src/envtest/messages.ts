/** The texts `kubesmith envtest` shows when it cannot provide the binaries. */

export interface Message {
  message: string;
  hint: string;
}

export function unsupportedVersion(requested: string, supported: readonly string[]): Message {
  return {
    message: `unsupported Kubernetes version "${requested}"; supported: ${supported.join(', ')}`,
    hint: 'pass --k8s-version with one of the versions above, e.g. --k8s-version 1.37.2',
  };
}

/** What went wrong with the download, as resolve.ts hands it over. */
export interface DownloadProblem {
  message: string;
  kind: 'unreachable' | 'invalid' | 'missing' | 'failed';
}

const INDEX_FLAG = '--index-url (or KUBESMITH_ENVTEST_INDEX_URL)';

function downloadHint(kind: DownloadProblem['kind']): string {
  switch (kind) {
    case 'unreachable':
      return `check the network, or point ${INDEX_FLAG} at a reachable copy of envtest-releases.yaml`;
    case 'invalid':
      return `point ${INDEX_FLAG} at a valid envtest-releases.yaml`;
    case 'missing':
      return 'pass --k8s-version with a version the index has';
    case 'failed':
      return `run again to retry the download, or point ${INDEX_FLAG} at another mirror`;
  }
}

/** Neither the download nor the Go build can provide the binaries. */
export function noBinaries(
  version: string,
  cacheDir: string,
  download: DownloadProblem,
  build: { buildable: boolean; supported: readonly string[] },
): Message {
  const why = build.buildable
    ? 'Go is not on PATH to build them'
    : `the Go build supports only ${build.supported.join(', ')}`;
  const buildHint = !build.buildable
    ? 'or pass a --k8s-version the Go build supports'
    : 'or install Go (https://go.dev/dl/) and run again to build them from Go modules';
  return {
    message: `no envtest binaries for Kubernetes ${version} in ${cacheDir}: ${download.message}, and ${why}`,
    hint:
      `${downloadHint(download.kind)}; ${buildHint}; or point KUBEBUILDER_ASSETS at binaries from setup-envtest ` +
      `(\`export KUBEBUILDER_ASSETS=$(setup-envtest use -p path ${version})\`)`,
  };
}

/** The version is neither in the index nor buildable. */
export function unknownVersion(
  version: string,
  indexUrl: string,
  nearby: readonly string[],
  supported: readonly string[],
): Message {
  const offered =
    nearby.length > 0 ? `nearby versions in the index: ${nearby.join(', ')}` : 'the index offers none';
  return {
    message:
      `Kubernetes ${version} is not in the envtest release index ${indexUrl} (${offered}) ` +
      `and the Go build supports only ${supported.join(', ')}`,
    hint: `pass --k8s-version with one of those versions, e.g. --k8s-version ${nearby[0] ?? '1.37.2'}`,
  };
}

/** The download failed but Go can build the binaries: one line, then the build starts. */
export function downloadFallsBack(reason: string): string {
  return `no download: ${reason}; building from Go modules instead`;
}

export function malformedVersion(requested: string): Message {
  return {
    message: `"${requested}" is not a Kubernetes version`,
    hint: 'pass --k8s-version X.Y.Z, e.g. --k8s-version 1.37.2',
  };
}

/** A cache entry exists but lacks binaries: it was not made by kubesmith (entries appear whole), so keep it. */
export function incompleteCacheEntry(dir: string, missing: readonly string[]): Message {
  return {
    message: `the envtest cache entry ${dir} is incomplete: ${missing.join(', ')} missing or not executable`,
    hint: `remove it (rm -rf '${dir}') and run again, or pass --bin-dir with another cache directory`,
  };
}

export function incompleteAssets(dir: string, missing: readonly string[]): string {
  return `KUBEBUILDER_ASSETS=${dir} lacks ${missing.join(', ')}; looking in the cache instead`;
}

export function buildFailed(step: string, detail: string): Message {
  return {
    message: `building the envtest binaries failed while ${step}: ${detail}`,
    hint: 'nothing was added to the cache; fix the problem above (network to the Go module proxy, disk space) and run again',
  };
}

export function noControllerBinaries(version: string, dir: string, missing: readonly string[]): Message {
  return {
    message:
      `no cluster-mode binaries for Kubernetes ${version}: ${dir} lacks ${missing.join(', ')}, ` +
      `and Go is not on PATH to build them`,
    hint:
      'install Go (https://go.dev/dl/) and run `kubesmith envtest --with-controllers` again, or put ' +
      'kube-controller-manager, kube-scheduler and kwok beside kube-apiserver in KUBEBUILDER_ASSETS',
  };
}

export function assetsLackControllers(dir: string, missing: readonly string[]): string {
  return `KUBEBUILDER_ASSETS=${dir} lacks ${missing.join(', ')}; using the cache, which holds all the binaries in one directory`;
}

const INSECURE_FLAG = '--allow-insecure-index';
const INDEX_OPTION = '--index-url (or KUBESMITH_ENVTEST_INDEX_URL)';

/** The index location is plain http, or not a scheme an index may have. */
export function refusedIndex(href: string, protocol: string): Message {
  if (protocol === 'http:')
    return {
      message:
        `refusing the envtest release index ${href}: it comes over plain http, so anyone on the way can ` +
        'change the binaries it names and the SHA-512 digests that check them',
      hint: `point ${INDEX_OPTION} at an https: URL or a local path, or pass ${INSECURE_FLAG} if you trust the network to that server`,
    };
  return {
    message: `refusing the envtest release index ${href}: an index is an https: URL or a local path, not ${protocol}`,
    hint: `point ${INDEX_OPTION} at an https: URL or a local path`,
  };
}

/** Reading the index took a way kubesmith refuses: a redirect from https to plain http. */
export function refusedIndexRedirect(href: string, why: string): Message {
  return {
    message: `refusing the envtest release index ${href}: ${why}`,
    hint: `point ${INDEX_OPTION} at an index served over https throughout`,
  };
}

/** The archive an index names may not be fetched: `why` says what is wrong with its link. */
export function refusedArchive(name: string, indexHref: string, why: string, insecure: boolean): Message {
  return {
    message: `refusing ${name} from the envtest release index ${indexHref}: ${why}`,
    hint: insecure
      ? `pass ${INSECURE_FLAG} if you trust the network to that server, or use an index whose links are https: URLs`
      : `fix the index's selfLink for ${name}, or point ${INDEX_OPTION} at another index; see "Which links an index may have" in docs/envtest.md`,
  };
}

/** With --allow-insecure-index: the warning for an index read over plain http. */
export function insecureIndex(href: string): string {
  return `the envtest release index ${href} comes over plain http (${INSECURE_FLAG}): the SHA-512 digests it gives prove nothing`;
}

/** With --allow-insecure-index: the warning for an archive downloaded over plain http. */
export function insecureArchive(name: string, href: string, indexIsSecure: boolean): string {
  const check = indexIsSecure ? 'the SHA-512 from the index still checks it' : 'nothing checks it';
  return `${name} comes over plain http from ${href} (${INSECURE_FLAG}): ${check}`;
}
