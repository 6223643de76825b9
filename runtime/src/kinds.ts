/** How code names a kind of object: its group, version, kind, plural and scope. */
import type { KubernetesObject } from './types.js';

/** A kind of object and the resource that serves it. `T` is the object's TypeScript type. */
export interface ResourceKind<T = KubernetesObject> {
  /** The API group; `''` for the core group. */
  readonly group: string;
  readonly version: string;
  /** `group/version`, or just the version for the core group (`v1`). */
  readonly apiVersion: string;
  readonly kind: string;
  /** The resource name in URLs and RBAC rules: `guestbooks`. */
  readonly plural: string;
  readonly namespaced: boolean;
  /** Never set: carries `T` so that `client.get(kind, ...)` returns a `T`. */
  readonly __type?: T;
}

export interface GroupVersion {
  readonly group: string;
  readonly version: string;
  readonly apiVersion: string;
  /** The kind `kind` of this group-version. */
  kind<T = KubernetesObject>(
    kind: string,
    options: { plural: string; namespaced?: boolean },
  ): ResourceKind<T>;
}

function apiVersionOf(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

/** The group and version of a package of API types: `groupVersion('webapp.example.com', 'v1')`. */
export function groupVersion(group: string, version: string): GroupVersion {
  const apiVersion = apiVersionOf(group, version);
  return {
    group,
    version,
    apiVersion,
    kind: (kind, { plural, namespaced = true }) => ({ group, version, apiVersion, kind, plural, namespaced }),
  };
}

/** A kind not declared in this project, such as a built-in: `resourceKind<V1Pod>({ group: '', ... })`. */
export function resourceKind<T = KubernetesObject>(options: {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}): ResourceKind<T> {
  return { ...options, apiVersion: apiVersionOf(options.group, options.version) };
}

/** `namespace/name`, or `name` for a cluster-scoped object: the key of caches and work queues. */
export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

const kindKeys = new WeakMap<ResourceKind<unknown>, string>();

/**
 * `apiVersion/Kind`: how caches and clients tell kinds apart. Kept per kind object, as every cached read
 * looks its kind up (a string built each time costs more than the rest of the lookup).
 */
export function kindKey(kind: ResourceKind<unknown>): string {
  let key = kindKeys.get(kind);
  if (key === undefined) {
    key = `${kind.apiVersion}/${kind.kind}`;
    kindKeys.set(kind, key);
  }
  return key;
}
