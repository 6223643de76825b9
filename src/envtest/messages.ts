/** The texts `kubesmith envtest` shows when it cannot provide the binaries. */

export interface Message {
  message: string;
  hint: string;
}

export function unsupportedVersion(requested: string, supported: readonly string[]): Message {
  return {
    message: `unsupported Kubernetes version "${requested}"; supported: ${supported.join(', ')}`,
    hint: 'pass --k8s-version with one of the versions above, e.g. --k8s-version 1.36.3',
  };
}

export function noBinaries(version: string, cacheDir: string): Message {
  return {
    message:
      `no envtest binaries for Kubernetes ${version}: KUBEBUILDER_ASSETS is not set, ${cacheDir} ` +
      `holds no complete set, and Go is not on PATH to build them`,
    hint:
      'install Go (https://go.dev/dl/) and run `kubesmith envtest` again to build etcd, kube-apiserver and ' +
      'kubectl from Go modules, or point KUBEBUILDER_ASSETS at binaries from setup-envtest ' +
      '(`export KUBEBUILDER_ASSETS=$(setup-envtest use -p path ' +
      version +
      ')`)',
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
