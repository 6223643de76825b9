/**
 * Informers: per kind, list then watch, keeping the objects in memory and telling handlers what changed.
 * The manager shares one informer per kind between its controllers. The informer factory is injectable:
 * tests feed events by hand, production uses @kubernetes/client-node's ListWatch.
 */
import { makeInformer, type KubeConfig } from '@kubernetes/client-node';
import { HttpClient, resourcePath } from './client.js';
import { realClock, type Clock } from './clock.js';
import { objectKey, type ResourceKind } from './kinds.js';
import type { Logger } from './logger.js';
import type { KubernetesObject } from './types.js';

/** Called with the object; for `update`, also with the object as the informer saw it before (if it did). */
export type ObjectHandler = (object: KubernetesObject, oldObject?: KubernetesObject) => void;

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
  labelSelector?: string;
}

export type InformerFactory = (kind: ResourceKind<unknown>, options: InformerOptions) => Informer;

/** What the informer needs of client-node's ListWatch (a seam for tests). */
export interface ListWatchLike {
  on(event: 'add' | 'update' | 'delete', handler: ObjectHandler): void;
  on(event: 'error', handler: (err?: unknown) => void): void;
  /** Lists (unless it can resume from a resourceVersion) and starts watching; list errors go to `error`. */
  start(): Promise<void>;
  stop(): Promise<void>;
  get(name: string, namespace?: string): KubernetesObject | undefined;
  list(namespace?: string): KubernetesObject[];
}

/**
 * Informers on a real API server, through client-node's ListWatch. An informer has synced once a list
 * has succeeded and its objects were delivered; `start()` waits for that (or for `stop()`). After an error
 * (a failed list or watch) the ListWatch stops; it is started again after 100 ms doubling to 30 s.
 */
export function clientNodeInformerFactory(
  kubeConfig: KubeConfig,
  logger: Logger,
  clock: Clock = realClock,
): InformerFactory {
  const client = new HttpClient(kubeConfig);
  return (kind, options) => {
    const namespace = kind.namespaced ? options.namespace : undefined;
    let listed = false;
    const listWatch = makeInformer<KubernetesObject & { metadata: { name: string } }>(
      kubeConfig,
      resourcePath(kind, namespace),
      async () => {
        const page = await client.listPage(kind, {
          ...(namespace ? { namespace } : {}),
          ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
        });
        listed = true;
        return { ...page, items: page.items as (KubernetesObject & { metadata: { name: string } })[] };
      },
      options.labelSelector,
    ) as unknown as ListWatchLike;
    return supervisedInformer(listWatch, () => listed, logger.child({ kind: kind.kind }), clock);
  };
}

/**
 * An Informer over a ListWatch: synced once `listed()` says a list succeeded, restarted with a growing
 * delay after errors. Exported for tests.
 */
export function supervisedInformer(
  listWatch: ListWatchLike,
  listed: () => boolean,
  log: Logger,
  clock: Clock = realClock,
): Informer {
  let synced = false;
  let stopped = false;
  let failures = 0;
  let errors = 0;
  let retry: unknown;
  let settle: (() => void) | undefined;
  const firstSync = new Promise<void>((resolve) => (settle = resolve));
  // client-node's ListWatch reports an update with the new object only: keep the last one seen of each
  // object (references, not copies) so that update handlers (predicates) get the old one too.
  const known = new Map<string, KubernetesObject>();
  const handlers: Record<'add' | 'update' | 'delete', ObjectHandler[]> = { add: [], update: [], delete: [] };
  listWatch.on('add', (object) => {
    known.set(keyOf(object), object);
    for (const handler of handlers.add) handler(object);
  });
  listWatch.on('update', (object) => {
    const key = keyOf(object);
    const oldObject = known.get(key);
    known.set(key, object);
    for (const handler of handlers.update) handler(object, oldObject);
  });
  listWatch.on('delete', (object) => {
    known.delete(keyOf(object));
    for (const handler of handlers.delete) handler(object);
  });
  const run = async () => {
    const errorsBefore = errors;
    await listWatch.start();
    if (errors === errorsBefore) failures = 0;
    // ListWatch.start resolves after a failed list too (the failure goes to `error`).
    if (!stopped && listed() && !synced) {
      synced = true;
      settle?.();
    }
  };
  listWatch.on('error', (err?: unknown) => {
    if (stopped) return;
    errors++;
    const delay = Math.min(100 * 2 ** failures++, 30_000);
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
    list: (ns) => [...listWatch.list(ns)],
  };
}

/** An informer fed by hand: for tests of controllers and of the cache, no API server involved. */
export class ManualInformer implements Informer {
  private readonly objects = new Map<string, KubernetesObject>();
  private readonly handlers: Record<'add' | 'update' | 'delete', ObjectHandler[]> = {
    add: [],
    update: [],
    delete: [],
  };
  private synced = false;
  started = false;

  constructor(initial: KubernetesObject[] = []) {
    for (const object of initial) this.objects.set(keyOf(object), object);
  }

  on(event: 'add' | 'update' | 'delete', handler: ObjectHandler): void {
    this.handlers[event].push(handler);
  }

  async start(): Promise<void> {
    this.started = true;
    for (const object of this.objects.values()) this.emit('add', object);
    this.synced = true;
  }

  async stop(): Promise<void> {
    this.started = false;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  get(name: string, namespace?: string): KubernetesObject | undefined {
    return this.objects.get(objectKey(namespace, name));
  }

  list(namespace?: string): KubernetesObject[] {
    return [...this.objects.values()].filter((o) => !namespace || o.metadata?.namespace === namespace);
  }

  /** An object appeared or changed on the "server". */
  apply(object: KubernetesObject): void {
    const key = keyOf(object);
    const oldObject = this.objects.get(key);
    this.objects.set(key, object);
    if (this.started) this.emit(oldObject ? 'update' : 'add', object, oldObject);
  }

  remove(object: KubernetesObject): void {
    this.objects.delete(keyOf(object));
    if (this.started) this.emit('delete', object);
  }

  private emit(
    event: 'add' | 'update' | 'delete',
    object: KubernetesObject,
    oldObject?: KubernetesObject,
  ): void {
    for (const handler of this.handlers[event]) handler(object, oldObject);
  }
}

function keyOf(object: KubernetesObject): string {
  return objectKey(object.metadata?.namespace, object.metadata?.name ?? '');
}

/** One informer per kind, shared by every controller of a manager. */
export class InformerCache {
  private readonly informers = new Map<string, Informer>();
  private started = false;

  constructor(
    private readonly factory: InformerFactory,
    private readonly options: InformerOptions = {},
  ) {}

  informerFor(kind: ResourceKind<unknown>): Informer {
    const key = `${kind.apiVersion}/${kind.kind}`;
    let informer = this.informers.get(key);
    if (!informer) {
      informer = this.factory(kind, this.options);
      this.informers.set(key, informer);
      if (this.started) void informer.start();
    }
    return informer;
  }

  async start(): Promise<void> {
    this.started = true;
    await Promise.all([...this.informers.values()].map((informer) => informer.start()));
  }

  async stop(): Promise<void> {
    this.started = false;
    await Promise.all([...this.informers.values()].map((informer) => informer.stop()));
  }

  hasSynced(): boolean {
    return [...this.informers.values()].every((informer) => informer.hasSynced());
  }

  /** The kinds (`apiVersion/Kind`) whose informers have not synced yet. */
  unsynced(): string[] {
    return [...this.informers].filter(([, informer]) => !informer.hasSynced()).map(([key]) => key);
  }
}
