/** Installing CustomResourceDefinitions from YAML files and waiting until the apiserver serves them. */
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { createOrReplace } from './install.js';
import { apiRequest, type ApiAccess } from './rest.js';
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

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** Creates (or replaces) each CRD, then waits until every one is Established. */
export async function installCrds(
  access: ApiAccess,
  crds: readonly V1CustomResourceDefinition[],
  timeoutMs: number,
): Promise<void> {
  for (const crd of crds) await createOrReplace(access, 'CRD', CRDS, crd);
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    const name = crd.metadata?.name ?? '';
    for (;;) {
      const current = await apiRequest(access, 'GET', `${CRDS}/${name}`);
      const conditions = (current.body as V1CustomResourceDefinition | undefined)?.status?.conditions ?? [];
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
