/** Installing CustomResourceDefinitions from YAML files and waiting until the apiserver serves them. */
import {
  ApiextensionsV1Api,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { createOrReplace } from './install.js';
import { isKind, readDocuments } from './manifests.js';

/**
 * The CRDs in `paths` (directories or files, see readDocuments). Documents of other kinds are ignored, as
 * Go's envtest does.
 */
export function readCrds(
  paths: readonly string[],
  errorIfPathMissing: boolean,
): V1CustomResourceDefinition[] {
  return readDocuments(paths, errorIfPathMissing, 'CRD').filter((doc): doc is V1CustomResourceDefinition =>
    isKind(doc, 'apiextensions.k8s.io', 'CustomResourceDefinition'),
  );
}

/** Creates (or replaces) each CRD, then waits until every one is Established. */
export async function installCrds(
  kubeConfig: KubeConfig,
  crds: readonly V1CustomResourceDefinition[],
  timeoutMs: number,
): Promise<void> {
  const api = kubeConfig.makeApiClient(ApiextensionsV1Api);
  for (const crd of crds) {
    await createOrReplace('CRD', crd, {
      create: (body) => api.createCustomResourceDefinition({ body }),
      read: (name) => api.readCustomResourceDefinition({ name }),
      replace: (name, body) => api.replaceCustomResourceDefinition({ name, body }),
    });
  }
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    const name = crd.metadata?.name ?? '';
    for (;;) {
      const current = await api.readCustomResourceDefinition({ name });
      const conditions = current.status?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) {
        const problem = conditions.find((c) => c.type === 'NamesAccepted' && c.status === 'False');
        throw new Error(
          `CRD ${name} was not Established within ${timeoutMs} ms` + (problem ? `: ${problem.message}` : ''),
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
