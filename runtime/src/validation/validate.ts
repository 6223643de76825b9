/**
 * Checks an object against a CRD version's structural schema as kube-apiserver 1.36 does on a create (or an
 * update): defaults where a field is absent, nulls pruned where the field is not nullable, then the schema
 * (k8s.io/apiextensions-apiserver/pkg/apiserver/validation over kube-openapi's validator), in the API
 * server's own words; then the CEL rules (rules.ts) only when the schema found no error. Unknown
 * fields are warnings, as the API server's are. With an old object, an unchanged invalid value passes
 * (ratcheting), and transition rules see `oldSelf`.
 */
import { isCalendarDate } from './formats.js';
import { re2Matches } from './re2.js';
import type { CrdVersion } from './crd.js';
import { evaluateRules } from './rules.js';
import type { JSONSchemaProps } from './schema.js';
import { clone, deepEqual, goQuote, isObject, pathText, type FieldProblem, type PathStep } from './values.js';

export type { CrdVersion } from './crd.js';
export type { FieldProblem, PathStep } from './values.js';

const childSchema = (s: JSONSchemaProps, key: string): JSONSchemaProps | undefined =>
  s.properties?.[key] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);

/**
 * Structural defaulting and null pruning, in place: a default where a property is absent (or null and not
 * nullable), recursively into what was defaulted; then a null dropped where the field is not nullable.
 */
export function applyDefaults(value: unknown, s: JSONSchemaProps): void {
  if (Array.isArray(value)) {
    if (s.items) for (const item of value) applyDefaults(item, s.items);
    return;
  }
  if (!isObject(value)) return;
  for (const [key, prop] of Object.entries(s.properties ?? {})) {
    if (prop.default === undefined) continue;
    if (!(key in value) || (value[key] === null && !prop.nullable)) value[key] = clone(prop.default);
  }
  for (const key of Object.keys(value)) {
    const child = childSchema(s, key);
    if (!child) continue;
    if (value[key] === null) {
      if (!child.nullable && s.properties?.[key] !== undefined) delete value[key];
      continue;
    }
    applyDefaults(value[key], child);
  }
}

/** The JSON type of a value, as kube-openapi names it. */
function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'boolean') return 'boolean';
  return typeof v;
}

/** Go's %v of a number: integers as they are, floats in their shortest form. */
const goNumber = (n: number): string => String(n);

/** The value as field.Error prints a bad value: strings quoted, numbers and bools bare. */
function shown(v: unknown): string {
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return String(v);
  if (v === null) return 'null';
  return `"${typeOf(v) === 'array' ? 'array' : 'object'}"`;
}

const FORMATS: Record<string, (s: string) => boolean> = {
  uuid: (s) => /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/.test(s),
  uuid3: (s) => /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?3[0-9a-fA-F]{3}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/.test(s),
  uuid4: (s) =>
    /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?4[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}$/.test(s),
  uuid5: (s) =>
    /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?5[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}$/.test(s),
  byte: (s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s),
  // JavaScript's Date.parse takes February 30 (it rolls over); Go's time.Parse, which kube-openapi uses, does not.
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && isCalendarDate(s),
  'date-time': (s) =>
    /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/.test(s) &&
    isCalendarDate(s.slice(0, 10)) &&
    !Number.isNaN(Date.parse(s.replace(' ', 'T'))),
  datetime: (s) => FORMATS['date-time']!(s),
  ipv4: (s) => /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/.test(s),
  hostname: (s) =>
    s.length <= 253 &&
    /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/.test(
      s,
    ),
  // Go's durations, and go-openapi's days and weeks.
  duration: (s) => /^(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)\s*(?:ns|us|µs|ms|s|m|h|d|w))+$/.test(s) || s === '0',
  mac: (s) => /^(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$/.test(s),
};

/** The allowed values of an enum, as the API server lists them: each quoted. */
const NOT_SUPPORTED_VALUES = (values: unknown[]): string =>
  values.map((v) => (typeof v === 'string' ? goQuote(v) : `"${String(v)}"`)).join(', ');

const items = (n: number): string => `${n} item${n === 1 ? '' : 's'}`;

/** The range of integer formats the API server checks (kube-openapi); int64 is all a JSON number holds. */
const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };

interface Walk {
  problems: FieldProblem[];
  warnings: FieldProblem[];
  /** The stored object's value at the same place, for ratcheting; undefined where there is none. */
}

/** The old list item that correlates with `item` (same map keys), for map lists; else undefined. */
function correlatedItem(s: JSONSchemaProps, item: unknown, oldList: unknown): unknown {
  if (s['x-kubernetes-list-type'] !== 'map' || !Array.isArray(oldList) || !isObject(item)) return undefined;
  const keys = s['x-kubernetes-list-map-keys'] ?? [];
  return oldList.find((o) => isObject(o) && keys.every((k) => deepEqual(o[k], item[k])));
}

/** kube-openapi's error for an integer outside its format: it names no field. */
const integerFormat = (path: string, steps: PathStep[], format: string): FieldProblem => ({
  path: '<nil>',
  steps,
  message: `Invalid value: "": Checked value must be of type integer ${format === 'default format' ? '(default format)' : format} in ${path}`,
});

/** A field the schema does not know: the API server prunes it, with a warning. */
function unknownField(out: Walk, at: PathStep[]): void {
  out.warnings.push({
    path: pathText(at),
    steps: at,
    message: `unknown field "${pathText(at)}"`,
    warning: true,
  });
}

function walk(
  value: unknown,
  s: JSONSchemaProps,
  steps: PathStep[],
  old: unknown,
  hasOld: boolean,
  out: Walk,
  isRoot: boolean,
): void {
  // The path is text only for a message: most nodes have none.
  let pathMemo: string | undefined;
  const path = () => (pathMemo ??= pathText(steps));
  const push = (message: string) => {
    // Ratcheting: a value that did not change passes, even where it is invalid.
    if (hasOld && deepEqual(value, old)) return;
    out.problems.push({ path: path(), steps, message });
  };
  const invalid = (detail: string) => push(`Invalid value: ${shown(value)}: ${path()} in body ${detail}`);
  const actual = typeOf(value);
  if (s['x-kubernetes-int-or-string']) {
    if (actual !== 'integer' && actual !== 'string' && !(value === null && s.nullable)) {
      push(`Invalid value: "${actual}": ${path()} in body must be of type integer,string: "${actual}"`);
      return;
    }
  } else if (value === null) {
    if (!s.nullable && s.type !== undefined)
      push(`Invalid value: "null": ${path()} in body must be of type ${s.type}: "null"`);
    return;
  } else if (s.type !== undefined && actual !== s.type && !(s.type === 'number' && actual === 'integer')) {
    push(`Invalid value: "${actual}": ${path()} in body must be of type ${s.type}: "${actual}"`);
    if (s.type === 'integer' && actual === 'number')
      out.problems.push(integerFormat(path(), steps, 'default format'));
    // Pruning went first: an object where the schema declares no fields loses every field, with a warning.
    if (isObject(value) && !s['x-kubernetes-preserve-unknown-fields'])
      for (const key of Object.keys(value)) unknownField(out, [...steps, key]);
    return;
  }
  if (value === null) return;
  if (s.enum && !s.enum.some((e) => deepEqual(e, value)))
    push(`Unsupported value: ${shown(value)}: supported values: ${NOT_SUPPORTED_VALUES(s.enum)}`);
  if (typeof value === 'number' && s.type === 'integer') {
    // kube-openapi checks the format of integers, with an error that names no field.
    if (s.format === 'int32' && (value < INT32.min || value > INT32.max))
      out.problems.push(integerFormat(path(), steps, 'with format int32'));
  }
  if (typeof value === 'number') {
    if (s.maximum !== undefined) {
      if (s.exclusiveMaximum ? value >= s.maximum : value > s.maximum)
        invalid(`should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${goNumber(s.maximum)}`);
    }
    if (s.minimum !== undefined) {
      if (s.exclusiveMinimum ? value <= s.minimum : value < s.minimum)
        invalid(`should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${goNumber(s.minimum)}`);
    }
    if (s.multipleOf !== undefined && s.multipleOf > 0) {
      const q = value / s.multipleOf;
      if (Math.abs(q - Math.round(q)) > 1e-9) invalid(`should be a multiple of ${goNumber(s.multipleOf)}`);
    }
  }
  if (typeof value === 'string') {
    // The API server measures strings in characters (runes), not bytes nor UTF-16 units.
    const length = [...value].length;
    if (s.maxLength !== undefined && length > s.maxLength)
      push(`Too long: may not be more than ${s.maxLength} bytes`);
    if (s.minLength !== undefined && length < s.minLength)
      invalid(`should be at least ${s.minLength} chars long`);
    if (s.pattern !== undefined && re2Matches(s.pattern, value) === false)
      invalid(`should match '${s.pattern}'`);
    const format = s.format === undefined ? undefined : FORMATS[s.format];
    if (format && !format(value)) invalid(`must be of type ${s.format}: ${goQuote(value)}`);
  }
  if (Array.isArray(value)) {
    if (s.maxItems !== undefined && value.length > s.maxItems)
      push(`Too many: ${value.length}: must have at most ${items(s.maxItems)}`);
    if (s.minItems !== undefined && value.length < s.minItems)
      push(`Invalid value: ${value.length}: ${path()} in body should have at least ${s.minItems} items`);
    if (s.items) {
      value.forEach((item, i) => {
        const oldItem = correlatedItem(s, item, old);
        walk(item, s.items!, [...steps, i], oldItem, oldItem !== undefined, out, false);
      });
    }
    listTypeProblems(value, s, steps, out);
    return;
  }
  if (!isObject(value)) return;
  const keys = Object.keys(value);
  if (s.maxProperties !== undefined && keys.length > s.maxProperties)
    push(`Too many: ${keys.length}: must have at most ${items(s.maxProperties)}`);
  if (s.minProperties !== undefined && keys.length < s.minProperties)
    push(
      `Invalid value: ${keys.length}: ${path()} in body should have at least ${s.minProperties} properties`,
    );
  for (const r of s.required ?? [])
    if (!(r in value)) {
      const at = [...steps, r];
      if (!(hasOld && isObject(old) && !(r in old)))
        out.problems.push({ path: pathText(at), steps: at, message: 'Required value' });
    }
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  for (const key of keys) {
    if (isRoot && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) continue;
    if (embedded && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) continue;
    const child = childSchema(s, key);
    const oldChild = isObject(old) ? old[key] : undefined;
    const childHasOld = hasOld && isObject(old) && key in old;
    if (child) walk(value[key], child, [...steps, key], oldChild, childHasOld, out, false);
    else if (!s['x-kubernetes-preserve-unknown-fields'] && s.additionalProperties !== true) {
      // Pruned, as the API server prunes it before it stores the object or runs the rules.
      unknownField(out, [...steps, key]);
      delete value[key];
    }
  }
  if (embedded) {
    for (const key of ['apiVersion', 'kind'])
      if (!(key in value) || value[key] === '') {
        const at = [...steps, key];
        out.problems.push({ path: pathText(at), steps: at, message: 'Required value' });
      }
  }
}

/** Map and set lists: no duplicate keys (map) or items (set). */
function listTypeProblems(value: unknown[], s: JSONSchemaProps, steps: PathStep[], out: Walk): void {
  const type = s['x-kubernetes-list-type'];
  if (type === 'set') {
    value.forEach((item, i) => {
      if (value.findIndex((o) => deepEqual(o, item)) < i) {
        const at = [...steps, i];
        out.problems.push({ path: pathText(at), steps: at, message: `Duplicate value: ${shown(item)}` });
      }
    });
  } else if (type === 'map') {
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    value.forEach((item, i) => {
      if (!isObject(item)) return;
      const dup = value.findIndex((o) => isObject(o) && keys.every((k) => deepEqual(o[k], item[k])));
      if (dup < i) {
        const at = [...steps, i];
        const key = Object.fromEntries(keys.map((k) => [k, item[k]]));
        out.problems.push({
          path: pathText(at),
          steps: at,
          message: `Duplicate value: ${JSON.stringify(key)}`,
        });
      }
    });
  }
}

const NOT_CHECKED =
  'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

/** Whether a schema has CEL rules anywhere. */
function hasRules(s: JSONSchemaProps | undefined): boolean {
  if (!s) return false;
  if ((s['x-kubernetes-validations'] ?? []).length > 0) return true;
  return (
    Object.values(s.properties ?? {}).some(hasRules) ||
    hasRules(s.items) ||
    (typeof s.additionalProperties === 'object' && hasRules(s.additionalProperties))
  );
}

export interface Verdict {
  /** The object after defaulting and pruning, as the API server would store it. */
  object: Record<string, unknown>;
  errors: FieldProblem[];
  warnings: FieldProblem[];
}

/**
 * The API server's verdict on `object` (a create), or on an update from `old`, against one CRD version.
 * The object is not changed: defaulting works on a copy.
 */
export function validateObject(
  object: Record<string, unknown>,
  version: CrdVersion,
  old?: Record<string, unknown>,
): Verdict {
  const obj = clone(object);
  const prev = old === undefined ? undefined : clone(old);
  if (version.statusSubresource) {
    // The main resource does not write status: the API server drops it on a create and keeps the stored one.
    delete obj.status;
    if (prev) delete prev.status;
  }
  applyDefaults(obj, version.schema);
  if (prev) applyDefaults(prev, version.schema);
  const out: Walk = { problems: [], warnings: [] };
  const metadata = isObject(obj.metadata) ? obj.metadata : {};
  if (!metadata.name && !metadata.generateName)
    out.problems.push({
      path: 'metadata.name',
      steps: ['metadata', 'name'],
      message: 'Required value: name or generateName is required',
    });
  walk(obj, version.schema, [], prev, prev !== undefined, out, true);
  // A value of the wrong type or outside its enum stops the rules (the API server's hasBlockingErr);
  // other schema errors do not.
  const blocked = out.problems.some((p) =>
    / in body must be of type |^Unsupported value: |^Required value/.test(p.message),
  );
  if (hasRules(version.schema)) {
    if (blocked)
      out.problems.push({ path: '<nil>', steps: [], message: `Invalid value: null: ${NOT_CHECKED}` });
    else {
      const cel = evaluateRules(obj, version.schema, prev);
      out.problems.push(...cel.errors);
      out.warnings.push(...cel.warnings);
    }
  }
  return { object: obj, errors: out.problems, warnings: out.warnings };
}
