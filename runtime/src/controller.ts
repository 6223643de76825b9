/**
 * A controller: events from informers become keys in a work queue; workers take keys and call the
 * reconciler, one key at a time per key, retrying failures with backoff.
 */
import type { Informer } from './cache.js';
import type { EventRecorder } from './events.js';
import { realClock, type Clock } from './clock.js';
import { nodeCrypto } from './internal/node-modules.js';
import { lazyChild, type Logger } from './logger.js';
import {
  Metrics,
  RECONCILE_BUCKETS,
  type BoundCounter,
  type BoundGauge,
  type BoundHistogram,
} from './metrics.js';
import { passes, type Predicate, type WatchEvent } from './predicate.js';
import { LOW_PRIORITY, WorkQueue, type RateLimiter } from './queue.js';
import {
  requestFromKey,
  requestKey,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
} from './reconcile.js';
import type { SpanHandle, Tracing } from './tracing.js';
import type { KubernetesObject } from './types.js';

/**
 * What every controller of a manager gets unless its builder says otherwise (controller-runtime's
 * `config.Controller`): the manager's `controller` option. `withDefaults` (options.ts) applies the
 * defaults.
 */
export interface ControllerDefaults {
  /** How many objects each controller reconciles at once (`withOptions` sets one's own). Default: 1. */
  maxConcurrentReconciles?: number;
  /**
   * How long the caches of the controllers may take to sync before `mgr.start()` fails, as a missing CRD
   * or RBAC rule would make them; a read that starts an informer waits as long. Default: 120 000 ms
   * (controller-runtime's two minutes).
   */
  cacheSyncTimeoutMs?: number;
  /**
   * Reconcile changes before replays (controller-runtime's priority queue, `UsePriorityQueue`): the
   * objects of an informer's first list and of resyncs are queued at LOW_PRIORITY (-100), changes at 0,
   * and a map function's request, a Result or `controller.queue.add` may give a priority of their own. So,
   * after a start with many objects, a new or changed object waits for the other changes only, not for the
   * replay of every object. Off: one first-in first-out queue. Default: true.
   */
  usePriorityQueue?: boolean;
}

export interface ControllerOptions {
  name: string;
  reconciler: Reconciler;
  logger: Logger;
  /** How many keys are reconciled at once. Default 1. */
  maxConcurrentReconciles?: number;
  rateLimiter?: RateLimiter;
  /** Take keys by priority (ControllerDefaults.usePriorityQueue). Default: true. */
  usePriorityQueue?: boolean;
  clock?: Clock;
  metrics?: Metrics;
  /**
   * The recorder reconcilers get in their context. Default: one that only logs the events (at debug): a
   * controller made by the builder gets the manager's `getEventRecorderFor(name)`.
   */
  recorder?: EventRecorder;
  /**
   * Handed to every reconcile in its context (`context.signal`): aborted when the manager loses its
   * leader election Lease. Default: a signal that never aborts.
   */
  signal?: AbortSignal;
  /** Makes a span of each reconcile (the manager's `tracing` option). Default: none. */
  tracing?: Tracing;
  /** The kind the controller reconciles, in its spans' names (`reconcile Widget`). Default: its name. */
  kind?: string;
  /**
   * Whether the request's object has a write of this manager its informer has not seen yet
   * (read-your-own-writes): such a reconcile is deferred, re-queued after DEFER_MS, since it would read
   * the object as it was before that write. The informer's event for the write queues the key again
   * anyway; the re-queue only makes sure the key is not lost. Default: nothing is deferred.
   */
  deferWhile?: (request: Request) => boolean;
}

/**
 * How long a deferred reconcile waits before it is tried again: a write is seen by its informer within
 * milliseconds on a healthy API server. A write stays unseen for at most the client's
 * readYourWritesTimeoutMs, after which the reconcile runs.
 */
export const DEFER_MS = 100;

/**
 * A request a map function makes, with the priority to queue it at. Default: the event's (LOW_PRIORITY
 * for an object of the informer's first list or a resync, 0 for a change).
 */
export interface PrioritizedRequest extends Request {
  priority?: number;
}

export type MapFunction = (object: KubernetesObject) => PrioritizedRequest[];

/** How many priorities get a `workqueue_depth_by_priority` series of their own; the rest share "other". */
const PRIORITY_SERIES = 8;

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  private readonly reconciler: Reconciler;
  private readonly logger: Logger;
  private readonly workers: number;
  private readonly clock: Clock;
  private readonly metrics: Metrics;
  private running: Promise<void>[] = [];
  /** The controller's series, bound to its labels. */
  private readonly record: {
    success: BoundCounter;
    error: BoundCounter;
    requeue: BoundCounter;
    requeueAfter: BoundCounter;
    failed: BoundCounter;
    time: BoundHistogram;
    active: BoundGauge;
  };
  /** Per event type: predicates and map functions of this controller that threw. */
  private readonly handlerErrors: Record<WatchEvent, BoundCounter>;
  readonly informers: Informer[] = [];
  /** The event recorder of this controller, handed to the reconciler in its context. */
  readonly recorder: EventRecorder;
  private readonly signal: AbortSignal;
  private readonly tracing: Tracing | undefined;
  /** The name of its reconciles' spans. */
  private readonly spanName: string;
  private readonly deferWhile: ((request: Request) => boolean) | undefined;
  private readonly deferrals: BoundCounter;

  constructor(options: ControllerOptions) {
    this.name = options.name;
    this.reconciler = options.reconciler;
    this.logger = options.logger.child({ controller: options.name });
    this.workers = Math.max(1, options.maxConcurrentReconciles ?? 1);
    this.clock = options.clock ?? realClock;
    this.metrics = options.metrics ?? new Metrics();
    this.recorder = options.recorder ?? loggingRecorder(this.logger);
    this.signal = options.signal ?? new AbortController().signal;
    this.tracing = options.tracing;
    this.spanName = `reconcile ${options.kind ?? options.name}`;
    this.deferWhile = options.deferWhile;
    const m = this.metrics;
    // Counters and gauges bound to their labels: plain additions per reconcile, read at scrape time.
    const queueLabels = { name: options.name };
    const controller = { controller: options.name };
    const adds = m.boundCounter(
      'workqueue_adds_total',
      'Total number of adds handled by workqueue',
      queueLabels,
    );
    const retries = m.boundCounter(
      'workqueue_retries_total',
      'Total number of retries handled by workqueue',
      queueLabels,
    );
    const depth = m.boundGauge('workqueue_depth', 'Current depth of workqueue', queueLabels);
    // A series for each of the first few priorities seen (a replay's, a change's, a user's own); any
    // further ones share "other", so that a user's many one-off priorities cannot grow /metrics.
    const priorityDepths = new Map<number, BoundGauge>();
    let otherDepth: BoundGauge | undefined;
    const priorityDepth = (priority: number): BoundGauge => {
      const gauge = priorityDepths.get(priority);
      if (gauge !== undefined) return gauge;
      const series = (label: string) =>
        m.boundGauge(
          'workqueue_depth_by_priority',
          'Current depth of workqueue, by the priority of the keys waiting',
          { name: options.name, priority: label },
        );
      if (priorityDepths.size >= PRIORITY_SERIES) return (otherDepth ??= series('other'));
      const own = series(String(priority));
      priorityDepths.set(priority, own);
      return own;
    };
    const queued = m.boundHistogram(
      'workqueue_queue_duration_seconds',
      'How long in seconds an item stays in workqueue before being requested',
      queueLabels,
      RECONCILE_BUCKETS,
    );
    this.queue = new WorkQueue({
      clock: this.clock,
      priorities: options.usePriorityQueue ?? true,
      ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
      metrics: {
        add: () => adds.inc(),
        retry: () => retries.inc(),
        depth: (value) => depth.set(value),
        priorityDepth: (priority, change) => priorityDepth(priority).inc(change),
        queued: (ms) => queued.observe(ms / 1000),
      },
    });
    // As controller-runtime: every result's series exists from the start, at 0.
    const byResult = (result: string) =>
      m.boundCounter('controller_runtime_reconcile_total', 'Total number of reconciliations per controller', {
        controller: options.name,
        result,
      });
    const errors = m.boundCounter(
      'controller_runtime_reconcile_errors_total',
      'Total number of reconciliation errors per controller',
      controller,
    );
    const time = m.boundHistogram(
      'controller_runtime_reconcile_time_seconds',
      'Length of time per reconciliation per controller',
      controller,
      RECONCILE_BUCKETS,
    );
    const active = m.boundGauge(
      'controller_runtime_active_workers',
      'Number of currently used workers per controller',
      controller,
    );
    m.boundGauge(
      'controller_runtime_max_concurrent_reconciles',
      'Maximum number of concurrent reconciles per controller',
      controller,
      this.workers,
    );
    const handlerErrors = (event: WatchEvent) =>
      m.boundCounter(
        'controller_runtime_handler_errors_total',
        'Total number of exceptions in the predicates and map functions of a controller, per event type',
        { controller: options.name, event },
      );
    this.deferrals = m.boundCounter(
      'kubesmith_reconcile_deferrals_total',
      "Reconciles deferred because the controller's informer had not seen the manager's own write of the object",
      controller,
    );
    this.handlerErrors = {
      create: handlerErrors('create'),
      update: handlerErrors('update'),
      delete: handlerErrors('delete'),
    };
    this.record = {
      success: byResult('success'),
      error: byResult('error'),
      requeue: byResult('requeue'),
      requeueAfter: byResult('requeue_after'),
      failed: errors,
      time,
      active,
    };
  }

  /**
   * Enqueues the requests `map` makes of every object `informer` reports that `predicates` let through.
   * A predicate or map function that throws (or a map that returns no list) costs that one event for this
   * controller only: it is logged with the controller's name and counted in
   * `controller_runtime_handler_errors_total{controller,event}`, and the informer goes on to its other
   * handlers, as it would after a handler that returned normally.
   */
  watch(informer: Informer, map: MapFunction, predicates: readonly Predicate[] = []): void {
    this.informers.push(informer);
    const handle = (
      event: WatchEvent,
      object: KubernetesObject,
      oldObject?: KubernetesObject,
      initial = false,
    ) => {
      try {
        if (!passes(predicates, event, object, oldObject)) return;
        const requests = map(object);
        if (!Array.isArray(requests)) {
          throw new TypeError(`the map function returned ${typeof requests}, not a list of requests`);
        }
        const priority = replayed(event, object, oldObject, initial) ? LOW_PRIORITY : 0;
        for (const request of requests) {
          this.queue.add(requestKey(request), { priority: request.priority ?? priority });
        }
      } catch (error) {
        this.handlerErrors[event].inc();
        this.logger.error('event handler failed', {
          event,
          kind: object.kind,
          namespace: object.metadata?.namespace,
          name: object.metadata?.name,
          error,
        });
      }
    };
    informer.on('add', (object, _old, initial) => handle('create', object, undefined, initial));
    informer.on('update', (object, oldObject) => handle('update', object, oldObject));
    informer.on('delete', (object) => handle('delete', object));
  }

  /** Starts the workers; resolves once the queue is shut down and every worker has finished. */
  start(): Promise<void> {
    this.logger.info('Starting workers', { workerCount: this.workers });
    this.running = Array.from({ length: this.workers }, () => this.work());
    return Promise.all(this.running).then(() => undefined);
  }

  /** Stops taking keys; resolves when in-flight reconciles finish, or after `timeoutMs`. */
  async stop(timeoutMs = 30_000): Promise<void> {
    this.queue.shutDown();
    let timer: unknown;
    const timeout = new Promise<void>((resolve) => {
      timer = this.clock.setTimeout(() => {
        this.logger.warn('reconciles still running at the shutdown deadline', { timeoutMs });
        resolve();
      }, timeoutMs);
    });
    await Promise.race([Promise.all(this.running), timeout]);
    this.clock.clearTimeout(timer);
  }

  /**
   * A worker: takes keys while there are any (without a promise each), reconciles them one at a time,
   * and waits in get() when the queue is empty. Runs until the queue shuts down.
   */
  private async work(): Promise<void> {
    const queue = this.queue;
    for (;;) {
      const key = queue.tryGet() ?? (await queue.get());
      if (key === undefined) return;
      const priority = queue.takenPriority(key);
      const request = requestFromKey(key);
      if (this.deferWhile?.(request)) {
        this.deferrals.inc();
        queue.addAfter(key, DEFER_MS, { priority });
        queue.done(key);
        continue;
      }
      const context = new Context(this.name, request, this.logger, this.recorder, this.signal);
      const record = this.record;
      const started = this.clock.now();
      let result: Result | void = undefined;
      let failure: { error: unknown } | undefined;
      record.active.inc(1);
      let span: SpanHandle | undefined;
      try {
        if (this.tracing) {
          const traced = this.traced(request, context);
          span = traced.span;
          result = await traced.running;
        } else {
          result = await this.reconciler.reconcile(request, context);
        }
      } catch (error) {
        failure = { error };
      }
      record.active.inc(-1);
      if (span) endReconcileSpan(span, result, failure);
      record.time.observe((this.clock.now() - started) / 1000);
      try {
        this.settle(key, priority, context, result, failure);
      } finally {
        queue.done(key);
      }
    }
  }

  /** The reconcile, run inside its span (the active span while it runs, parent of its API calls). */
  private traced(request: Request, context: Context) {
    const attributes = {
      'kubesmith.controller': this.name,
      'kubesmith.namespace': request.namespace || undefined,
      'kubesmith.name': request.name,
      'kubesmith.reconcile_id': context.reconcileID,
    };
    return (this.tracing as Tracing).inSpan(this.spanName, attributes, () =>
      this.reconciler.reconcile(request, context),
    );
  }

  /**
   * Counts the reconcile's outcome and queues what comes next: a retry, a requeue, or nothing. A retry
   * keeps the priority the key was taken at (a replayed object's failure does not jump the changes); a
   * requeue takes the Result's priority, else that one too (controller-runtime's).
   */
  private settle(
    key: string,
    priority: number,
    context: Context,
    result: Result | void,
    failure?: { error: unknown },
  ): void {
    const record = this.record;
    if (failure) {
      record.error.inc();
      record.failed.inc();
      context.logger.error('Reconciler error', { error: failure.error });
      this.queue.addRateLimited(key, { priority });
      return;
    }
    if (result?.requeueAfter !== undefined && result.requeueAfter > 0) {
      record.requeueAfter.inc();
      this.queue.forget(key);
      this.queue.addAfter(key, result.requeueAfter, { priority: result.priority ?? priority });
    } else if (result?.requeue) {
      record.requeue.inc();
      this.queue.addRateLimited(key, { priority: result.priority ?? priority });
    } else {
      record.success.inc();
      this.queue.forget(key);
    }
    if (this.logger.enabled?.('debug') ?? true) context.logger.debug('Reconciled', { result: result ?? {} });
  }
}

/**
 * The context of one reconcile. Its id and logger are made when first read: most reconciles read
 * neither, and a random UUID and a child logger are most of what a reconcile's bookkeeping would cost.
 * The logger's fields (the id among them) are made when it writes its first line.
 */
class Context implements ReconcileContext {
  // Private fields (#), so that the context's own properties are those of ReconcileContext.
  readonly #request: Request;
  readonly #parentLogger: Logger;
  #reconcileID: string | undefined;
  #logger: Logger | undefined;

  constructor(
    readonly controller: string,
    request: Request,
    parentLogger: Logger,
    readonly recorder: EventRecorder,
    readonly signal: AbortSignal,
  ) {
    this.#request = request;
    this.#parentLogger = parentLogger;
  }

  get reconcileID(): string {
    return (this.#reconcileID ??= nodeCrypto().randomUUID());
  }

  get logger(): Logger {
    return (this.#logger ??= lazyChild(this.#parentLogger, () => ({
      namespace: this.#request.namespace,
      name: this.#request.name,
      reconcileID: this.reconcileID,
    })));
  }
}

/**
 * Whether an event replays an object rather than reports a change: an object of the informer's first list,
 * or an update that changed nothing (the same resourceVersion: a resync).
 */
function replayed(
  event: WatchEvent,
  object: KubernetesObject,
  oldObject: KubernetesObject | undefined,
  initial: boolean,
): boolean {
  if (event === 'create') return initial;
  if (event !== 'update' || oldObject === undefined) return false;
  const version = object.metadata?.resourceVersion;
  return version !== undefined && version === oldObject.metadata?.resourceVersion;
}

/** Ends a reconcile's span with its outcome: `kubesmith.result` as the metrics' `result` label says it. */
function endReconcileSpan(span: SpanHandle, result: Result | void, failure?: { error: unknown }): void {
  const requeueAfter =
    result?.requeueAfter !== undefined && result.requeueAfter > 0 ? result.requeueAfter : 0;
  span.set({
    'kubesmith.result': failure
      ? 'error'
      : requeueAfter
        ? 'requeue_after'
        : result?.requeue
          ? 'requeue'
          : 'success',
    'kubesmith.requeue_after_ms': requeueAfter || undefined,
  });
  span.end(failure?.error);
}

/** A recorder for controllers without a manager's: it logs the events it cannot send. */
function loggingRecorder(logger: Logger): EventRecorder {
  return {
    event: async (regarding, type, reason, action, note) => {
      logger.debug('event not recorded: the controller has no event recorder', {
        type,
        reason,
        action,
        note,
        regarding: `${regarding.kind ?? ''} ${regarding.metadata?.namespace ?? ''}/${regarding.metadata?.name ?? ''}`,
      });
    },
  };
}
