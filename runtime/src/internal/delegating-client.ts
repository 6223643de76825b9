/**
 * The manager's client, as controller-runtime's: reads (`get`, `list`) from the informer cache, writes
 * to the API server. Kinds listed as uncached are read from the API server too.
 */
import type {
  ApplyOptions,
  Client,
  DeleteOptions,
  ListOptions,
  PatchOptions,
  PatchType,
  Reader,
  RequestOptions,
} from '../client.js';
import type { ResourceKind } from '../kinds.js';

export class DelegatingClient implements Client {
  private readonly uncached: Set<string>;

  constructor(
    private readonly cache: Reader,
    private readonly api: Client,
    uncached: readonly ResourceKind<unknown>[] = [],
  ) {
    this.uncached = new Set(uncached.map((kind) => `${kind.apiVersion}/${kind.kind}`));
  }

  private readerFor(kind: ResourceKind<unknown>): Reader {
    return this.uncached.has(`${kind.apiVersion}/${kind.kind}`) ? this.api : this.cache;
  }

  get<T>(kind: ResourceKind<T>, name: string, namespace?: string, options?: RequestOptions): Promise<T> {
    return this.readerFor(kind).get(kind, name, namespace, options);
  }

  list<T>(kind: ResourceKind<T>, options?: ListOptions): Promise<T[]> {
    return this.readerFor(kind).list(kind, options);
  }

  create<T>(kind: ResourceKind<T>, object: T, options?: RequestOptions): Promise<T> {
    return this.api.create(kind, object, options);
  }

  update<T>(kind: ResourceKind<T>, object: T, options?: RequestOptions): Promise<T> {
    return this.api.update(kind, object, options);
  }

  updateStatus<T>(kind: ResourceKind<T>, object: T, options?: RequestOptions): Promise<T> {
    return this.api.updateStatus(kind, object, options);
  }

  patch<T>(
    kind: ResourceKind<T>,
    name: string,
    namespace: string,
    patch: unknown,
    options?: PatchType | PatchOptions,
  ): Promise<T> {
    return this.api.patch(kind, name, namespace, patch, options);
  }

  delete<T>(kind: ResourceKind<T>, name: string, namespace?: string, options?: DeleteOptions): Promise<void> {
    return this.api.delete(kind, name, namespace, options);
  }

  apply<T>(kind: ResourceKind<T>, object: T, options: ApplyOptions): Promise<T> {
    return this.api.apply(kind, object, options);
  }
}
