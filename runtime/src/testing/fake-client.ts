/**
 * An in-memory Client for unit tests of reconcilers, with the API server's behaviours a reconciler depends
 * on: resourceVersion conflicts, generation bumps on spec changes, the status subresource, finalizers that
 * hold a deletion, label selectors, and the same ApiErrors; and the manager's cache's field indexes
 * (`indexField`, `list(kind, { index })`) and metadata-only reads, so that a reconciler that uses them
 * can be tested on it.
 */
import { randomUUID } from 'node:crypto';
import type {
  ApplyOptions,
  Client,
  DeleteOptions,
  GetOptions,
  ListOptions,
  PatchOptions,
  PatchType,
  RequestOptions,
} from '../client.js';
import type { InformerChoice } from '../cache.js';
import { toPartialObjectMetadata } from '../client.js';
import { ApiError } from '../errors.js';
import type { IndexFunction } from '../internal/field-index.js';
import { deepCopy } from '../internal/deepcopy.js';
import { checkPathSegments } from '../internal/path-segment.js';
import { fieldMatcher, labelMatcher } from '../internal/selector.js';
import { kindKey, objectKey, type ResourceKind } from '../kinds.js';
import type { KubernetesObject } from '../types.js';
import { applyJsonPatch, JsonPatchError, type JsonPatchOperation } from './jsonpatch.js';

export interface FakeClientOptions {
  /** Objects the "cluster" starts with; each needs apiVersion, kind and metadata.name. */
  objects?: KubernetesObject[];
  /** The clock of creation and deletion timestamps. Default: now. */
  now?: () => Date;
}

type Stored = KubernetesObject & {
  metadata: NonNullable<KubernetesObject['metadata']> & { name: string };
  status?: unknown;
};

export class FakeClient implements Client {
  private readonly store = new Map<string, Stored>();
  private resourceVersion = 0;
  private readonly now: () => Date;
  /** kind -> index name -> its function */
  private readonly indexes = new Map<string, Map<string, IndexFunction>>();

  constructor(options: FakeClientOptions = {}) {
    this.now = options.now ?? (() => new Date());
    for (const object of options.objects ?? []) this.seed(object);
  }

  /** Every stored object, for assertions. */
  all(): KubernetesObject[] {
    return [...this.store.values()].map((o) => deepCopy(o));
  }

  /**
   * A field index, as `mgr.cache.indexField(kind, name, fn)` registers on the manager's cache:
   * `list(kind, { index: { name, value } })` then returns the objects `fn` maps to `value`. As in the
   * cache, an object for which `fn` throws (or returns anything but a list of strings) is in no list of
   * that index. The `metadataOnly` option is accepted and means nothing here: the fake has one store.
   */
  indexField(kind: ResourceKind<unknown>, name: string, fn: IndexFunction, _options?: InformerChoice): this {
    let indexes = this.indexes.get(kindKey(kind));
    if (indexes === undefined) this.indexes.set(kindKey(kind), (indexes = new Map()));
    if (indexes.has(name)) throw new Error(`${kindKey(kind)} has an index named "${name}" already`);
    indexes.set(name, fn);
    return this;
  }

  // The trailing RequestOptions (timeout, signal) of the Client interface mean nothing to an in-memory fake.
  async get<T>(kind: ResourceKind<T>, name: string, namespace?: string, options?: GetOptions): Promise<T> {
    checkPath(kind, name, namespace);
    const stored = this.store.get(
      storeKey(kind.apiVersion, kind.kind, kind.namespaced ? namespace : '', name),
    );
    if (!stored) throw notFound(kind, name);
    return readAs(kind, stored, options) as T;
  }

  async list<T>(kind: ResourceKind<T>, options: ListOptions = {}): Promise<T[]> {
    checkPath(kind, undefined, options.namespace);
    const labels = labelMatcher(options.labelSelector);
    const fields = fieldMatcher(options.fieldSelector);
    const indexed = this.indexMatcher(kind, options);
    return [...this.store.values()]
      .filter((o) => o.apiVersion === kind.apiVersion && o.kind === kind.kind)
      .filter((o) => !options.namespace || o.metadata.namespace === options.namespace)
      .filter((o) => labels(o) && fields(o) && indexed(o))
      .sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1))
      .map((o) => readAs(kind, o, options) as T);
  }

  /** Whether an object is among those `options.index` looks up: what the cache's index would answer. */
  private indexMatcher(kind: ResourceKind<unknown>, options: ListOptions): (object: Stored) => boolean {
    const { index } = options;
    if (index === undefined) return () => true;
    const fn = this.indexes.get(kindKey(kind))?.get(index.name);
    if (fn === undefined) {
      throw new Error(
        `the fake client has no index named "${index.name}" for ${kindKey(kind)}\nhint: register it with ` +
          `client.indexField(${kind.kind}Kind, '${index.name}', fn), as the manager's mgr.cache.indexField`,
      );
    }
    return (object) => {
      try {
        const values: unknown = fn(object);
        return (
          Array.isArray(values) && values.every((v) => typeof v === 'string') && values.includes(index.value)
        );
      } catch {
        return false;
      }
    };
  }

  async create<T>(kind: ResourceKind<T>, object: T, _options?: RequestOptions): Promise<T> {
    const o = prepare(kind, object);
    // As HttpClient: the name is in the body of a create, not in its path.
    checkPath(kind, undefined, o.metadata.namespace);
    if (o.metadata.resourceVersion) {
      throw new ApiError(400, 'BadRequest', 'resourceVersion should not be set on objects to be created');
    }
    const key = storeKey(kind.apiVersion, kind.kind, o.metadata.namespace, o.metadata.name);
    if (this.store.has(key)) {
      throw new ApiError(409, 'AlreadyExists', `${resourceName(kind)} "${o.metadata.name}" already exists`);
    }
    return deepCopy(this.put(this.initialise(o))) as T;
  }

  async update<T>(kind: ResourceKind<T>, object: T, _options?: RequestOptions): Promise<T> {
    const o = prepare(kind, object);
    checkPath(kind, o.metadata.name, o.metadata.namespace);
    const current = this.current(kind, o);
    // The status subresource: an update of the object leaves its status as it was.
    const next: Stored = { ...o, status: (current as { status?: unknown }).status } as Stored;
    if (next.status === undefined) delete (next as { status?: unknown }).status;
    if (specOf(next) !== specOf(current)) next.metadata.generation = (current.metadata.generation ?? 1) + 1;
    else next.metadata.generation = current.metadata.generation;
    keepImmutable(next, current);
    if (unchanged(next, current)) return deepCopy(current) as T;
    return deepCopy(this.putOrFinalize(next)) as T;
  }

  async updateStatus<T>(kind: ResourceKind<T>, object: T, _options?: RequestOptions): Promise<T> {
    const o = prepare(kind, object);
    checkPath(kind, o.metadata.name, o.metadata.namespace);
    const current = this.current(kind, o);
    const next = deepCopy(current);
    (next as { status?: unknown }).status = deepCopy((o as { status?: unknown }).status);
    return deepCopy(this.put(next)) as T;
  }

  async patch<T>(
    kind: ResourceKind<T>,
    name: string,
    namespace: string,
    patch: unknown,
    options: PatchType | PatchOptions = {},
  ): Promise<T> {
    // A strategic merge patch is applied as a merge patch: lists are replaced, not merged by their keys.
    const type = (typeof options === 'string' ? options : options.type) ?? 'merge';
    checkPath(kind, name, namespace);
    const current = this.store.get(
      storeKey(kind.apiVersion, kind.kind, kind.namespaced ? namespace : '', name),
    );
    if (!current) throw notFound(kind, name);
    const patched = type === 'json' ? jsonPatch(current, patch) : mergePatch(deepCopy(current), patch);
    const next = patched as Stored;
    const requested = (patch as { metadata?: { resourceVersion?: string } } | undefined)?.metadata
      ?.resourceVersion;
    if (type !== 'json' && requested && requested !== current.metadata.resourceVersion)
      throw conflict(kind, name);
    next.metadata.resourceVersion = current.metadata.resourceVersion;
    if (specOf(next) !== specOf(current)) next.metadata.generation = (current.metadata.generation ?? 1) + 1;
    keepImmutable(next, current);
    if (unchanged(next, current)) return deepCopy(current) as T;
    return deepCopy(this.putOrFinalize(next)) as T;
  }

  /**
   * Server-side apply, simplified: creates the object when absent, else merges the configuration into it
   * as a merge patch would (a merge that changes nothing keeps the resourceVersion, as on the server). Field ownership is not tracked (no conflicts, no removal of fields left out):
   * test those against envtest.
   */
  async apply<T>(kind: ResourceKind<T>, object: T, options: ApplyOptions): Promise<T> {
    const o = prepare(kind, object);
    checkPath(kind, o.metadata.name, o.metadata.namespace);
    if (!options.fieldManager)
      throw new Error(`apply ${kind.kind} ${o.metadata.name}: a fieldManager is required`);
    const key = storeKey(kind.apiVersion, kind.kind, o.metadata.namespace, o.metadata.name);
    if (!this.store.has(key)) return this.create(kind, object);
    return this.patch(kind, o.metadata.name, o.metadata.namespace ?? '', o);
  }

  async delete<T>(
    kind: ResourceKind<T>,
    name: string,
    namespace?: string,
    _options?: DeleteOptions,
  ): Promise<void> {
    checkPath(kind, name, namespace);
    const key = storeKey(kind.apiVersion, kind.kind, kind.namespaced ? namespace : '', name);
    const current = this.store.get(key);
    if (!current) throw notFound(kind, name);
    if ((current.metadata.finalizers ?? []).length > 0) {
      // Finalizers hold the object: it is only marked for deletion, as the API server does.
      if (!current.metadata.deletionTimestamp) {
        const next = deepCopy(current);
        next.metadata.deletionTimestamp = this.now();
        this.put(next);
      }
      return;
    }
    this.store.delete(key);
  }

  private seed(object: KubernetesObject): void {
    if (!object.apiVersion || !object.kind || !object.metadata?.name) {
      throw new Error('FakeClient: a seeded object needs apiVersion, kind and metadata.name');
    }
    const o = deepCopy(object) as Stored;
    this.put(this.initialise(o));
  }

  private initialise(o: Stored): Stored {
    o.metadata.uid ??= randomUUID();
    o.metadata.creationTimestamp ??= this.now();
    o.metadata.generation ??= 1;
    return o;
  }

  private current(kind: ResourceKind<unknown>, o: Stored): Stored {
    const current = this.store.get(
      storeKey(kind.apiVersion, kind.kind, o.metadata.namespace, o.metadata.name),
    );
    if (!current) throw notFound(kind, o.metadata.name);
    const requested = o.metadata.resourceVersion;
    if (requested && requested !== current.metadata.resourceVersion) throw conflict(kind, o.metadata.name);
    return current;
  }

  private put(o: Stored): Stored {
    o.metadata.resourceVersion = String(++this.resourceVersion);
    this.store.set(keyOf(o), deepCopy(o));
    return o;
  }

  /** An object marked for deletion goes away once its last finalizer is removed. */
  private putOrFinalize(o: Stored): Stored {
    if (o.metadata.deletionTimestamp && (o.metadata.finalizers ?? []).length === 0) {
      this.store.delete(keyOf(o));
      return o;
    }
    return this.put(o);
  }
}

/** HttpClient's check of the names that go into a request's path, so that tests meet the same errors. */
function checkPath(
  kind: ResourceKind<unknown>,
  name: string | undefined,
  namespace: string | undefined,
): void {
  checkPathSegments(kind.kind, name, kind.namespaced ? namespace : undefined);
}

function storeKey(apiVersion: string, kind: string, namespace: string | undefined, name: string): string {
  return `${apiVersion}|${kind}|${objectKey(namespace, name)}`;
}

function keyOf(o: Stored): string {
  return storeKey(o.apiVersion ?? '', o.kind ?? '', o.metadata.namespace, o.metadata.name);
}

function prepare<T>(kind: ResourceKind<T>, object: T): Stored {
  const o = deepCopy(object) as Stored;
  if (!o.metadata?.name) throw new ApiError(422, 'Invalid', `${kind.kind}: metadata.name: Required value`);
  o.apiVersion ??= kind.apiVersion;
  o.kind ??= kind.kind;
  if (!kind.namespaced) delete o.metadata.namespace;
  return o;
}

function resourceName(kind: ResourceKind<unknown>): string {
  return kind.group ? `${kind.plural}.${kind.group}` : kind.plural;
}

function notFound(kind: ResourceKind<unknown>, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${resourceName(kind)} "${name}" not found`);
}

function conflict(kind: ResourceKind<unknown>, name: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${resourceName(kind)} "${name}": the object has been modified; ` +
      'please apply your changes to the latest version and try again',
  );
}

/** What bumps metadata.generation: everything but metadata and status. */
function specOf(o: KubernetesObject): string {
  const { metadata: _metadata, status: _status, ...rest } = o as KubernetesObject & { status?: unknown };
  return JSON.stringify(rest);
}

/**
 * Whether a write changes nothing: the API server then stores nothing and keeps the resourceVersion, so
 * no watch event follows (a controller that applies the same configuration again does not loop).
 */
function unchanged(next: Stored, current: Stored): boolean {
  const strip = (o: Stored) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
  return canonical(strip(next)) === canonical(strip(current));
}

/** JSON with object keys sorted, so that key order does not count as a change. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** A copy of a stored object for a reader: its metadata only with `metadataOnly`. */
function readAs(
  kind: ResourceKind<unknown>,
  stored: Stored,
  options: GetOptions | undefined,
): KubernetesObject {
  return options?.metadataOnly ? toPartialObjectMetadata(kind, deepCopy(stored)) : deepCopy(stored);
}

function keepImmutable(next: Stored, current: Stored): void {
  next.metadata.uid = current.metadata.uid;
  next.metadata.creationTimestamp = current.metadata.creationTimestamp;
  if (current.metadata.deletionTimestamp)
    next.metadata.deletionTimestamp = current.metadata.deletionTimestamp;
}

/** A JSON patch applied as the API server does: a patch it cannot apply is a 422 Invalid. */
function jsonPatch(current: Stored, patch: unknown): unknown {
  try {
    return applyJsonPatch(current, patch as JsonPatchOperation[]);
  } catch (error) {
    if (error instanceof JsonPatchError) throw new ApiError(422, 'Invalid', error.message);
    throw error;
  }
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}
