/**
 * controllerManagedBy(mgr).for(kind).owns(child).watches(other, map).complete(reconciler): the
 * controller-runtime builder. `for` events reconcile the object itself, `owns` events reconcile the
 * object's controller owner of the `for` kind, `watches` events reconcile what `map` returns.
 */
import type { Informer, InformerChoice } from './cache.js';
import type { Clock } from './clock.js';
import type { EventRecorder } from './events.js';
import { Controller, type ControllerDefaults, type MapFunction } from './controller.js';
import type { ResourceKind } from './kinds.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import type { Predicate } from './predicate.js';
import type { Reconciler, Request } from './reconcile.js';
import type { Tracing } from './tracing.js';
import type { KubernetesObject } from './types.js';

/** What the builder needs of a manager. */
export interface ControllerHost {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly clock?: Clock;
  /** The kind's shared informer; its metadata-only one with `{ metadataOnly: true }`. */
  informerFor(kind: ResourceKind<unknown>, options?: InformerChoice): Informer;
  add(controller: Controller): void;
  /** The event recorder of controller `name`; the builder hands it to the reconciler's context. */
  getEventRecorderFor?(name: string): EventRecorder;
  /** Aborted when the host loses leadership; the builder hands it to the reconciler's context. */
  readonly leadership?: AbortSignal;
  /** What a controller gets unless its builder says otherwise: the manager's `controller` option. */
  readonly controllerDefaults?: ControllerDefaults;
  /** Makes the spans of reconciles (the manager's `tracing` option); the builder hands it to controllers. */
  readonly tracing?: Tracing | undefined;
  /**
   * Whether the host's client wrote the object of `kind` named by `request` and its informer has not seen
   * the write yet (read-your-own-writes): the builder defers reconciles of the `for` kind while it has.
   */
  pendingWrite?(kind: ResourceKind<unknown>, request: Request): boolean;
}

export interface BuilderOptions {
  /** How many objects are reconciled at once. Default: the manager's `controller.maxConcurrentReconciles`. */
  maxConcurrentReconciles?: number;
  /** Reconcile changes before replays. Default: the manager's `controller.usePriorityQueue` (true). */
  usePriorityQueue?: boolean;
}

/** Options of one watch (`for`, `owns`, `watches`). */
export interface WatchOptions {
  /** Only events these all let through are enqueued. Default: none (every event). */
  predicates?: Predicate[];
  /**
   * Watch and cache the kind's metadata only (controller-runtime's `builder.OnlyMetadata`): handlers and
   * predicates get objects with apiVersion, kind and metadata (names, labels, annotations, owner
   * references) and nothing else, and the kind's metadata-only informer keeps a fraction of the memory a
   * full one would. Read such objects with `{ metadataOnly: true }` (`mgr.client.get(kind, name, ns,
   * { metadataOnly: true })`): a read without it opens the kind's full informer beside it. Default: false.
   */
  metadataOnly?: boolean;
}

export interface Builder {
  for(kind: ResourceKind<unknown>, options?: WatchOptions): Builder;
  owns(kind: ResourceKind<unknown>, options?: WatchOptions): Builder;
  watches(kind: ResourceKind<unknown>, map: MapFunction, options?: WatchOptions): Builder;
  /** A predicate for every watch of this controller (controller-runtime's WithEventFilter). */
  withEventFilter(predicate: Predicate): Builder;
  named(name: string): Builder;
  withOptions(options: BuilderOptions): Builder;
  /**
   * Builds the controller and adds it to the manager. The reconciler gets, with each request, a context
   * with its logger and the controller's event recorder (`reportingController` = the controller's name:
   * `named(name)`, else the lower-cased kind of `for`); `controller.recorder` is the same recorder.
   */
  complete(reconciler: Reconciler): Controller;
}

export function controllerManagedBy(host: ControllerHost): Builder {
  let forKind: ResourceKind<unknown> | undefined;
  let forOptions: WatchOptions = {};
  let name: string | undefined;
  let options: BuilderOptions = {};
  const filters: Predicate[] = [];
  const owned: { kind: ResourceKind<unknown>; options: WatchOptions }[] = [];
  const watched: { kind: ResourceKind<unknown>; map: MapFunction; options: WatchOptions }[] = [];
  const builder: Builder = {
    for(kind, watchOptions) {
      if (forKind)
        throw new Error(`for() was already called with ${forKind.kind}; a controller reconciles one kind`);
      forKind = kind;
      forOptions = watchOptions ?? {};
      return builder;
    },
    owns(kind, watchOptions) {
      owned.push({ kind, options: watchOptions ?? {} });
      return builder;
    },
    watches(kind, map, watchOptions) {
      watched.push({ kind, map, options: watchOptions ?? {} });
      return builder;
    },
    withEventFilter(predicate) {
      filters.push(predicate);
      return builder;
    },
    named(value) {
      name = value;
      return builder;
    },
    withOptions(value) {
      options = { ...options, ...value };
      return builder;
    },
    complete(reconciler) {
      if (!forKind && watched.length === 0)
        throw new Error('a controller needs for(kind) or watches(kind, map)');
      const controllerName = name ?? forKind?.kind.toLowerCase();
      if (!controllerName) throw new Error('a controller without for(kind) needs named(name)');
      const controller = new Controller({
        name: controllerName,
        reconciler,
        logger: host.logger,
        metrics: host.metrics,
        ...(host.clock ? { clock: host.clock } : {}),
        ...(host.getEventRecorderFor ? { recorder: host.getEventRecorderFor(controllerName) } : {}),
        ...(host.leadership ? { signal: host.leadership } : {}),
        ...(host.tracing ? { tracing: host.tracing } : {}),
        ...(forKind ? { kind: forKind.kind } : {}),
        ...maxConcurrentReconciles(options, host.controllerDefaults),
        usePriorityQueue: options.usePriorityQueue ?? host.controllerDefaults?.usePriorityQueue ?? true,
        ...deferral(host, forKind, forOptions),
      });
      const informer = (kind: ResourceKind<unknown>, watchOptions: WatchOptions) =>
        watchOptions.metadataOnly ? host.informerFor(kind, { metadataOnly: true }) : host.informerFor(kind);
      const predicates = (watchOptions: WatchOptions) => [...filters, ...(watchOptions.predicates ?? [])];
      if (forKind) controller.watch(informer(forKind, forOptions), requestForObject, predicates(forOptions));
      for (const { kind, options: ownOptions } of owned) {
        const owner = forKind;
        if (!owner) throw new Error('owns() needs for(kind): the owner kind');
        controller.watch(
          informer(kind, ownOptions),
          (object) => requestsForOwner(object, owner),
          predicates(ownOptions),
        );
      }
      for (const { kind, map, options: watchOptions } of watched)
        controller.watch(informer(kind, watchOptions), map, predicates(watchOptions));
      host.add(controller);
      return controller;
    },
  };
  return builder;
}

function maxConcurrentReconciles(
  options: BuilderOptions,
  defaults: ControllerDefaults | undefined,
): { maxConcurrentReconciles?: number } {
  const workers = options.maxConcurrentReconciles || defaults?.maxConcurrentReconciles;
  return workers ? { maxConcurrentReconciles: workers } : {};
}

function requestForObject(object: KubernetesObject): Request[] {
  const name = object.metadata?.name;
  return name ? [{ namespace: object.metadata?.namespace ?? '', name }] : [];
}

/** The controller owner of `object` when it is of kind `owner` (any version of its group). */
export function requestsForOwner(object: KubernetesObject, owner: ResourceKind<unknown>): Request[] {
  const reference = object.metadata?.ownerReferences?.find((ref) => ref.controller === true);
  if (!reference || reference.kind !== owner.kind) return [];
  const group = reference.apiVersion.includes('/') ? reference.apiVersion.split('/')[0] : '';
  if (group !== owner.group) return [];
  return [{ namespace: owner.namespaced ? (object.metadata?.namespace ?? '') : '', name: reference.name }];
}

/** Defers reconciles of the `for` kind's objects with an unseen own write; not of a metadata-only `for`. */
function deferral(
  host: ControllerHost,
  forKind: ResourceKind<unknown> | undefined,
  forOptions: WatchOptions,
): { deferWhile?: (request: Request) => boolean } {
  if (!forKind || forOptions.metadataOnly || !host.pendingWrite) return {};
  const pendingWrite = host.pendingWrite.bind(host);
  return { deferWhile: (request) => pendingWrite(forKind, request) };
}
