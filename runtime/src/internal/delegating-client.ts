/**
 * The manager's client, as controller-runtime's: reads (`get`, `list`) from the informer cache, writes
 * to the API server. Kinds listed as uncached are read from the API server too. Writes are fenced: once
 * `fence` aborts (the manager lost its leader election Lease), a write is refused with
 * LeadershipLostError, and writes in flight are aborted with it.
 */
import type {
  ApplyOptions,
  Client,
  DeleteOptions,
  GetOptions,
  ListOptions,
  PatchOptions,
  PatchType,
  Reader,
  RequestOptions,
} from '../client.js';
import { LeadershipLostError } from '../errors.js';
import { kindKey, type ResourceKind } from '../kinds.js';

export class DelegatingClient implements Client {
  private readonly uncached: Set<string>;

  constructor(
    private readonly cache: Reader,
    private readonly api: Client,
    uncached: readonly ResourceKind<unknown>[] = [],
    private readonly fence?: AbortSignal,
  ) {
    this.uncached = new Set(uncached.map(kindKey));
  }

  /**
   * Runs a write with the fence among its abort signals; refuses it when the fence is down. A write the
   * fence aborts in flight fails with LeadershipLostError too (it may still have reached the API server:
   * an abort cannot take back what was sent).
   */
  private fenced<R, O extends RequestOptions>(
    what: string,
    options: O | undefined,
    write: (options: O) => Promise<R>,
  ): Promise<R> {
    const fence = this.fence;
    if (fence === undefined) return write(options ?? ({} as O));
    if (fence.aborted) return Promise.reject(new LeadershipLostError(what));
    const signal = options?.signal ? AbortSignal.any([options.signal, fence]) : fence;
    return write({ ...(options ?? ({} as O)), signal }).catch((err: unknown) => {
      throw fence.aborted ? new LeadershipLostError(what) : err;
    });
  }

  private readerFor(kind: ResourceKind<unknown>): Reader {
    return this.uncached.size > 0 && this.uncached.has(kindKey(kind)) ? this.api : this.cache;
  }

  get<T>(kind: ResourceKind<T>, name: string, namespace?: string, options?: GetOptions): Promise<T> {
    return this.readerFor(kind).get(kind, name, namespace, options);
  }

  list<T>(kind: ResourceKind<T>, options?: ListOptions): Promise<T[]> {
    return this.readerFor(kind).list(kind, options);
  }

  create<T>(kind: ResourceKind<T>, object: T, options?: RequestOptions): Promise<T> {
    return this.fenced(`create ${kind.kind}`, options, (o) => this.api.create(kind, object, o));
  }

  update<T>(kind: ResourceKind<T>, object: T, options?: RequestOptions): Promise<T> {
    return this.fenced(`update ${kind.kind}`, options, (o) => this.api.update(kind, object, o));
  }

  updateStatus<T>(kind: ResourceKind<T>, object: T, options?: RequestOptions): Promise<T> {
    return this.fenced(`update the status of ${kind.kind}`, options, (o) =>
      this.api.updateStatus(kind, object, o),
    );
  }

  patch<T>(
    kind: ResourceKind<T>,
    name: string,
    namespace: string,
    patch: unknown,
    options?: PatchType | PatchOptions,
  ): Promise<T> {
    const given: PatchOptions | undefined = typeof options === 'string' ? { type: options } : options;
    return this.fenced(`patch ${kind.kind} ${name}`, given, (o) =>
      this.api.patch(kind, name, namespace, patch, o),
    );
  }

  delete<T>(kind: ResourceKind<T>, name: string, namespace?: string, options?: DeleteOptions): Promise<void> {
    return this.fenced(`delete ${kind.kind} ${name}`, options, (o) =>
      this.api.delete(kind, name, namespace, o),
    );
  }

  apply<T>(kind: ResourceKind<T>, object: T, options: ApplyOptions): Promise<T> {
    return this.fenced(`apply ${kind.kind}`, options, (o) => this.api.apply(kind, object, o));
  }
}
