/** Installing CustomResourceDefinitions from YAML files and waiting until the apiserver serves them. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  ApiException,
  ApiextensionsV1Api,
  loadAllYaml,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';

/**
 * The CRDs in `paths`: each path is a directory (its `.yaml`, `.yml` and `.json` files, not recursive, in
 * name order) or a file. Documents of other kinds are ignored, as Go's envtest does.
 */
export function readCrds(
  paths: readonly string[],
  errorIfPathMissing: boolean,
): V1CustomResourceDefinition[] {
  const crds: V1CustomResourceDefinition[] = [];
  for (const given of paths) {
    let files: string[];
    try {
      files = statSync(given).isDirectory()
        ? readdirSync(given)
            .filter((name) => /\.(ya?ml|json)$/.test(name))
            .sort()
            .map((name) => path.join(given, name))
        : [given];
    } catch (error) {
      if (errorIfPathMissing) throw new Error(`CRD path ${given} does not exist`, { cause: error });
      continue;
    }
    for (const file of files) {
      let documents: unknown[];
      try {
        documents = loadAllYaml(readFileSync(file, 'utf8'));
      } catch (error) {
        throw new Error(`${file}: not valid YAML: ${(error as Error).message}`, { cause: error });
      }
      for (const doc of documents) {
        if (isCrd(doc)) crds.push(doc);
      }
    }
  }
  return crds;
}

function isCrd(doc: unknown): doc is V1CustomResourceDefinition {
  const object = doc as { apiVersion?: unknown; kind?: unknown } | null;
  return (
    object?.kind === 'CustomResourceDefinition' &&
    typeof object.apiVersion === 'string' &&
    object.apiVersion.startsWith('apiextensions.k8s.io/')
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

function describe(error: unknown): string {
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
