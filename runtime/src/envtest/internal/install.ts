/**
 * Creating objects in envtest's apiserver, and saying why it failed. The documents go to the apiserver as
 * they were read, in JSON: client-node's typed API classes serialize from their own property names
 * (`x_kubernetes_int_or_string`, `_default`, `_enum`), so a CRD read from YAML lost its `default`, `enum`
 * and every `x-kubernetes-*` keyword on the way, and the apiserver of the tests enforced less than a real
 * cluster would.
 */
import { apiRequest, statusMessage, type ApiAccess } from './rest.js';

const STRICT = 'fieldValidation=Strict';

interface Named {
  metadata?: { name?: string; resourceVersion?: string };
}

/**
 * Creates `body` in the collection at `path` (`/apis/apiextensions.k8s.io/v1/customresourcedefinitions`);
 * when an object of that name exists (the same object in two files), replaces it, so that the later one
 * wins, as with kubectl apply. `what` names the kind in errors (`CRD`).
 */
export async function createOrReplace(
  access: ApiAccess,
  what: string,
  path: string,
  body: Named,
): Promise<void> {
  const name = body.metadata?.name ?? '';
  // Strict: a key the apiserver does not know (a typo, or a client-node model name such as
  // `x_kubernetes_preserve_unknown_fields`) is an error naming it, not a field silently dropped.
  let answer = await apiRequest(access, 'POST', `${path}?${STRICT}`, body);
  if (answer.status === 409) {
    const existing = await apiRequest(access, 'GET', `${path}/${name}`);
    const resourceVersion = (existing.body as Named | undefined)?.metadata?.resourceVersion;
    answer = await apiRequest(access, 'PUT', `${path}/${name}?${STRICT}`, {
      ...body,
      metadata: { ...body.metadata, resourceVersion },
    });
  }
  if (answer.status >= 300) {
    throw new Error(`installing ${what} ${name}: ${answer.status} ${statusMessage(answer)}`);
  }
}
