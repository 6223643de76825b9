/** An informer fed by hand, for tests of controllers and of the cache: no API server involved. */
import { keyOf, type Informer, type ObjectHandler } from '../cache.js';
import { objectKey } from '../kinds.js';
import type { KubernetesObject } from '../types.js';

/**
 * Holds the objects it is given; `start()` delivers them as `add` (marked `initial`, as a first list's),
 * then `apply()` and `remove()` deliver `update`, `add` and `delete` as a watch would. Hand it to a
 * Manager with `newInformer`.
 */
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
    for (const object of this.objects.values()) this.emit('add', object, undefined, true);
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
    initial = false,
  ): void {
    for (const handler of this.handlers[event]) handler(object, oldObject, initial);
  }
}
