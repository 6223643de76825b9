/**
 * Provisioning of the envtest binaries (etcd, kube-apiserver, kubectl; with --with-controllers also
 * kube-controller-manager, kube-scheduler, kwok) for `kubesmith envtest`.
 */
export { buildFromGoModules, stagingModules, type BuildRequest } from './build.js';
export { buildControllersFromGoModules, CONTROLLER_BINARIES, KWOK_VERSION } from './build-controllers.js';
export { ensureClusterBinaries, missingControllers, type EnsureClusterOptions } from './controllers.js';
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
  compatibilityRun,
  compatibilityVersions,
  DEFAULT_K8S_VERSION,
  resolveRelease,
  supportedVersions,
  verifiedVersions,
  type K8sRelease,
} from './versions.js';
