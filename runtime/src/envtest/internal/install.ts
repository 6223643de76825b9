/** Creating objects in envtest's apiserver, and saying why it failed. */
import { ApiException } from '@kubernetes/client-node';

interface Named {
  metadata?: { name?: string; resourceVersion?: string };
}

/** The client-node calls createOrReplace needs for one kind. */
export interface CreateReadReplace<T> {
  create(body: T): Promise<unknown>;
  read(name: string): Promise<T>;
  replace(name: string, body: T): Promise<unknown>;
}

/**
 * Creates `body`; when an object of that name exists (the same object in two files), replaces it, so that
 * the later one wins, as with kubectl apply. `what` names the kind in errors (`CRD`).
 */
export async function createOrReplace<T extends Named>(
  what: string,
  body: T,
  api: CreateReadReplace<T>,
): Promise<void> {
  const name = body.metadata?.name ?? '';
  try {
    await api.create(body);
  } catch (error) {
    if (!(error instanceof ApiException) || error.code !== 409) {
      throw new Error(`installing ${what} ${name}: ${describe(error)}`, { cause: error });
    }
    const existing = await api.read(name);
    await api.replace(name, {
      ...body,
      metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion },
    });
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
