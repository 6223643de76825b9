/** Provisioning of the envtest binaries (etcd, kube-apiserver, kubectl) for `kubesmith envtest`. */
export { buildFromGoModules, stagingModules, type BuildRequest } from './build.js';
export {
  defaultCacheRoot,
  ensureEnvtestBinaries,
  findExecutable,
  missingBinaries,
  type BinarySource,
  type EnsureOptions,
  type EnsureResult,
} from './resolve.js';
export {
  BINARIES,
  DEFAULT_K8S_VERSION,
  resolveRelease,
  supportedVersions,
  type K8sRelease,
} from './versions.js';
