/**
 * The manager's client, as controller-runtime's: reads (`get`, `list`) from the informer cache, writes
 * to the API server. Kinds listed as uncached are read from the API server too. Writes are fenced: once
 * `fence` aborts (the manager lost its leader election Lease), a write is refused with
 * LeadershipLostError, and writes in flight are aborted with it. A manager that stops gives its Lease up
 * only after `closeWrites()`: new writes refused, those in flight finished.
 *
 * With a WriteTracker (the manager's `client.readYourWrites`, on by default), each write of a cached kind
 * is remembered until the informer has seen it, and a cached read waits for the writes it would miss: a
 * `get` for the object's, a `list` for its kind's in its namespace scope (write-tracker.ts).
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
import type { WriteTracker } from './write-tracker.js';

export class DelegatingClient implements Client {
  private readonly uncached: Set<string>;
  /** Fenced writes sent and not yet answered (closeWrites waits for them). */
  private readonly inFlight = new Set<Promise<unknown>>();
  private writesClosed = false;

  constructor(
    private readonly cache: Reader,
    private readonly api: Client,
    uncached: readonly ResourceKind<unknown>[] = [],
    private readonly fence?: AbortSignal,
    private readonly tracker?: WriteTracker,
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
    if (fence.aborted || this.writesClosed) return Promise.reject(new LeadershipLostError(what));
    const signal = options?.signal ? AbortSignal.any([options.signal, fence]) : fence;
    const written = write({ ...(options ?? ({} as O)), signal }).catch((err: unknown) => {
      throw fence.aborted ? new LeadershipLostError(what) : err;
    });
    this.inFlight.add(written);
    const settled = () => this.inFlight.delete(written);
    written.then(settled, settled);
    return written;
  }

  /**
   * Refuses every write from now on (LeadershipLostError) and resolves once the fenced writes in flight
   * have their answers (each is bounded by its own timeout). A stopping leader calls it before it gives
   * its Lease up: aborting those writes instead would not take back what was sent, and a write that lands
   * after the next leader's would undo it.
   */
  async closeWrites(): Promise<void> {
    this.writesClosed = true;
    await Promise.allSettled([...this.inFlight]);
  }

  private readerFor(kind: ResourceKind<unknown>): Reader {
    return this.uncached.size > 0 && this.uncached.has(kindKey(kind)) ? this.api : this.cache;
  }

  /** The tracker, for a kind read from the cache (a live read sees every write). */
  private trackerFor(kind: ResourceKind<unknown>): WriteTracker | undefined {
    return this.tracker && this.readerFor(kind) === this.cache ? this.tracker : undefined;
  }

  get<T>(kind: ResourceKind<T>, name: string, namespace?: string, options?: GetOptions): Promise<T> {
    const reader = this.readerFor(kind);
    // The metadata-only informer is not tracked: it is read as it is. Most reads find no write pending:
    // they pay for one size check.
    if (this.tracker?.size && reader === this.cache && !options?.metadataOnly) {
      const ns = kind.namespaced ? (namespace ?? '') : '';
      const waiting = this.tracker.waitForObject(kindKey(kind), ns, name);
      if (waiting) return waiting.then(() => reader.get(kind, name, namespace, options));
    }
    return reader.get(kind, name, namespace, options);
  }

  list<T>(kind: ResourceKind<T>, options?: ListOptions): Promise<T[]> {
    const reader = this.readerFor(kind);
    if (this.tracker?.size && reader === this.cache && !options?.metadataOnly) {
      const ns = kind.namespaced ? options?.namespace || undefined : undefined;
      const waiting = this.tracker.waitForKind(kindKey(kind), ns);
      if (waiting) return waiting.then(() => reader.list(kind, options));
    }
    return reader.list(kind, options);
  }

  /** Remembers what a write returned, for the reads after it. */
  private recorded<T>(kind: ResourceKind<T>, written: Promise<T>): Promise<T> {
    const tracker = this.trackerFor(kind);
    if (!tracker) return written;
    return written.then((object) => {
      tracker.recordWrite(kindKey(kind), object);
      return object;
    });
  }

  create<T>(kind: ResourceKind<T>, object: T, options?: RequestOptions): Promise<T> {
    return this.fenced(`create ${kind.kind}`, options, (o) =>
      this.recorded(kind, this.api.create(kind, object, o)),
    );
  }

  update<T>(kind: ResourceKind<T>, object: T, options?: RequestOptions): Promise<T> {
    return this.fenced(`update ${kind.kind}`, options, (o) =>
      this.recorded(kind, this.api.update(kind, object, o)),
    );
  }

  updateStatus<T>(kind: ResourceKind<T>, object: T, options?: RequestOptions): Promise<T> {
    return this.fenced(`update the status of ${kind.kind}`, options, (o) =>
      this.recorded(kind, this.api.updateStatus(kind, object, o)),
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
      this.recorded(kind, this.api.patch(kind, name, namespace, patch, o)),
    );
  }

  delete<T>(kind: ResourceKind<T>, name: string, namespace?: string, options?: DeleteOptions): Promise<void> {
    const tracker = this.trackerFor(kind);
    return this.fenced(`delete ${kind.kind} ${name}`, options, async (o) => {
      await this.api.delete(kind, name, namespace, o);
      tracker?.recordDelete(kindKey(kind), kind.namespaced ? (namespace ?? '') : '', name);
    });
  }

  apply<T>(kind: ResourceKind<T>, object: T, options: ApplyOptions): Promise<T> {
    return this.fenced(`apply ${kind.kind}`, options, (o) =>
      this.recorded(kind, this.api.apply(kind, object, o)),
    );
  }
}
