/**
 * What each schema marker does to a schema, with controller-gen's type checks (Minimum on a string is an
 * error, integral bounds on integers, listMapKey only on a map list...). Markers apply in controller-gen's
 * priority order; `items:` variants apply to the array's items afterwards.
 */
import { ITEMS_PREFIX, type Marker } from '../markers/index.js';
import type { JSONSchemaProps, ValidationRule } from './types.js';

const V = 'kubebuilder:validation:';

/** Reports a marker that cannot apply; `message` says why, `hint` how to fix it. */
export type MarkerProblem = (marker: Marker, message: string, hint?: string) => void;

const ALIASES: Record<string, string> = {
  'k8s:maxItems': `${V}MaxItems`,
  'k8s:minimum': `${V}Minimum`,
  'k8s:maximum': `${V}Maximum`,
  'k8s:listType': 'listType',
  'k8s:listMapKey': 'listMapKey',
  [`${V}XPreserveUnknownFields`]: 'kubebuilder:pruning:PreserveUnknownFields',
  [`${V}EmbeddedResource`]: `${V}XEmbeddedResource`,
};

function priority(name: string): number {
  switch (name) {
    case `${V}Type`:
    case `${V}XIntOrString`:
    case 'listType':
    case 'default':
      return 9;
    case `${V}AtMostOneOf`:
      return 11;
    case `${V}ExactlyOneOf`:
      return 12;
    case `${V}AtLeastOneOf`:
      return 13;
    default:
      return 10;
  }
}

const isNumeric = (s: JSONSchemaProps) => s.type === 'integer' || s.type === 'number';
const isTextual = (s: JSONSchemaProps) => s.type === 'string' || s['x-kubernetes-int-or-string'] === true;
const typeOf = (s: JSONSchemaProps) =>
  s.type ?? (s['x-kubernetes-int-or-string'] ? 'int-or-string' : 'untyped');

/** Markers that change schemas; the others (optional, resource...) are read elsewhere. */
export function isSchemaMarker(marker: Marker): boolean {
  const name = canonicalName(
    marker.name.startsWith(ITEMS_PREFIX) ? V + marker.name.slice(ITEMS_PREFIX.length) : marker.name,
  );
  return APPLIERS[name] !== undefined;
}

function canonicalName(name: string): string {
  return ALIASES[name] ?? name;
}

type Applier = (
  schema: JSONSchemaProps,
  value: unknown,
  fail: (message: string, hint?: string) => void,
) => void;

function numericBound(key: 'maximum' | 'minimum' | 'multipleOf', word: string): Applier {
  return (schema, value, fail) => {
    const n = value as number;
    if (!isNumeric(schema)) {
      return fail(
        `${word} applies to numbers, not to a ${typeOf(schema)}`,
        'remove the marker or change the type',
      );
    }
    if (schema.type === 'integer' && !Number.isInteger(n)) {
      return fail(
        `cannot apply the non-integral ${word} ${n} to an integer`,
        `use a whole number, or type the field as number`,
      );
    }
    schema[key] = n;
  };
}

function textual(key: 'maxLength' | 'minLength' | 'pattern', word: string): Applier {
  return (schema, value, fail) => {
    if (!isTextual(schema))
      return fail(
        `${word} applies to strings, not to a ${typeOf(schema)}`,
        'remove the marker or change the type',
      );
    if (key === 'pattern') {
      try {
        new RegExp(value as string, 'u');
      } catch (error) {
        return fail(`the pattern does not compile: ${(error as Error).message}`);
      }
      schema.pattern = value as string;
    } else schema[key] = value as number;
  };
}

function arrayOnly(key: 'maxItems' | 'minItems' | 'uniqueItems', word: string): Applier {
  return (schema, value, fail) => {
    if (schema.type !== 'array') return fail(`${word} applies to arrays, not to a ${typeOf(schema)}`);
    if (key === 'uniqueItems') schema.uniqueItems = value as boolean;
    else schema[key] = value as number;
  };
}

function objectOnly(key: 'maxProperties' | 'minProperties', word: string): Applier {
  return (schema, value, fail) => {
    if (schema.type !== 'object') return fail(`${word} applies to objects, not to a ${typeOf(schema)}`);
    schema[key] = value as number;
  };
}

function addRule(schema: JSONSchemaProps, rule: ValidationRule): void {
  schema['x-kubernetes-validations'] = [...(schema['x-kubernetes-validations'] ?? []), rule];
}

function oneOfRule(kind: 'AtMostOneOf' | 'ExactlyOneOf' | 'AtLeastOneOf'): Applier {
  return (schema, value, fail) => {
    const fields = value as string[];
    if (fields.length === 0) return;
    const nested = fields.filter((f) => f.includes('.'));
    if (nested.length > 0) return fail(`cannot reference nested fields: ${nested.join(',')}`);
    const sum = fields.map((f) => `(has(self.${f})?1:0)`).join('+');
    const list = `[${fields.join(' ')}]`;
    if (kind === 'AtMostOneOf')
      addRule(schema, { rule: `${sum} <= 1`, message: `at most one of the fields in ${list} may be set` });
    if (kind === 'ExactlyOneOf')
      addRule(schema, { rule: `${sum} == 1`, message: `exactly one of the fields in ${list} must be set` });
    if (kind === 'AtLeastOneOf') {
      addRule(schema, {
        rule: fields.map((f) => `has(self.${f})`).join('||'),
        message: `at least one of the fields in ${list} must be set`,
      });
    }
  };
}

const REASONS = ['FieldValueRequired', 'FieldValueInvalid', 'FieldValueForbidden', 'FieldValueDuplicate'];

const APPLIERS: Record<string, Applier> = {
  [`${V}Maximum`]: numericBound('maximum', 'maximum'),
  [`${V}Minimum`]: numericBound('minimum', 'minimum'),
  [`${V}MultipleOf`]: numericBound('multipleOf', 'multipleOf'),
  [`${V}ExclusiveMaximum`]: (s, v, fail) =>
    isNumeric(s)
      ? void (s.exclusiveMaximum = v as boolean)
      : fail(`exclusiveMaximum applies to numbers, not to a ${typeOf(s)}`),
  [`${V}ExclusiveMinimum`]: (s, v, fail) =>
    isNumeric(s)
      ? void (s.exclusiveMinimum = v as boolean)
      : fail(`exclusiveMinimum applies to numbers, not to a ${typeOf(s)}`),
  [`${V}MaxLength`]: textual('maxLength', 'maxLength'),
  [`${V}MinLength`]: textual('minLength', 'minLength'),
  [`${V}Pattern`]: textual('pattern', 'pattern'),
  [`${V}MaxItems`]: arrayOnly('maxItems', 'maxItems'),
  [`${V}MinItems`]: arrayOnly('minItems', 'minItems'),
  [`${V}UniqueItems`]: arrayOnly('uniqueItems', 'uniqueItems'),
  [`${V}MaxProperties`]: objectOnly('maxProperties', 'maxProperties'),
  [`${V}MinProperties`]: objectOnly('minProperties', 'minProperties'),
  [`${V}Enum`]: (s, v) => void (s.enum = v as unknown[]),
  [`${V}Format`]: (s, v) => void (s.format = v as string),
  [`${V}Type`]: (s, v) => void (s.type = v as string),
  'kubebuilder:pruning:PreserveUnknownFields': (s) => void (s['x-kubernetes-preserve-unknown-fields'] = true),
  [`${V}XEmbeddedResource`]: (s) => void (s['x-kubernetes-embedded-resource'] = true),
  [`${V}XIntOrString`]: (s) => void (s['x-kubernetes-int-or-string'] = true),
  [`${V}XValidation`]: (s, v, fail) => {
    const args = v as ValidationRule;
    if (args.reason !== undefined && !REASONS.includes(args.reason)) {
      return fail(`invalid reason ${args.reason}`, `use one of ${REASONS.join(', ')}`);
    }
    const rule: ValidationRule = { rule: args.rule };
    if (args.message) rule.message = args.message;
    if (args.messageExpression) rule.messageExpression = args.messageExpression;
    if (args.reason) rule.reason = args.reason;
    if (args.fieldPath) rule.fieldPath = args.fieldPath;
    if (args.optionalOldSelf !== undefined) rule.optionalOldSelf = args.optionalOldSelf;
    addRule(s, rule);
  },
  [`${V}AtMostOneOf`]: oneOfRule('AtMostOneOf'),
  [`${V}ExactlyOneOf`]: oneOfRule('ExactlyOneOf'),
  [`${V}AtLeastOneOf`]: oneOfRule('AtLeastOneOf'),
  nullable: (s) => void (s.nullable = true),
  'kubebuilder:default': (s, v) => {
    const isEmptyObject =
      v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0;
    s.default = s.type === 'array' && isEmptyObject ? [] : v;
  },
  default: (s, v) => {
    if (v !== undefined) s.default = v;
  },
  'kubebuilder:example': (s, v) => void (s.example = v),
  'kubebuilder:title': (s, v, fail) =>
    typeof v === 'string' ? void (s.title = v) : fail('the title must be a string'),
  'k8s:immutable': (s) => addRule(s, { rule: 'self == oldSelf', message: 'field is immutable' }),
  'k8s:required': (s) => {
    if (s.type === 'string' && s.minLength === undefined) s.minLength = 1;
    if (s.type === 'array' && s.minItems === undefined) s.minItems = 1;
    if (s.type === 'object' && s.minProperties === undefined) s.minProperties = 1;
  },
  listType: (s, v, fail) => {
    if (s.type !== 'array') return fail(`listType applies to arrays, not to a ${typeOf(s)}`);
    if (v !== 'map' && v !== 'set' && v !== 'atomic')
      return fail('listType must be "map", "set" or "atomic"');
    s['x-kubernetes-list-type'] = v;
  },
  listMapKey: (s, v, fail) => {
    if (s.type !== 'array') return fail(`listMapKey applies to arrays, not to a ${typeOf(s)}`);
    if (s['x-kubernetes-list-type'] !== 'map') {
      return fail('listMapKey needs an associative list', 'add +listType=map to the same field');
    }
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    if (!keys.includes(v as string)) s['x-kubernetes-list-map-keys'] = [...keys, v as string];
  },
  mapType: (s, v, fail) => {
    if (s.type !== 'object') return fail(`mapType applies to objects, not to a ${typeOf(s)}`);
    if (v !== 'atomic' && v !== 'granular') return fail('mapType must be "granular" or "atomic"');
    s['x-kubernetes-map-type'] = v;
  },
  structType: (s, v, fail) => {
    if (s.type !== 'object' && s.type !== undefined)
      return fail(`structType applies to objects, not to a ${typeOf(s)}`);
    if (v !== 'atomic' && v !== 'granular') return fail('structType must be "granular" or "atomic"');
    s['x-kubernetes-map-type'] = v;
  },
  'kubebuilder:externalDocs': (s, v, fail) => {
    const args = v as { url: string; description?: string };
    try {
      new URL(args.url);
    } catch {
      return fail(`invalid url ${JSON.stringify(args.url)}`);
    }
    s.externalDocs = args.description ? { url: args.url, description: args.description } : { url: args.url };
  },
};

/** Applies the schema markers among `markers` to `schema`, in controller-gen's order. `what` names it. */
export function applyMarkers(
  schema: JSONSchemaProps,
  markers: readonly Marker[],
  what: string,
  problem: MarkerProblem,
): void {
  const direct: { marker: Marker; name: string }[] = [];
  const items: { marker: Marker; name: string }[] = [];
  for (const marker of markers) {
    if (marker.name.startsWith(ITEMS_PREFIX)) {
      const name = canonicalName(V + marker.name.slice(ITEMS_PREFIX.length));
      if (APPLIERS[name]) items.push({ marker, name });
    } else {
      const name = canonicalName(marker.name);
      if (APPLIERS[name]) direct.push({ marker, name });
    }
  }
  const byPriority = (a: { name: string }, b: { name: string }) => priority(a.name) - priority(b.name);
  const run = (target: JSONSchemaProps, { marker, name }: { marker: Marker; name: string }) => {
    const applier = APPLIERS[name];
    applier?.(target, marker.value, (message, hint) =>
      problem(marker, `+${marker.name} on ${what}: ${message}`, hint),
    );
  };
  for (const entry of direct.sort(byPriority)) run(schema, entry);
  checkDefault(schema, direct, what, problem);
  for (const entry of items.sort(byPriority)) {
    if (schema.type !== 'array' || schema.items === undefined) {
      problem(
        entry.marker,
        `+${entry.marker.name} on ${what}: items markers apply to arrays, not to a ${typeOf(schema)}`,
      );
      continue;
    }
    run(schema.items, entry);
  }
}

/** A default must be one of the enum values and of the schema's type (the apiserver rejects it otherwise). */
function checkDefault(
  schema: JSONSchemaProps,
  applied: readonly { marker: Marker; name: string }[],
  what: string,
  problem: MarkerProblem,
): void {
  if (schema.default === undefined) return;
  const marker = applied.find((a) => a.name === 'kubebuilder:default' || a.name === 'default')?.marker;
  if (!marker) return;
  const value = schema.default;
  const json = JSON.stringify(value);
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === json)) {
    problem(
      marker,
      `+${marker.name} on ${what}: the default ${json} is not one of the allowed values ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`,
      'use one of the enum values as the default',
    );
    return;
  }
  const actual = Array.isArray(value)
    ? 'array'
    : value === null
      ? 'null'
      : typeof value === 'number'
        ? Number.isInteger(value)
          ? 'integer'
          : 'number'
        : typeof value === 'object'
          ? 'object'
          : typeof value;
  const expected = schema.type;
  const fits =
    expected === undefined ||
    actual === expected ||
    (expected === 'number' && actual === 'integer') ||
    (actual === 'null' && schema.nullable === true) ||
    (schema['x-kubernetes-int-or-string'] === true && (actual === 'integer' || actual === 'string'));
  if (!fits) {
    problem(
      marker,
      `+${marker.name} on ${what}: the default ${json} is a ${actual}, but the field is a ${expected}`,
      `write a ${expected} default${expected === 'string' ? ' (quote it: "...")' : ''}`,
    );
  }
}
