/** Installing CustomResourceDefinitions from YAML files and waiting until the apiserver serves them. */
import {
  ApiException,
  ApiextensionsV1Api,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
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
    const name = crd.metadata?.name ?? '';
    try {
      await api.createCustomResourceDefinition({ body: crd });
    } catch (error) {
      if (!(error instanceof ApiException) || error.code !== 409) {
        throw new Error(`installing CRD ${name}: ${describe(error)}`, { cause: error });
      }
      // The same CRD in two files: the later one wins, as with kubectl apply.
      const existing = await api.readCustomResourceDefinition({ name });
      await api.replaceCustomResourceDefinition({
        name,
        body: { ...crd, metadata: { ...crd.metadata, resourceVersion: existing.metadata?.resourceVersion } },
      });
    }
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

export function describe(error: unknown): string {
  if (error instanceof ApiException) {
    const body = error.body as { message?: string } | string | undefined;
    const message = typeof body === 'string' ? safeMessage(body) : body?.message;
    return `${error.code} ${message ?? ''}`.trim();
  }
  return error instanceof Error ? error.message : String(error);
}

function safeMessage(body: string): string {
  try {
    return (JSON.parse(body) as { message?: string }).message ?? body;
  } catch {
    return body;
  }
}
