/**
 * RFC 6902 JSON patches computed by diffing two JSON documents: what a defaulting webhook answers.
 *
 * Objects are compared key by key: a key only in `after` is an `add`, a key only in `before` a `remove`, and
 * a key in both is compared again one level down. Arrays are compared index by index: shared indices
 * element by element (so changing one container's image yields `/spec/containers/0/image`), extra
 * elements are added at the end, surplus elements are removed from the end, the last first, so that every
 * index is still valid when its operation applies. Inserting at the front of an array therefore yields
 * one operation per element after it rather than a single `add`; the patch is longer but always correct,
 * which matters more than its length: the apiserver applies it as it is. Values of different JSON types
 * (a string becoming an object, an array becoming null) are `replace`d whole. (Applying patches is the API
 * server's job: tests and FakeClient use applyJsonPatch of @kubesmith/runtime/testing.)
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type JsonPatchOperation =
  | { op: 'add'; path: string; value: JsonValue }
  | { op: 'replace'; path: string; value: JsonValue }
  | { op: 'remove'; path: string };

/** `~` becomes `~0` and `/` becomes `~1` (RFC 6901), in that order. */
export function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The operations that turn `before` into `after`; empty when they are equal. */
export function createPatch(before: JsonValue, after: JsonValue): JsonPatchOperation[] {
  const operations: JsonPatchOperation[] = [];
  diff(before, after, '', operations);
  return operations;
}

function isObject(value: JsonValue): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function diff(before: JsonValue, after: JsonValue, path: string, out: JsonPatchOperation[]): void {
  if (isObject(before) && isObject(after)) {
    for (const key of Object.keys(before)) {
      const child = `${path}/${escapePointerToken(key)}`;
      if (!Object.hasOwn(after, key)) out.push({ op: 'remove', path: child });
      else diff(before[key] as JsonValue, after[key] as JsonValue, child, out);
    }
    for (const key of Object.keys(after)) {
      if (!Object.hasOwn(before, key)) {
        out.push({ op: 'add', path: `${path}/${escapePointerToken(key)}`, value: after[key] as JsonValue });
      }
    }
    return;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const shared = Math.min(before.length, after.length);
    for (let i = 0; i < shared; i++) diff(before[i] as JsonValue, after[i] as JsonValue, `${path}/${i}`, out);
    for (let i = shared; i < after.length; i++)
      out.push({ op: 'add', path: `${path}/${i}`, value: after[i] as JsonValue });
    for (let i = before.length - 1; i >= shared; i--) out.push({ op: 'remove', path: `${path}/${i}` });
    return;
  }
  if (!deepEqual(before, after)) out.push({ op: 'replace', path, value: after });
}

export function deepEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i] as JsonValue));
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k] as JsonValue, b[k] as JsonValue))
    );
  }
  return false;
}
