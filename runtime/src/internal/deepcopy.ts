/**
 * A deep copy of a JSON value (what informers hold: objects parsed from the API's JSON), Dates included.
 * About 1 us for a 1.4 KB object, against 7 us for structuredClone or a JSON round trip (Node 20,
 * `npm run bench:runtime` measures it through the cache). Every cached read makes one, so it is written
 * for speed: primitives are copied in the loop rather than by a call each, and keys are walked with
 * for-in (V8's enum cache) rather than an array of them per object.
 */
export function deepCopy<T>(value: T): T {
  return typeof value === 'object' && value !== null ? (copyObject(value) as T) : value;
}

function copyObject(value: object): unknown {
  if (Array.isArray(value)) {
    const copy = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      copy[i] = typeof item === 'object' && item !== null ? copyObject(item) : item;
    }
    return copy;
  }
  if (value instanceof Date) return new Date(value.getTime());
  const copy: Record<string, unknown> = {};
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const item: unknown = (value as Record<string, unknown>)[key];
    copy[key] = typeof item === 'object' && item !== null ? copyObject(item) : item;
  }
  return copy;
}
