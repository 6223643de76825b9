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

/**
 * Go's escapes of a quoted string (strconv.Quote's, which cel-go's strings.quote shares): every other
 * character as it is, not JSON.stringify's \u0007.
 */
export const GO_ESCAPES: Readonly<Record<string, string>> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '\\': '\\\\',
  '"': '\\"',
};
/** What Go counts as printable (unicode.IsPrint): letters, marks, numbers, punctuation, symbols, ' '. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/**
 * A string as Go's %q (strconv.Quote) prints it, as the API server's messages quote values: JSON's quoting
 * but for control and unprintable characters (\a, \x7f, \u200b where JSON has \u0007 or the character).
 */
export function goQuote(text: string): string {
  let out = '"';
  for (const ch of text) {
    const escaped = GO_ESCAPES[ch];
    if (escaped !== undefined) out += escaped;
    else if (PRINTABLE.test(ch)) out += ch;
    else {
      const cp = ch.codePointAt(0)!;
      // A lone surrogate reaches the API server as U+FFFD (JSON), which Go prints as it is.
      if (cp >= 0xd800 && cp <= 0xdfff) out += '\ufffd';
      else if (cp < 0x80) out += `\\x${cp.toString(16).padStart(2, '0')}`;
      else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
      else out += `\\U${cp.toString(16).padStart(8, '0')}`;
    }
  }
  return `${out}"`;
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
