/**
 * Informers: per kind, list then watch, keeping the objects in memory and telling handlers what changed.
 * The manager shares one informer per kind between its controllers. The informer factory is injectable:
 * production uses a Reflector (reflector.ts) per kind; tests feed events by hand (ManualInformer, in
 * @kubesmith/runtime/testing).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { HttpClient, resourcePath, type GetOptions, type ListOptions, type Reader } from './client.js';
import { realClock, type Clock } from './clock.js';
import { ApiError } from './errors.js';
import { callerOutsideRuntime } from './internal/caller.js';
import { deepCopy } from './internal/deepcopy.js';
import { FieldIndexes, type IndexFunction } from './internal/field-index.js';
import {
  LabelSets,
  leanMetadata,
  metadataOnlyStore,
  StringInterner,
  type ObjectStore,
} from './internal/lean-metadata.js';
import { estimateTotalBytes } from './internal/object-size.js';
import { fieldMatcher, labelMatcher } from './internal/selector.js';
import { kindKey, objectKey, type ResourceKind } from './kinds.js';
import type { ClusterAccess } from './kubeconfig.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
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
  /**
   * Cache the objects' metadata only (PartialObjectMetadata lists and watches): names, labels,
   * annotations, owner references, finalizers; no spec, status or data. Default: false.
   */
  metadataOnly?: boolean;
}

/**
 * The objects of one kind a cache holds: controller-runtime's `cache.Options.ByObject`. It applies to the
 * kind's full informer and to its metadata-only one alike.
 */
export interface KindSelector extends Omit<InformerOptions, 'namespace' | 'metadataOnly'> {
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
  /**
   * Log a warning, once per kind, when a read of `mgr.client` opens a cluster-wide informer for a kind
   * no controller declared (`for`, `owns`, `watches`) nor indexed: such an informer lists and watches
   * every object of the kind in the cluster and holds them in memory for as long as the manager runs.
   * Default: true.
   */
  warnOnUndeclaredInformer?: boolean;
  /**
   * Fail a read of `mgr.client` whose kind has no informer yet, instead of opening one
   * (controller-runtime's `ReaderFailOnMissingInformer`): the cache then holds only the kinds declared
   * by the controllers and by `mgr.cache.indexField`. Default: false.
   */
  readerFailOnMissingInformer?: boolean;
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
export function reflectorInformerFactory(
  access: KubeConfig | ClusterAccess,
  logger: Logger,
  config: InformerFactoryConfig,
): InformerFactory {
  const client = new HttpClient(access, { timeoutMs: config.client.timeoutMs });
  // One table of each for every kind: namespaces, label values and owners repeat across kinds too.
  const tables: SharingTables = { strings: new StringInterner(), labelSets: new LabelSets() };
  return (kind, options) => {
    const namespace = kind.namespaced ? options.namespace : undefined;
    const { transform, store } = informerStorage(kind, options, tables);
    const log = logger.child({ kind: kind.kind, ...(options.metadataOnly ? { metadataOnly: true } : {}) });
    const reflector = new Reflector({
      client,
      kind: kind as ResourceKind<KubernetesObject>,
      path: resourcePath(kind, namespace),
      watcher: watchWithBookmarks(client, { ...config.watch, transform }),
      list: {
        ...(namespace ? { namespace } : {}),
        ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
        ...(options.fieldSelector ? { fieldSelector: options.fieldSelector } : {}),
        ...(options.metadataOnly ? { metadataOnly: true } : {}),
        pageSize: config.cache.listPageSize,
      },
      transform,
      ...(store ? { store } : {}),
      streamingList: config.cache.streamingList,
      streamTimeoutMs: config.client.timeoutMs,
      onFallback: (reason) =>
        log.info('the API server did not stream the list; reading it in pages', { reason }),
    });
    return supervisedInformer(reflector, () => reflector.hasListed(), log, config.clock);
  };
}

/** What the informers of one cache share between their objects (internal/lean-metadata.ts). */
interface SharingTables {
  strings: StringInterner;
  labelSets: LabelSets;
}

/**
 * What an informer applies to each object before storing it, and how it stores it:
 * - `transform`: the object's metadata made lean (leanMetadata: managedFields dropped unless kept,
 *   repeated strings shared, every property in the object); a metadata-only informer's objects cut down
 *   to `{ apiVersion, kind, metadata }` of the kind (the API server sends meta.k8s.io/v1
 *   PartialObjectMetadata, or, when it cannot, the whole object); a full object's apiVersion and kind the
 *   kind's own strings (an object from a watch has a copy of its own). The object was just parsed from
 *   the API's answer and is changed in place.
 * - `store`: a metadata-only informer keeps the metadata alone, with labels objects shared
 *   (metadataOnlyStore); a full one the objects themselves (none given).
 */
function informerStorage(
  kind: ResourceKind<unknown>,
  options: InformerOptions,
  tables: SharingTables,
): { transform: (object: KubernetesObject) => KubernetesObject; store?: ObjectStore } {
  const keepManagedFields = options.keepManagedFields ?? false;
  const { strings } = tables;
  if (options.metadataOnly) {
    return {
      transform: (object) => ({
        apiVersion: kind.apiVersion,
        kind: kind.kind,
        metadata: leanMetadata(object.metadata ?? {}, strings, keepManagedFields),
      }),
      store: metadataOnlyStore(kind, tables.labelSets),
    };
  }
  return {
    transform: (object) => {
      if (object.apiVersion === kind.apiVersion) object.apiVersion = kind.apiVersion;
      if (object.kind === kind.kind) object.kind = kind.kind;
      if (object.metadata) object.metadata = leanMetadata(object.metadata, strings, keepManagedFields);
      return object;
    },
  };
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
    watch: async (path, queryParams, callback, done, watchOptions) => {
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
        watchOptions,
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
  /** Where failing index functions and informers opened by reads are told. Default: nowhere. */
  logger?: Logger;
  /** Where the per-informer gauges (objects, estimated bytes) are registered. Default: nowhere. */
  metrics?: Metrics;
  /** CacheOptions's `warnOnUndeclaredInformer`. Default: true. */
  warnOnUndeclaredInformer?: boolean;
  /** CacheOptions's `readerFailOnMissingInformer`. Default: false. */
  readerFailOnMissingInformer?: boolean;
  /**
   * Told of every object the full informers report (`apiVersion/Kind`; `deleted` for a delete), before any
   * controller's handler: read-your-own-writes' bookkeeping. Default: nobody.
   */
  observe?: (kind: string, object: KubernetesObject, deleted: boolean) => void;
}

/** Which of a kind's two informers: the full objects' (default), or the metadata-only one's. */
export interface InformerChoice {
  /** The kind's metadata-only informer, a cache of its own beside the full one. Default: false. */
  metadataOnly?: boolean;
}

/** One informer of the cache, as `mgr.cache.stats()` reports it (and /metrics, per informer). */
export interface InformerStats {
  /** `apiVersion/Kind` */
  kind: string;
  metadataOnly: boolean;
  /** The objects it holds. */
  objects: number;
  /**
   * An estimate of the heap they take (internal/object-size.ts says how it is made): above 1,000
   * objects, from an even sample of 1,000.
   */
  estimatedBytes: number;
  /** The names of its field indexes. */
  indexes: string[];
}

/** An informer of the cache, with what it caches and its field indexes. */
interface CachedInformer {
  key: string;
  kind: ResourceKind<unknown>;
  metadataOnly: boolean;
  informer: Informer;
  indexes: FieldIndexes;
}

/** The cache key of a kind's informer: `apiVersion/Kind`, with ` (metadata)` for the metadata-only one. */
function informerKey(kind: ResourceKind<unknown>, metadataOnly: boolean | undefined): string {
  return metadataOnly ? `${kindKey(kind)} (metadata)` : kindKey(kind);
}

/**
 * One informer per kind (two when the kind is also cached metadata-only, as controller-runtime keeps
 * them apart), shared by every controller of a manager; and the reader the manager's client reads
 * through, as controller-runtime's informer cache: `get` and `list` answer from memory with deep copies,
 * starting (and waiting for) the informer of a kind read for the first time. Field indexes
 * (`indexField`) answer `list(kind, { index })`.
 */
export class InformerCache implements Reader {
  private readonly informers = new Map<string, CachedInformer>();
  /** Per informer: its start(), which resolves once it has synced (or was stopped). */
  private readonly syncs = new Map<string, Promise<void>>();
  private started = false;
  /** Informers a read started after the cache had started: not part of readiness. */
  private readonly startedByReads = new Set<string>();
  private readonly selectors = new Map<string, KindSelector>();
  private readonly namespace: string | undefined;
  private readonly syncTimeoutMs: number;
  private readonly clock: Clock;
  private readonly logger: Logger | undefined;
  private readonly warnOnUndeclared: boolean;
  private readonly failOnMissing: boolean;
  private readonly observe: InformerCacheConfig['observe'];
  /** Kinds whose undeclared informer was warned about. */
  private readonly warned = new Set<string>();

  constructor(
    private readonly factory: InformerFactory,
    config: InformerCacheConfig,
  ) {
    for (const selector of config.byObject) this.selectors.set(kindKey(selector.kind), selector);
    this.namespace = config.namespace || undefined;
    this.syncTimeoutMs = config.syncTimeoutMs;
    this.clock = config.clock;
    this.logger = config.logger;
    this.warnOnUndeclared = config.warnOnUndeclaredInformer ?? true;
    this.failOnMissing = config.readerFailOnMissingInformer ?? false;
    this.observe = config.observe;
    if (config.metrics) this.registerMetrics(config.metrics);
  }

  /**
   * The informer of `kind` (its metadata-only one with `{ metadataOnly: true }`), made on first use and,
   * when the cache runs already, started: what a controller's `for`, `owns` and `watches` declare.
   */
  informerFor(kind: ResourceKind<unknown>, options: InformerChoice = {}): Informer {
    return this.entryFor(kind, options.metadataOnly ?? false).informer;
  }

  private entryFor(kind: ResourceKind<unknown>, metadataOnly: boolean): CachedInformer {
    const key = informerKey(kind, metadataOnly);
    let entry = this.informers.get(key);
    if (!entry) {
      const { kind: _kind, ...selector } = this.selectors.get(kindKey(kind)) ?? { kind };
      const informer = this.factory(kind, {
        ...(this.namespace ? { namespace: this.namespace } : {}),
        ...selector,
        ...(metadataOnly ? { metadataOnly } : {}),
      });
      const indexes = new FieldIndexes((index, object, error) =>
        this.logger?.error('index function failed: the object is left out of the index', {
          kind: key,
          index,
          namespace: object.metadata?.namespace,
          name: object.metadata?.name,
          error,
        }),
      );
      // Before any controller's handlers: an index is up to date when a handler sees the event.
      informer.on('add', (object) => indexes.put(object));
      informer.on('update', (object) => indexes.put(object));
      informer.on('delete', (object) => indexes.remove(object));
      const observe = this.observe;
      if (observe && !metadataOnly) {
        const kindName = kindKey(kind);
        informer.on('add', (object) => observe(kindName, object, false));
        informer.on('update', (object) => observe(kindName, object, false));
        informer.on('delete', (object) => observe(kindName, object, true));
      }
      entry = { key, kind, metadataOnly, informer, indexes };
      this.informers.set(key, entry);
      if (this.started) {
        this.startedByReads.add(key);
        this.startInformer(key, informer);
      }
    }
    return entry;
  }

  /**
   * Indexes the objects of `kind` (of its metadata-only informer with `{ metadataOnly: true }`) by the
   * values `fn` returns, for `list(kind, { index: { name, value } })` (controller-runtime's
   * `IndexField`). Declares the informer, as a controller's watch does; best called before
   * `mgr.start()`, and if the informer runs already, the objects it holds are indexed at once. `fn` gets
   * the cached object itself and must not change it; when it throws (or returns anything but a list of
   * strings) the object is left out of the index and the failure is logged, once per object, and the
   * informer goes on.
   */
  indexField(
    kind: ResourceKind<unknown>,
    name: string,
    fn: IndexFunction,
    options: InformerChoice = {},
  ): void {
    if (!name) throw new Error(`an index of ${kind.kind} needs a name`);
    if (typeof fn !== 'function') throw new TypeError(`the index "${name}" of ${kind.kind} needs a function`);
    const entry = this.entryFor(kind, options.metadataOnly ?? false);
    if (entry.indexes.has(name)) {
      throw new Error(`the cache of ${entry.key} has an index named "${name}" already`);
    }
    entry.indexes.add(name, fn, entry.informer.list());
  }

  /** Per informer: what it caches, how many objects, their estimated bytes, its indexes. */
  stats(): InformerStats[] {
    return [...this.informers.values()].map((entry) => {
      const objects = entry.informer.list();
      return {
        kind: kindKey(entry.kind),
        metadataOnly: entry.metadataOnly,
        objects: objects.length,
        estimatedBytes: estimateTotalBytes(objects),
        indexes: entry.indexes.names(),
      };
    });
  }

  /** Gauges computed at each scrape from stats(): nothing is counted on the way of an event. */
  private registerMetrics(metrics: Metrics): void {
    const labelNames = ['kind', 'metadata_only'];
    const gauge = (name: string, help: string, value: (stats: InformerStats) => number) =>
      metrics.collectedGauge(name, help, labelNames, (set) => {
        for (const stats of this.stats()) {
          set({ kind: stats.kind, metadata_only: String(stats.metadataOnly) }, value(stats));
        }
      });
    gauge('kubesmith_cache_objects', 'Number of objects in each informer of the cache', (s) => s.objects);
    gauge(
      'kubesmith_cache_estimated_bytes',
      'Estimated heap bytes of the objects in each informer of the cache',
      (s) => s.estimatedBytes,
    );
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
    await Promise.all(
      [...this.informers.values()].map(({ key, informer }) => this.startInformer(key, informer)),
    );
  }

  async stop(): Promise<void> {
    this.started = false;
    await Promise.all([...this.informers.values()].map(({ informer }) => informer.stop()));
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
    return [...this.informers.values()]
      .filter(({ key, informer }) => !this.startedByReads.has(key) && !informer.hasSynced())
      .map(({ key }) => key);
  }

  /**
   * A deep copy of the cached object (its metadata only, from the kind's metadata-only informer, with
   * `{ metadataOnly: true }`). NotFound (an ApiError) when the cache does not hold it, which with a cache
   * selector for the kind includes objects that exist but do not match it. A namespaced object outside
   * the cache's namespace is an error (not NotFound): the cache cannot know.
   */
  get<T>(kind: ResourceKind<T>, name: string, namespace?: string, options?: GetOptions): Promise<T> {
    // The common case, once the kind's informer has synced, without an await: a reconcile reads through
    // here, and each await is a few microtasks more per reconcile.
    const metadataOnly = options?.metadataOnly ?? false;
    try {
      if (kind.namespaced && this.namespace !== undefined) {
        this.checkNamespace('get', kind, namespace ?? '', `${namespace ?? ''}/${name}`);
      }
      const entry = this.started ? this.informers.get(informerKey(kind, metadataOnly)) : undefined;
      if (entry?.informer.hasSynced()) {
        return Promise.resolve(this.copyOf(entry.informer, kind, name, namespace));
      }
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return this.syncedInformerFor(kind, metadataOnly).then((synced) =>
      this.copyOf(synced.informer, kind, name, namespace),
    );
  }

  /**
   * The object the full informer of a kind (`apiVersion/Kind`) holds now, itself (not a copy: not to be
   * changed); `untracked` when that informer is not running and synced (a later one lists afresh), or
   * will never hold the object: outside the cache's namespace, or, given as `written`, not matching the
   * kind's cache selector.
   */
  peek(
    kind: string,
    namespace: string,
    name: string,
    written?: KubernetesObject,
  ): KubernetesObject | undefined | 'untracked' {
    const entry = this.started ? this.informers.get(kind) : undefined;
    if (!entry?.informer.hasSynced()) return 'untracked';
    if (entry.kind.namespaced && this.namespace !== undefined && namespace !== this.namespace) {
      return 'untracked';
    }
    const selector = written && this.selectors.get(kind);
    if (
      selector &&
      !(labelMatcher(selector.labelSelector)(written) && fieldMatcher(selector.fieldSelector)(written))
    ) {
      return 'untracked';
    }
    return entry.informer.get(name, namespace || undefined);
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
   * `notin`, exists, `!`; field selectors `=`, `==`, `!=` on any dotted path; a field index's value),
   * sorted by namespace and name; their metadata only with `metadataOnly`. `pageSize` does not apply.
   * No namespace lists every namespace the cache holds.
   */
  async list<T>(kind: ResourceKind<T>, options: ListOptions = {}): Promise<T[]> {
    const namespace = kind.namespaced ? options.namespace || undefined : undefined;
    if (namespace !== undefined) this.checkNamespace('list', kind, namespace, `namespace ${namespace}`);
    const metadataOnly = options.metadataOnly ?? false;
    const { index } = options;
    if (index !== undefined) this.checkIndex(kind, metadataOnly, index.name);
    const labels = labelMatcher(options.labelSelector);
    const fields = fieldMatcher(options.fieldSelector);
    const { informer, indexes } = await this.syncedInformerFor(kind, metadataOnly);
    let objects: KubernetesObject[];
    if (index === undefined) objects = informer.list(namespace);
    else {
      objects = [];
      for (const found of indexes.lookup(index.name, index.value, namespace) ?? []) {
        const object = informer.get(found.name, found.namespace || undefined);
        if (object) objects.push(object);
      }
    }
    return objects
      .filter((object) => labels(object) && fields(object))
      .sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0))
      .map((object) => deepCopy(object) as T);
  }

  /** Refuses a list by an index the kind's informer does not have, before opening any informer. */
  private checkIndex(kind: ResourceKind<unknown>, metadataOnly: boolean, name: string): void {
    if (this.informers.get(informerKey(kind, metadataOnly))?.indexes.has(name)) return;
    const choice = metadataOnly ? ', { metadataOnly: true }' : '';
    throw new Error(
      `the cache of ${informerKey(kind, metadataOnly)} has no index named "${name}"\nhint: register it ` +
        `before mgr.start() with mgr.cache.indexField(${kind.kind}Kind, '${name}', fn${choice})`,
    );
  }

  private checkNamespace(verb: string, kind: ResourceKind<unknown>, namespace: string, what: string): void {
    if (this.namespace === undefined || namespace === this.namespace) return;
    throw new Error(
      `cannot ${verb} ${kind.kind} ${what} from the cache: it holds namespace "${this.namespace}" only ` +
        "(the manager's namespace); read other namespaces with mgr.apiReader",
    );
  }

  /** The informer of `kind`, started and synced: controller-runtime starts one on the first read. */
  private async syncedInformerFor(
    kind: ResourceKind<unknown>,
    metadataOnly: boolean,
  ): Promise<CachedInformer> {
    if (!this.started) {
      throw new Error(
        `the cache is not started: cannot read ${kind.kind} objects before mgr.start() ` +
          '(read them once mgr.ready() has resolved, or with mgr.apiReader)',
      );
    }
    const key = informerKey(kind, metadataOnly);
    const entry = this.informers.get(key) ?? this.openForRead(kind, metadataOnly);
    if (entry.informer.hasSynced()) return entry;
    let timer: unknown;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = this.clock.setTimeout(() => resolve('timeout'), this.syncTimeoutMs);
    });
    const outcome = await Promise.race([this.syncs.get(key), timeout]);
    this.clock.clearTimeout(timer);
    if (outcome === 'timeout') {
      throw new Error(
        `timed out after ${this.syncTimeoutMs} ms waiting for the cache of ${key} to sync ` +
          '(is the CRD installed, and may the operator list and watch it?)',
      );
    }
    if (!entry.informer.hasSynced()) throw new Error(`the cache stopped before ${key} synced`);
    return entry;
  }

  /**
   * The informer a read needs and no controller declared: refused with readerFailOnMissingInformer,
   * else opened, with a warning (once per kind) when it watches the whole cluster: such informers,
   * opened by a read nobody thought of as a watch, are where an operator's memory goes.
   */
  private openForRead(kind: ResourceKind<unknown>, metadataOnly: boolean): CachedInformer {
    const key = informerKey(kind, metadataOnly);
    const declare =
      `declare it in the controller's builder: .owns(${kind.kind}Kind) or .watches(${kind.kind}Kind, map), ` +
      'with { metadataOnly: true } when names, labels and owners are enough (read then with ' +
      '{ metadataOnly: true }); or read it with mgr.apiReader, or list it in client.disableCacheFor';
    if (this.failOnMissing) {
      throw new Error(
        `the cache has no informer for ${key} and cache.readerFailOnMissingInformer is set\nhint: ${declare}`,
      );
    }
    const clusterWide = !kind.namespaced || this.namespace === undefined;
    if (clusterWide && this.warnOnUndeclared && !this.warned.has(kindKey(kind))) {
      this.warned.add(kindKey(kind));
      const selector = this.selectors.get(kindKey(kind));
      const held = selector ? selectorText(selector) : '';
      this.logger?.warn(
        `a read opened a cluster-wide informer for ${key}, which no controller declared: it lists and ` +
          `watches every ${kind.kind}${held ? ` with ${held}` : ''} in the cluster and keeps them in memory`,
        { kind: key, readFrom: callerOutsideRuntime(), hint: declare },
      );
    }
    return this.entryFor(kind, metadataOnly);
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
