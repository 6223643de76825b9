/**
 * Informers: per kind, list then watch, keeping the objects in memory and telling handlers what changed.
 * The manager shares one informer per kind between its controllers. The informer factory is injectable:
 * production uses a Reflector (reflector.ts) per kind; tests feed events by hand (ManualInformer, in
 * @kubesmith/runtime/testing).
 */
import { performance } from 'node:perf_hooks';
import type { KubeConfig } from '@kubernetes/client-node';
import { HttpClient, resourcePath, type ListOptions, type Reader } from './client.js';
import { realClock, type Clock } from './clock.js';
import { ApiError } from './errors.js';
import { deepCopy } from './internal/deepcopy.js';
import { fieldMatcher, labelMatcher } from './internal/selector.js';
import { kindKey, objectKey, type ResourceKind } from './kinds.js';
import type { Logger } from './logger.js';
import { Reflector, type Watcher } from './reflector.js';
import type { KubernetesObject } from './types.js';

/**
 * Called with the object; for `update`, also with the object as the informer saw it before (if it did);
 * for `add`, `initial` is true when the object came with the informer's first list, not from a change
 * (client-go's isInInitialList): controllers queue those at low priority.
 * An exception is logged and costs that one call: the informer's other handlers still get the object.
 */
export type ObjectHandler = (
  object: KubernetesObject,
  oldObject?: KubernetesObject,
  initial?: boolean,
) => void;

export interface Informer {
  on(event: 'add' | 'update' | 'delete', handler: ObjectHandler): void;
  /** Lists, delivers every object as `add`, then watches. Resolves once the first list is delivered. */
  start(): Promise<void>;
  stop(): Promise<void>;
  hasSynced(): boolean;
  get(name: string, namespace?: string): KubernetesObject | undefined;
  list(namespace?: string): KubernetesObject[];
}

export interface InformerOptions {
  /** Watch one namespace only. */
  namespace?: string;
  /** Only objects with matching labels (`app=web,tier!=cache`). */
  labelSelector?: string;
  /** Only objects with matching fields (`metadata.name=x`; which fields depends on the kind). */
  fieldSelector?: string;
  /**
   * Keep `metadata.managedFields` on cached objects. Default: false: they are dropped as each object
   * arrives (controller-runtime's TransformStripManagedFields), so objects read from the cache have none.
   * They are server-side apply's bookkeeping, often half of a small object, and a controller rarely reads
   * them; one that does sets this for its kind (`cache: { byObject: [{ kind, keepManagedFields: true }] }`).
   */
  keepManagedFields?: boolean;
}

/** The objects of one kind a cache holds: controller-runtime's `cache.Options.ByObject`. */
export interface KindSelector extends Omit<InformerOptions, 'namespace'> {
  kind: ResourceKind<unknown>;
}

export type InformerFactory = (kind: ResourceKind<unknown>, options: InformerOptions) => Informer;

/**
 * What the informer needs of a list and watch (a Reflector; a seam for tests). Update handlers get the
 * object replaced as their second argument.
 */
export interface ListWatchLike {
  on(event: 'add' | 'update' | 'delete', handler: ObjectHandler): void;
  on(event: 'error', handler: (err?: unknown) => void): void;
  /**
   * Lists (unless it can resume from a resourceVersion) and starts watching; resolves once the list is
   * delivered. Errors go to `error`.
   */
  start(): Promise<void>;
  stop(): Promise<void>;
  get(name: string, namespace?: string): KubernetesObject | undefined;
  /** A new array (the caller may keep it) of the stored objects. */
  list(namespace?: string): KubernetesObject[];
}

/**
 * What the manager's cache holds and how it fills (controller-runtime's `cache.Options`): the manager's
 * `cache` option. `withDefaults` (options.ts) applies the defaults.
 */
export interface CacheOptions {
  /**
   * Cache, and so watch and reconcile, one namespace only (namespaced kinds): the generated projects'
   * WATCH_NAMESPACE. Default: every namespace.
   */
  namespace?: string;
  /**
   * Per kind, cache (and so watch and reconcile) only the objects matching these label and field
   * selectors, and whether to keep their managedFields (controller-runtime's `ByObject`): an object that
   * stops matching leaves the cache as a delete event. Default: every object of every kind.
   */
  byObject?: readonly KindSelector[];
  /**
   * Stream each informer's list: one watch with `sendInitialEvents` served from the API server's watch
   * cache, as client-go's informers do since Kubernetes 1.35 (WatchListClient). `false` reads it in pages
   * with continue tokens, as a server that refuses the stream (WatchList off; before 1.27) is read anyway.
   * Default: true.
   */
  streamingList?: boolean;
  /** Objects per page of an informer's list read in pages. Default: 500 (client-go's pager). */
  listPageSize?: number;
}

/** What the informers of a real API server need: the manager's resolved options (withDefaults). */
export interface InformerFactoryConfig {
  cache: { streamingList: boolean; listPageSize: number };
  /** The timeout of each list request, and how long a streamed list may go without an event. */
  client: { timeoutMs: number };
  clock: Clock;
  /** Watch parameters (tests shorten them). Default: watchWithBookmarks's. */
  watch?: WatchTimeouts;
}

/**
 * Informers on a real API server: a Reflector (a streamed list, or a list in pages, then a watch, into a
 * store) per kind. An informer has synced once its first list has been delivered; `start()` waits for that
 * (or for `stop()`).
 * After an error (a failed list or watch, a watch presumed dead, a watch the server closed at once) the
 * Reflector stops; it is started again with an exponential, jittered and capped backoff
 * (supervisedInformer), and resumes its watch from the last resourceVersion.
 */
export function clientNodeInformerFactory(
  kubeConfig: KubeConfig,
  logger: Logger,
  config: InformerFactoryConfig,
): InformerFactory {
  const client = new HttpClient(kubeConfig, { timeoutMs: config.client.timeoutMs });
  return (kind, options) => {
    const namespace = kind.namespaced ? options.namespace : undefined;
    const transform = options.keepManagedFields ? undefined : stripManagedFields;
    const log = logger.child({ kind: kind.kind });
    const reflector = new Reflector({
      client,
      kind: kind as ResourceKind<KubernetesObject>,
      path: resourcePath(kind, namespace),
      watcher: watchWithBookmarks(client, {
        ...config.watch,
        ...(transform ? { transform } : {}),
      }),
      list: {
        ...(namespace ? { namespace } : {}),
        ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
        ...(options.fieldSelector ? { fieldSelector: options.fieldSelector } : {}),
        pageSize: config.cache.listPageSize,
      },
      ...(transform ? { transform } : {}),
      streamingList: config.cache.streamingList,
      streamTimeoutMs: config.client.timeoutMs,
      onFallback: (reason) =>
        log.info('the API server did not stream the list; reading it in pages', { reason }),
    });
    return supervisedInformer(reflector, () => reflector.hasListed(), log, config.clock);
  };
}

/**
 * Drops `metadata.managedFields`, in the object itself (it was just parsed from the API's answer), by
 * giving it a metadata without them. Not with `delete`: the API server writes a custom resource's keys in
 * alphabetical order, so managedFields sits in the middle of its metadata, and deleting a property that is
 * not the last one turns the object into a slow dictionary for V8. Every read and every deep copy of the
 * cached object would pay for that: in the runtime benchmark, copies took 3 us instead of 0.3.
 */
export function stripManagedFields<T extends KubernetesObject>(object: T): T {
  if (object.metadata?.managedFields === undefined) return object;
  const { managedFields: _dropped, ...metadata } = object.metadata;
  object.metadata = metadata;
  return object;
}

export interface WatchTimeouts {
  /** The shortest server-side `timeoutSeconds` of a watch; each watch adds up to half of it at random. Default: 30. */
  timeoutSeconds?: number;
  /** Applied to each object a watch event carries, before the informer stores it. Default: none. */
  transform?: (object: KubernetesObject) => KubernetesObject;
  /** A number in [0, 1) for that jitter. Default: Math.random. */
  random?: () => number;
  /**
   * How long after its timeoutSeconds a watch the server has not ended is given up as dead. Default:
   * 10 000 ms.
   */
  graceMs?: number;
}

/** A watch that ends by itself sooner than this after it opened, having carried nothing, is an error. */
const SHORT_WATCH_MS = 1_000;

/**
 * The watches of `source` (HttpClient.watch) with client-go's reflector parameters and its two safeguards:
 * - `allowWatchBookmarks`, so that the resourceVersion a watch resumes from stays recent (the Reflector
 *   takes it from BOOKMARK events) and a reconnection seldom needs a relist;
 * - `timeoutSeconds` between 30 and 45 s (jittered, so that informers do not reconnect in step), so that
 *   the server ends every watch soon and the Reflector opens a new one from where it was. A watch still
 *   open `graceMs` after its timeout has lost its server without its connection closing (a network
 *   partition, a vanished NAT entry): it ends with an error, so that the informer reconnects. A silent
 *   connection is so noticed within 55 s. (client-go takes 5 to 10 minutes for its timeout, and counts
 *   on HTTP/2 pings to notice a dead connection; an HTTP/1.1 watch has no pings.)
 * - a watch that the server ends within a second, carrying no event, ends with an error (client-go's
 *   "very short watch"), so that the informer backs off instead of reconnecting at once, in a loop.
 */
export function watchWithBookmarks(source: Watcher, options: WatchTimeouts = {}): Watcher {
  const random = options.random ?? Math.random;
  const minTimeoutSeconds = options.timeoutSeconds ?? 30;
  const graceMs = options.graceMs ?? 10_000;
  const transform = options.transform;
  return {
    watch: async (path, queryParams, callback, done) => {
      const timeoutSeconds = Math.max(1, Math.floor(minTimeoutSeconds * (1 + random() / 2)));
      const opened = performance.now();
      let events = 0;
      let finished = false;
      const finish = (err: unknown) => {
        if (finished) return;
        finished = true;
        clearTimeout(deadline);
        const lasted = performance.now() - opened;
        if (!err && events === 0 && lasted < SHORT_WATCH_MS) {
          err = new Error(
            `very short watch: the watch of ${path} was closed after ${Math.round(lasted)} ms without an event`,
          );
        }
        done(err);
      };
      const deadline = setTimeout(
        () => {
          const ms = timeoutSeconds * 1000 + graceMs;
          finish(
            new Error(`the watch of ${path} was not ended by the server within ${ms} ms: presumed dead`),
          );
        },
        timeoutSeconds * 1000 + graceMs,
      );
      deadline.unref();
      const controller = await source.watch(
        path,
        { ...queryParams, allowWatchBookmarks: 'true', timeoutSeconds: String(timeoutSeconds) },
        (type, object) => {
          events++;
          // A BOOKMARK carries only a resourceVersion; an ERROR a Status: neither is stored.
          const stored = transform && (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED');
          callback(type, stored ? transform(object as KubernetesObject) : object);
        },
        finish,
      );
      // Ended by the deadline while connecting: nobody else will abort this connection.
      if (finished) controller.abort();
      return controller;
    },
  };
}

/**
 * Restarts of a failing informer, as client-go's reflector backs off (NewExponentialBackoffManager(800ms,
 * 30s, 2min, 2.0, 1.0)): 800 ms doubling, the doubling capped at 30 s, each delay lengthened by up to as
 * much again at random (jitter 1.0), so at the cap restarts come every 30 to 60 s.
 */
const RESTART_BASE_MS = 800;
const RESTART_CAP_MS = 30_000;
/**
 * A backoff starts over once this long has passed since the last failure: the informer has been healthy
 * (client-go: no delay asked for in 2 minutes).
 */
const RESTART_RESET_MS = 120_000;

/**
 * An Informer over a ListWatch: synced once `listed()` says a list succeeded, restarted after errors (a
 * failed list, a failed watch, a watch that ended at once) with client-go's backoff, one for the list and
 * the watch alike: 800 ms doubling, capped at 30 s, jittered up to twice that, growing while failures keep
 * coming and starting over after 2 minutes without one. A restart that merely reconnects does not reset it:
 * a watch that fails again at once must not make the informer reconnect in a tight loop. Exported for
 * tests.
 */
export function supervisedInformer(
  listWatch: ListWatchLike,
  listed: () => boolean,
  log: Logger,
  clock: Clock = realClock,
  random: () => number = Math.random,
): Informer {
  let synced = false;
  let stopped = false;
  let failures = 0;
  let lastFailure = -Infinity;
  let retry: unknown;
  let settle: (() => void) | undefined;
  const firstSync = new Promise<void>((resolve) => (settle = resolve));
  const handlers: Record<'add' | 'update' | 'delete', ObjectHandler[]> = { add: [], update: [], delete: [] };
  // Each handler on its own: one that throws must not keep the object from the handlers after it, nor
  // escape into the Reflector (from a list it would fail the informer's start, from a watch event the
  // watch).
  const deliver = (
    event: 'add' | 'update' | 'delete',
    object: KubernetesObject,
    old?: KubernetesObject,
    initial?: boolean,
  ) => {
    for (const handler of handlers[event]) {
      try {
        handler(object, old, initial);
      } catch (error) {
        log.error('event handler failed', {
          event,
          namespace: object.metadata?.namespace,
          name: object.metadata?.name,
          error,
        });
      }
    }
  };
  listWatch.on('add', (object, _old, initial) => deliver('add', object, undefined, initial));
  listWatch.on('update', (object, old) => deliver('update', object, old));
  listWatch.on('delete', (object) => deliver('delete', object));
  const run = async () => {
    await listWatch.start();
    // start() resolves after a failed list too (the failure goes to `error`).
    if (!stopped && listed() && !synced) {
      synced = true;
      settle?.();
    }
  };
  listWatch.on('error', (err?: unknown) => {
    if (stopped) return;
    const now = clock.now();
    if (now - lastFailure > RESTART_RESET_MS) failures = 0;
    lastFailure = now;
    const base = Math.min(RESTART_BASE_MS * 2 ** failures++, RESTART_CAP_MS);
    const delay = Math.round(base * (1 + random()));
    log.warn('list or watch failed, restarting', { error: err, delayMs: delay });
    clock.clearTimeout(retry);
    retry = clock.setTimeout(() => {
      if (stopped) return;
      run().catch((error: unknown) => log.error('cannot restart the list and watch', { error }));
    }, delay);
  });
  return {
    on: (event, handler) => handlers[event].push(handler),
    start: async () => {
      stopped = false;
      await run();
      await firstSync;
    },
    stop: async () => {
      stopped = true;
      clock.clearTimeout(retry);
      settle?.();
      await listWatch.stop();
    },
    hasSynced: () => synced,
    get: (name, ns) => listWatch.get(name, ns),
    list: (ns) => listWatch.list(ns),
  };
}

/** The cache key of `object`: `namespace/name`, or `name`. */
export function keyOf(object: KubernetesObject): string {
  return objectKey(object.metadata?.namespace, object.metadata?.name ?? '');
}

/** What an InformerCache holds (the manager's resolved `cache` option), and how long a read waits. */
export interface InformerCacheConfig {
  namespace: string | undefined;
  byObject: readonly KindSelector[];
  /** How long a read waits for an informer it started to sync. */
  syncTimeoutMs: number;
  clock: Clock;
}

/**
 * One informer per kind, shared by every controller of a manager; and the reader the manager's client
 * reads through, as controller-runtime's informer cache: `get` and `list` answer from memory with deep
 * copies, starting (and waiting for) the informer of a kind read for the first time.
 */
export class InformerCache implements Reader {
  private readonly informers = new Map<string, Informer>();
  /** Per informer: its start(), which resolves once it has synced (or was stopped). */
  private readonly syncs = new Map<string, Promise<void>>();
  private started = false;
  /** Informers a read started after the cache had started: not part of readiness. */
  private readonly startedByReads = new Set<string>();
  private readonly selectors = new Map<string, KindSelector>();
  private readonly namespace: string | undefined;
  private readonly syncTimeoutMs: number;
  private readonly clock: Clock;

  constructor(
    private readonly factory: InformerFactory,
    config: InformerCacheConfig,
  ) {
    for (const selector of config.byObject) this.selectors.set(kindKey(selector.kind), selector);
    this.namespace = config.namespace || undefined;
    this.syncTimeoutMs = config.syncTimeoutMs;
    this.clock = config.clock;
  }

  informerFor(kind: ResourceKind<unknown>): Informer {
    const key = kindKey(kind);
    let informer = this.informers.get(key);
    if (!informer) {
      const { kind: _kind, ...selector } = this.selectors.get(key) ?? { kind };
      informer = this.factory(kind, {
        ...(this.namespace ? { namespace: this.namespace } : {}),
        ...selector,
      });
      this.informers.set(key, informer);
      if (this.started) {
        this.startedByReads.add(key);
        this.startInformer(key, informer);
      }
    }
    return informer;
  }

  private startInformer(key: string, informer: Informer): Promise<void> {
    const started = informer.start();
    // A read waits on it; a failure shows as an informer that never syncs.
    this.syncs.set(
      key,
      started.catch(() => undefined),
    );
    return started;
  }

  async start(): Promise<void> {
    this.started = true;
    await Promise.all([...this.informers].map(([key, informer]) => this.startInformer(key, informer)));
  }

  async stop(): Promise<void> {
    this.started = false;
    await Promise.all([...this.informers.values()].map((informer) => informer.stop()));
  }

  /**
   * Whether the informers the cache started with (the controllers' watches) have synced: /readyz. An
   * informer a read started later does not count, so a read of a kind whose CRD is missing fails that
   * read, not the operator's readiness.
   */
  hasSynced(): boolean {
    return this.unsynced().length === 0;
  }

  /** The kinds (`apiVersion/Kind`) whose informers have not synced yet (those hasSynced counts). */
  unsynced(): string[] {
    return [...this.informers]
      .filter(([key, informer]) => !this.startedByReads.has(key) && !informer.hasSynced())
      .map(([key]) => key);
  }

  /**
   * A deep copy of the cached object. NotFound (an ApiError) when the cache does not hold it, which with
   * a cache selector for the kind includes objects that exist but do not match it. A namespaced object
   * outside the cache's namespace is an error (not NotFound): the cache cannot know.
   */
  get<T>(kind: ResourceKind<T>, name: string, namespace?: string): Promise<T> {
    // The common case, once the kind's informer has synced, without an await: a reconcile reads through
    // here, and each await is a few microtasks more per reconcile.
    try {
      if (kind.namespaced && this.namespace !== undefined) {
        this.checkNamespace('get', kind, namespace ?? '', `${namespace ?? ''}/${name}`);
      }
      const informer = this.started ? this.informers.get(kindKey(kind)) : undefined;
      if (informer?.hasSynced()) return Promise.resolve(this.copyOf(informer, kind, name, namespace));
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return this.syncedInformerFor(kind).then((synced) => this.copyOf(synced, kind, name, namespace));
  }

  /** A deep copy of the cached object; NotFound when the informer does not hold it. */
  private copyOf<T>(informer: Informer, kind: ResourceKind<T>, name: string, namespace?: string): T {
    const object = informer.get(name, kind.namespaced ? namespace : undefined);
    if (!object) {
      const selector = this.selectors.get(kindKey(kind));
      const held = selector ? selectorText(selector) : '';
      const scope = held ? ` (the cache holds only ${held})` : '';
      throw new ApiError(
        404,
        'NotFound',
        `${kind.plural}${kind.group ? `.${kind.group}` : ''} "${name}" not found${scope}`,
      );
    }
    return deepCopy(object) as T;
  }

  /**
   * Deep copies of the cached objects that match `options` (label selectors `=`, `==`, `!=`, `in`,
   * `notin`, exists, `!`; field selectors `=`, `==`, `!=` on any dotted path), sorted by namespace and
   * name. `pageSize` does not apply. No namespace lists every namespace the cache holds.
   */
  async list<T>(kind: ResourceKind<T>, options: ListOptions = {}): Promise<T[]> {
    const namespace = kind.namespaced ? options.namespace || undefined : undefined;
    if (namespace !== undefined) this.checkNamespace('list', kind, namespace, `namespace ${namespace}`);
    const labels = labelMatcher(options.labelSelector);
    const fields = fieldMatcher(options.fieldSelector);
    const informer = await this.syncedInformerFor(kind);
    return informer
      .list(namespace)
      .filter((object) => labels(object) && fields(object))
      .sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0))
      .map((object) => deepCopy(object) as T);
  }

  private checkNamespace(verb: string, kind: ResourceKind<unknown>, namespace: string, what: string): void {
    if (this.namespace === undefined || namespace === this.namespace) return;
    throw new Error(
      `cannot ${verb} ${kind.kind} ${what} from the cache: it holds namespace "${this.namespace}" only ` +
        "(the manager's namespace); read other namespaces with mgr.apiReader",
    );
  }

  /** The informer of `kind`, started and synced: controller-runtime starts one on the first read. */
  private async syncedInformerFor(kind: ResourceKind<unknown>): Promise<Informer> {
    if (!this.started) {
      throw new Error(
        `the cache is not started: cannot read ${kind.kind} objects before mgr.start() ` +
          '(read them once mgr.ready() has resolved, or with mgr.apiReader)',
      );
    }
    const informer = this.informerFor(kind);
    if (informer.hasSynced()) return informer;
    let timer: unknown;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = this.clock.setTimeout(() => resolve('timeout'), this.syncTimeoutMs);
    });
    const outcome = await Promise.race([this.syncs.get(kindKey(kind)), timeout]);
    this.clock.clearTimeout(timer);
    if (outcome === 'timeout') {
      throw new Error(
        `timed out after ${this.syncTimeoutMs} ms waiting for the cache of ${kindKey(kind)} to sync ` +
          '(is the CRD installed, and may the operator list and watch it?)',
      );
    }
    if (!informer.hasSynced()) throw new Error(`the cache stopped before ${kindKey(kind)} synced`);
    return informer;
  }
}

function selectorText(selector: KindSelector): string {
  return [
    selector.labelSelector ? `labels ${selector.labelSelector}` : '',
    selector.fieldSelector ? `fields ${selector.fieldSelector}` : '',
  ]
    .filter(Boolean)
    .join(' and ');
}
