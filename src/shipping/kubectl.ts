/**
 * The kubectl that renders kustomize for `build-installer` (and reads CRDs from a cluster for `import crd
 * --from-cluster`): the one `kubesmith envtest` provides (it has kustomize built in, `kubectl kustomize`),
 * else one on PATH.
 */
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import { defaultCacheRoot, findExecutable } from '../envtest/resolve.js';
import { DEFAULT_K8S_VERSION } from '../envtest/versions.js';

export async function findKubectl(
  env: NodeJS.ProcessEnv,
  why = 'it renders config/default (kubectl kustomize)',
): Promise<string> {
  const dirs = [
    env['KUBEBUILDER_ASSETS'],
    path.join(defaultCacheRoot(env), DEFAULT_K8S_VERSION),
    env['PATH'],
  ];
  const kubectl = await findExecutable('kubectl', { PATH: dirs.filter(Boolean).join(path.delimiter) });
  if (kubectl) return kubectl;
  throw new KubesmithError(`no kubectl found: ${why}`, {
    hint: 'run `npx kubesmith envtest` (it provides kubectl beside etcd and kube-apiserver), or install kubectl (https://kubernetes.io/docs/tasks/tools/)',
  });
}
