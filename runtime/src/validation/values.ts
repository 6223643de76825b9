/** What the validator and its CEL rules share: field paths, problems, JSON value equality and copies. */

/** A step of a field path: a property name, or a list index. */
export type PathStep = string | number;

export interface FieldProblem {
  /** The field path as the API server prints it (`spec.ports[0].name`). */
  path: string;
  /** The steps of the path inside the object, for positions. */
  steps: PathStep[];
  /** The API server's message after the path (`Required value`). */
  message: string;
  warning?: true;
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function pathText(steps: readonly PathStep[]): string {
  let out = '';
  for (const step of steps) {
    if (typeof step === 'number') out += `[${step}]`;
    else if (/^[A-Za-z0-9_-]+$/.test(step) || out === '') out += out === '' ? step : `.${step}`;
    else out += `[${step}]`;
  }
  return out;
}

/** Whether two JSON values are equal. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

/** A deep copy of a JSON value (objects and arrays copied, scalars shared): defaulting works on copies. */
export function clone<T>(value: T): T {
  if (Array.isArray(value)) return value.map(clone) as T;
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(out, key, clone(value[key]));
  return out as T;
}

/** `target[key] = value`, as an own property even for `__proto__` (a key an object may well have). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
