/**
 * A deep copy of a JSON value (what informers hold: objects parsed from the API's JSON), Dates included.
 * Every cached read makes one, so it is written for speed (about 0.5 to 1 us for a 1.4 KB object, against
 * 7 us for structuredClone or a JSON round trip, Node 20): each object is first copied whole with a
 * spread, which V8 does in one allocation of the original's shape, then its object-valued properties
 * are replaced by their copies; primitives are never copied one by one.
 */
export function deepCopy<T>(value: T): T {
  return typeof value === 'object' && value !== null ? (copyObject(value) as T) : value;
}

function copyObject(value: object): unknown {
  if (Array.isArray(value)) {
    const copy: unknown[] = value.slice();
    for (let i = 0; i < copy.length; i++) {
      const item = copy[i];
      if (typeof item === 'object' && item !== null) copy[i] = copyObject(item);
    }
    return copy;
  }
  if (value instanceof Date) return new Date(value.getTime());
  const copy: Record<string, unknown> = { ...value };
  for (const key in copy) {
    const item = copy[key];
    // for-in also walks inherited enumerable keys: those are not the object's, and not copied.
    if (typeof item === 'object' && item !== null && Object.hasOwn(copy, key)) copy[key] = copyObject(item);
  }
  return copy;
}
