/**
 * The field indexes of one informer (controller-runtime's `cache.IndexField`): per index, the objects by
 * each value their index function returns, kept up to date by the informer's add, update and delete
 * events (a relist's included: it reports what changed and what went as such events). Lookups are by
 * value, in one namespace or in all of them, as controller-runtime's namespaced index keys.
 */
import { objectKey } from '../kinds.js';
import type { KubernetesObject } from '../types.js';

/**
 * The values an object is indexed under (`ownerName`: the names of its owners; `spec.nodeName`: one
 * node). Gets the cached object itself, which it must not change. An exception, or anything but a list
 * of strings, leaves the object out of that index.
 */
export type IndexFunction = (object: KubernetesObject) => string[];

/** Where an object is: its namespace ('' when cluster-scoped) and name. */
export interface IndexedObject {
  namespace: string;
  name: string;
}

class FieldIndex {
  /** value -> namespace -> names */
  private readonly byValue = new Map<string, Map<string, Set<string>>>();
  /** object key -> the values it is indexed under, to take it out when it changes or goes. */
  private readonly valuesOf = new Map<string, readonly string[]>();
  /** Objects whose index function failed and was logged: logged again only after it succeeded. */
  private readonly failing = new Set<string>();

  constructor(
    readonly name: string,
    private readonly fn: IndexFunction,
    private readonly onError: (index: string, object: KubernetesObject, error: unknown) => void,
  ) {}

  put(object: KubernetesObject): void {
    const namespace = object.metadata?.namespace ?? '';
    const name = object.metadata?.name ?? '';
    const key = objectKey(namespace, name);
    this.take(key, namespace, name);
    let values: string[];
    try {
      values = valuesOf(this.fn(object));
    } catch (error) {
      if (!this.failing.has(key)) {
        this.failing.add(key);
        this.onError(this.name, object, error);
      }
      return;
    }
    this.failing.delete(key);
    if (values.length === 0) return;
    this.valuesOf.set(key, values);
    for (const value of values) {
      let namespaces = this.byValue.get(value);
      if (namespaces === undefined) this.byValue.set(value, (namespaces = new Map()));
      let names = namespaces.get(namespace);
      if (names === undefined) namespaces.set(namespace, (names = new Set()));
      names.add(name);
    }
  }

  remove(object: KubernetesObject): void {
    const namespace = object.metadata?.namespace ?? '';
    const name = object.metadata?.name ?? '';
    const key = objectKey(namespace, name);
    this.take(key, namespace, name);
    this.failing.delete(key);
  }

  lookup(value: string, namespace: string | undefined): IndexedObject[] {
    const namespaces = this.byValue.get(value);
    if (namespaces === undefined) return [];
    const found: IndexedObject[] = [];
    const add = (ns: string, names: Set<string> | undefined) => {
      for (const name of names ?? []) found.push({ namespace: ns, name });
    };
    if (namespace !== undefined) add(namespace, namespaces.get(namespace));
    else for (const [ns, names] of namespaces) add(ns, names);
    return found;
  }

  private take(key: string, namespace: string, name: string): void {
    const values = this.valuesOf.get(key);
    if (values === undefined) return;
    this.valuesOf.delete(key);
    for (const value of values) {
      const namespaces = this.byValue.get(value);
      const names = namespaces?.get(namespace);
      if (!names?.delete(name) || names.size > 0) continue;
      namespaces!.delete(namespace);
      if (namespaces!.size === 0) this.byValue.delete(value);
    }
  }
}

/** What an index function returned, checked: a list of strings, each once. */
function valuesOf(returned: unknown): string[] {
  if (!Array.isArray(returned)) {
    throw new TypeError(`the index function returned ${typeof returned}, not a list of strings`);
  }
  for (const value of returned) {
    if (typeof value !== 'string') {
      throw new TypeError(`the index function returned a ${typeof value} in its list, not a string`);
    }
  }
  return returned.length > 1 ? [...new Set(returned as string[])] : (returned as string[]);
}

/** The indexes of one informer. */
export class FieldIndexes {
  private readonly indexes = new Map<string, FieldIndex>();

  constructor(private readonly onError: (index: string, object: KubernetesObject, error: unknown) => void) {}

  has(name: string): boolean {
    return this.indexes.has(name);
  }

  names(): string[] {
    return [...this.indexes.keys()];
  }

  /** Adds the index `name`, indexing `current` (the informer's store, when it already holds objects). */
  add(name: string, fn: IndexFunction, current: readonly KubernetesObject[]): void {
    const index = new FieldIndex(name, fn, this.onError);
    this.indexes.set(name, index);
    for (const object of current) index.put(object);
  }

  /** An object added or changed. */
  put(object: KubernetesObject): void {
    for (const index of this.indexes.values()) index.put(object);
  }

  remove(object: KubernetesObject): void {
    for (const index of this.indexes.values()) index.remove(object);
  }

  /** Where the objects index `name` maps to `value` are; undefined when there is no such index. */
  lookup(name: string, value: string, namespace: string | undefined): IndexedObject[] | undefined {
    return this.indexes.get(name)?.lookup(value, namespace);
  }
}
