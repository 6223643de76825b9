/**
 * The list and watch of one kind into a store of its objects, telling handlers what changed: client-go's
 * Reflector and its informer's store in one. The list is a stream by default, as client-go's reflector
 * streams it since Kubernetes 1.35 (WatchListClient): one watch with `sendInitialEvents=true`, whose first
 * events are the objects and whose bookmark `k8s.io/initial-events-end` says the state is complete. The API
 * server serves it from its watch cache, at a resourceVersion at least as recent as a consistent list's,
 * without reading etcd or holding the list in memory; the same watch then goes on. A server that refuses
 * (WatchList off, 422), a stream that breaks before its end or carries no event within the list's request
 * timeout falls back, for that attempt, to a list in pages of 500 with continue tokens (client-go's pager)
 * and a watch from its resourceVersion, as client-go falls back.
 * The Reflector replaced client-node's ListWatch, for what the runtime benchmark measured on 10,000 objects:
 * - each page of the list is stored and delivered as it arrives, while the API server reads the next one;
 *   ListWatch waited for the whole list and then handled every object, 30 to 40 ms on the way to a
 *   synced cache;
 * - `start()` resolves once the list is delivered, and the watch connects meanwhile (client-go's
 *   informers have synced once the list is in their store); ListWatch also waited for the watch's answer,
 *   10 to 18 ms more;
 * - update handlers get the object it replaces, so the informer keeps no second map of the objects.
 * Recovery stays with its owner (supervisedInformer): a failed list or watch is reported to `error`, and
 * the next `start()` resumes the watch from the last resourceVersion, or lists again when it has none.
 * What it keeps of each object, and gives out for it, is its `store`'s choice (a metadata-only informer's
 * keeps the metadata alone: internal/lean-metadata.ts).
 */
import type { ListOptions, HttpClient } from './client.js';
import { ApiError } from './errors.js';
import { objectKey, type ResourceKind } from './kinds.js';
import { IDENTITY_STORE, type ObjectStore } from './internal/lean-metadata.js';
import type { KubernetesObject } from './types.js';

type ObjectHandler = (object: KubernetesObject, oldObject?: KubernetesObject, initial?: boolean) => void;
type ErrorHandler = (err?: unknown) => void;

/** What a watch needs: HttpClient.watch, as watchWithBookmarks (cache.ts) wraps it. */
export interface Watcher {
  watch(
    path: string,
    query: Record<string, string>,
    onEvent: (type: string, object: unknown) => void,
    done: (err: unknown) => void,
    options?: { metadataOnly?: boolean },
  ): Promise<{ abort(): void }>;
}

export interface ReflectorOptions {
  client: HttpClient;
  kind: ResourceKind<KubernetesObject>;
  /** The kind's collection path (with its namespace, when one is watched): where the watch goes. */
  path: string;
  watcher: Watcher;
  /**
   * The list's namespace, selectors and page size, and whether it reads metadata only; the watch has the
   * same selectors and reads metadata only too.
   */
  list: Pick<ListOptions, 'namespace' | 'labelSelector' | 'fieldSelector' | 'pageSize' | 'metadataOnly'>;
  /** Applied to each listed object before it is stored (a watched one: the watcher applies it). */
  transform?: (object: KubernetesObject) => KubernetesObject;
  /**
   * What is kept of each object, and given out for it (to handlers, get and list). Default: the object
   * itself.
   */
  store?: ObjectStore;
  /** Stream the list (see above) instead of reading it in pages: the cache's `streamingList`. */
  streamingList: boolean;
  /**
   * How long a streamed list may go without an event (its answer included) before it is given up for a
   * list in pages: the bound a list request has (the client's `timeoutMs`).
   */
  streamTimeoutMs: number;
  /** Told why a streamed list fell back to pages. Default: nobody. */
  onFallback?: (reason: unknown) => void;
}

/** The annotation of the bookmark that ends a streamed list's objects. */
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/** One watch opened: cancelled, its events and end are ignored and its request aborted. */
interface WatchAttempt {
  cancelled: boolean;
  request?: { abort(): void };
}

export class Reflector {
  /** namespace ('' for cluster-scoped objects) -> name -> what the store keeps of the object */
  private readonly objects = new Map<string, Map<string, unknown>>();
  private readonly store: ObjectStore;
  private readonly handlers = {
    add: [] as ObjectHandler[],
    update: [] as ObjectHandler[],
    delete: [] as ObjectHandler[],
    error: [] as ErrorHandler[],
  };
  /** Where the watch resumes from; '' lists again first. */
  private resourceVersion = '';
  private listed = false;
  /** Each start() is a run; the callbacks of an older run (stopped, restarted) are ignored. */
  private run = 0;
  private stopped = true;
  private request: { abort(): void } | undefined;
  private listing: AbortController | undefined;
  /** Settles the streamed list in flight (true: its run is over), for stop() and a new start(). */
  private streaming: ((done: boolean) => void) | undefined;

  constructor(private readonly options: ReflectorOptions) {
    this.store = options.store ?? IDENTITY_STORE;
  }

  on(event: 'add' | 'update' | 'delete', handler: ObjectHandler): void;
  on(event: 'error', handler: ErrorHandler): void;
  on(event: keyof Reflector['handlers'], handler: ObjectHandler | ErrorHandler): void {
    (this.handlers[event] as (ObjectHandler | ErrorHandler)[]).push(handler);
  }

  /**
   * Lists (unless a watch can resume from the last resourceVersion), delivering each object; then starts
   * watching, and resolves without waiting for the watch to connect. A failure goes to the `error`
   * handlers, and start() still resolves.
   */
  async start(): Promise<void> {
    this.stopped = false;
    this.streaming?.(true);
    await this.listAndWatch(++this.run);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.run++;
    this.streaming?.(true);
    this.listing?.abort(new Error('the informer stopped'));
    this.listing = undefined;
    this.request?.abort();
    this.request = undefined;
  }

  get(name: string, namespace?: string): KubernetesObject | undefined {
    const stored = this.objects.get(namespace ?? '')?.get(name);
    return stored === undefined ? undefined : this.store.unpack(stored);
  }

  list(namespace?: string): KubernetesObject[] {
    const all: KubernetesObject[] = [];
    if (namespace) {
      for (const stored of this.objects.get(namespace)?.values() ?? []) all.push(this.store.unpack(stored));
      return all;
    }
    for (const objects of this.objects.values()) {
      for (const stored of objects.values()) all.push(this.store.unpack(stored));
    }
    return all;
  }

  /** Whether a list has succeeded: the store has held every object once. */
  hasListed(): boolean {
    return this.listed;
  }

  /** The resourceVersion the next watch starts from ('' when the next start lists). */
  latestResourceVersion(): string {
    return this.resourceVersion;
  }

  /**
   * Lists in pages, storing each object as its page arrives. On a relist (the store not empty), the
   * objects the list no longer has are deleted at its end. A continue token that expired before the last
   * page (410, after an etcd compaction) starts over with one unpaginated list, as client-go's pager does.
   */
  private async relist(run: number): Promise<void> {
    const { client, kind, list, transform } = this.options;
    const listing = new AbortController();
    this.listing = listing;
    const read = async (pageSize: number | undefined) => {
      const seen = this.objects.size > 0 ? new Set<string>() : undefined;
      const { resourceVersion } = await client.listEach(
        kind,
        { ...list, ...(pageSize !== undefined ? { pageSize } : {}), signal: listing.signal },
        (item) => {
          if (run !== this.run) return;
          const object = transform ? transform(item) : item;
          seen?.add(objectKey(object.metadata?.namespace, object.metadata?.name ?? ''));
          this.put(object);
        },
      );
      if (run !== this.run) return;
      if (seen) this.deleteUnseen(seen);
      this.resourceVersion = resourceVersion ?? '';
      this.listed = true;
    };
    try {
      await read(list.pageSize);
    } catch (err) {
      if (!isGone(err) || run !== this.run) throw err;
      await read(0);
    } finally {
      if (this.listing === listing) this.listing = undefined;
    }
  }

  /** Watches from the last resourceVersion. */
  private watch(run: number): Promise<void> {
    return this.openWatch(
      run,
      { resourceVersion: this.resourceVersion },
      (type, object) => this.onEvent(type, object),
      (err) => this.watchEnded(run, err),
    );
  }

  /**
   * Opens a watch with `query` (plus the list's selectors). Its events and its end (a failure to open
   * included) reach `onEvent` and `onEnd` while `run` is the current run and `attempt` is not cancelled.
   */
  private async openWatch(
    run: number,
    query: Record<string, string>,
    onEvent: (type: string, object: KubernetesObject) => void,
    onEnd: (err: unknown) => void,
    attempt: WatchAttempt = { cancelled: false },
  ): Promise<void> {
    const live = () => run === this.run && !attempt.cancelled;
    const { labelSelector, fieldSelector, metadataOnly } = this.options.list;
    if (labelSelector) query['labelSelector'] = labelSelector;
    if (fieldSelector) query['fieldSelector'] = fieldSelector;
    let request: { abort(): void };
    // A watch that fails at once ends (and may be followed by the next one) before its request is returned.
    let ended = false;
    try {
      request = await this.options.watcher.watch(
        this.options.path,
        query,
        (type, object) => {
          if (live()) onEvent(type, object as KubernetesObject);
        },
        (err) => {
          ended = true;
          if (live()) {
            this.request = undefined;
            onEnd(err);
          }
        },
        metadataOnly ? { metadataOnly } : {},
      );
    } catch (err) {
      if (live() && !this.stopped) onEnd(err);
      return;
    }
    if (ended) return;
    if (live() && !this.stopped) this.request = attempt.request = request;
    else request.abort();
  }

  private cancel(attempt: WatchAttempt): void {
    attempt.cancelled = true;
    if (attempt.request && this.request === attempt.request) this.request = undefined;
    attempt.request?.abort();
  }

  /**
   * The list as a stream: stores each object of the initial events as it arrives and, at the bookmark
   * that ends them, deletes what a relist no longer has and takes the bookmark's resourceVersion; the
   * watch then goes on. Resolves true once the initial events are in (or the run is over), false when the
   * watch failed or ended before: the caller lists in pages instead.
   */
  private watchList(run: number): Promise<boolean> {
    const seen = this.objects.size > 0 ? new Set<string>() : undefined;
    const attempt: WatchAttempt = { cancelled: false };
    const timeoutMs = this.options.streamTimeoutMs;
    let initial = true;
    let quiet: ReturnType<typeof setTimeout> | undefined;
    return new Promise<boolean>((resolve) => {
      const settle = (done: boolean) => {
        clearTimeout(quiet);
        if (this.streaming === settle) this.streaming = undefined;
        initial = false;
        resolve(done);
      };
      const fallBack = (reason: unknown) => {
        this.options.onFallback?.(reason);
        settle(false);
      };
      // A list request has a timeout; a watch has none of its own (a connection that never answers would
      // hold the informer's start for the watch's whole timeoutSeconds): the stream gets the list's,
      // counted from its last event.
      const waitForEvents = () => {
        clearTimeout(quiet);
        quiet = setTimeout(() => {
          this.cancel(attempt);
          fallBack(new Error(`no event from the API server within ${timeoutMs} ms`));
        }, timeoutMs);
        quiet.unref?.();
      };
      this.streaming = settle;
      waitForEvents();
      void this.openWatch(
        run,
        { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan', resourceVersion: '' },
        (type, object) => {
          if (!initial) return this.onEvent(type, object);
          waitForEvents();
          if (type === 'ADDED') {
            seen?.add(objectKey(object.metadata?.namespace, object.metadata?.name ?? ''));
            this.put(object);
          } else if (type === 'BOOKMARK' && object.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true') {
            if (seen) this.deleteUnseen(seen);
            this.resourceVersion = object.metadata.resourceVersion ?? '';
            this.listed = true;
            settle(true);
          }
        },
        (err) => {
          if (!initial) return this.watchEnded(run, err);
          fallBack(err ?? new Error('the watch ended before its initial events did'));
        },
        attempt,
      );
    });
  }

  private onEvent(type: string, object: KubernetesObject): void {
    switch (type) {
      case 'ADDED':
      case 'MODIFIED':
        this.put(object);
        break;
      case 'DELETED':
        this.remove(object);
        break;
      case 'BOOKMARK':
        break;
      case 'ERROR':
        // A Status; 410: the resourceVersion is too old to resume from, and the server ends the watch.
        if ((object as { code?: number }).code === 410) this.resourceVersion = '';
        return;
      default:
        return;
    }
    this.resourceVersion = object.metadata?.resourceVersion || this.resourceVersion;
  }

  /**
   * The server ended the watch (its timeoutSeconds passed): watch again from where it was. A 410 (the
   * resourceVersion expired) lists again first; any other failure goes to the `error` handlers.
   */
  private watchEnded(run: number, err: unknown): void {
    if (this.stopped) return;
    if (isGone(err)) this.resourceVersion = '';
    else if (err) return this.fail(err);
    void this.listAndWatch(run);
  }

  /**
   * Lists unless it can resume, then starts the watch: resolves without waiting for it to connect. A
   * streamed list resolves once its objects are in.
   */
  private async listAndWatch(run: number): Promise<void> {
    if (!this.resourceVersion && this.options.streamingList) {
      if (await this.watchList(run)) return;
      if (run !== this.run || this.stopped) return;
    }
    try {
      if (!this.resourceVersion) await this.relist(run);
    } catch (err) {
      if (run === this.run && !this.stopped) this.fail(err);
      return;
    }
    if (run === this.run && !this.stopped) void this.watch(run);
  }

  /**
   * Stores `object`: an add, or an update unless it is the version already stored. An add before the
   * first list is complete is part of it (`initial`); after, a change (the objects a relist finds new
   * were created while the watch was away).
   */
  private put(object: KubernetesObject): void {
    const namespace = object.metadata?.namespace ?? '';
    const name = object.metadata?.name ?? '';
    let objects = this.objects.get(namespace);
    if (objects === undefined) this.objects.set(namespace, (objects = new Map()));
    const stored = objects.get(name);
    if (stored === undefined) {
      const packed = this.store.pack(object);
      objects.set(name, packed);
      const initial = !this.listed;
      const given = this.store.unpack(packed);
      for (const handler of this.handlers.add) handler(given, undefined, initial);
      return;
    }
    const old = this.store.unpack(stored);
    const version = old.metadata?.resourceVersion;
    if (version && version === object.metadata?.resourceVersion) return;
    const packed = this.store.pack(object);
    objects.set(name, packed);
    const given = this.store.unpack(packed);
    for (const handler of this.handlers.update) handler(given, old);
  }

  private remove(object: KubernetesObject): void {
    const namespace = object.metadata?.namespace ?? '';
    const objects = this.objects.get(namespace);
    if (!objects?.delete(object.metadata?.name ?? '')) return;
    if (objects.size === 0) this.objects.delete(namespace);
    for (const handler of this.handlers.delete) handler(object);
  }

  private deleteUnseen(seen: Set<string>): void {
    for (const [namespace, objects] of [...this.objects]) {
      for (const [name, stored] of [...objects]) {
        if (!seen.has(objectKey(namespace, name))) this.remove(this.store.unpack(stored));
      }
    }
  }

  private fail(err: unknown): void {
    for (const handler of this.handlers.error) handler(err);
  }
}

/**
 * A 410 Gone (Expired) answer: a resourceVersion or a continue token too old, after an etcd compaction.
 * HttpClient's lists and watches both fail with an ApiError.
 */
function isGone(err: unknown): boolean {
  return err instanceof ApiError && err.statusCode === 410;
}
