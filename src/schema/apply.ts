/**
 * What each schema marker does to a schema, with controller-gen's type checks (Minimum on a string is an
 * error, integral bounds on integers, listMapKey only on a map list...). Markers apply in controller-gen's
 * priority order; `items:` variants apply to the array's items afterwards.
 */
import { ITEMS_PREFIX, type Marker } from '../markers/index.js';
import { celProblem, re2Problem, valueProblems } from './checks.js';
import { combineUse, useShape } from './combine.js';
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

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const isNumeric = (s: JSONSchemaProps) => s.type === 'integer' || s.type === 'number';
const isTextual = (s: JSONSchemaProps) => s.type === 'string' || s['x-kubernetes-int-or-string'] === true;
const withArticle = (word: string) => `${/^[aeiou]/.test(word) ? 'an' : 'a'} ${word}`;
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
        `${word} applies to numbers, not to ${withArticle(typeOf(schema))}`,
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

/** As Go's `omitempty`: `=false` leaves nothing behind. */
function exclusive(key: 'exclusiveMaximum' | 'exclusiveMinimum'): Applier {
  return (schema, value, fail) => {
    if (!isNumeric(schema)) return fail(`${key} applies to numbers, not to ${withArticle(typeOf(schema))}`);
    if (value === true) schema[key] = true;
    else delete schema[key];
  };
}

function textual(key: 'maxLength' | 'minLength' | 'pattern', word: string): Applier {
  return (schema, value, fail) => {
    if (!isTextual(schema))
      return fail(
        `${word} applies to strings, not to ${withArticle(typeOf(schema))}`,
        'remove the marker or change the type',
      );
    if (key === 'pattern') {
      // The apiserver compiles patterns with Go's regexp (RE2): JavaScript accepting one is not enough.
      const why = re2Problem(value as string);
      if (why) return fail(why, 'write the pattern in RE2 syntax (no lookaround, backreferences or \\u)');
      schema.pattern = value as string;
    } else schema[key] = value as number;
  };
}

function arrayOnly(key: 'maxItems' | 'minItems' | 'uniqueItems', word: string): Applier {
  return (schema, value, fail) => {
    if (schema.type !== 'array')
      return fail(`${word} applies to arrays, not to ${withArticle(typeOf(schema))}`);
    // As Go's `omitempty`: uniqueItems=false leaves nothing behind.
    if (key === 'uniqueItems') {
      if (value === true) schema.uniqueItems = true;
    } else schema[key] = value as number;
  };
}

function objectOnly(key: 'maxProperties' | 'minProperties', word: string): Applier {
  return (schema, value, fail) => {
    if (schema.type !== 'object')
      return fail(`${word} applies to objects, not to ${withArticle(typeOf(schema))}`);
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

const TYPES = ['string', 'number', 'integer', 'boolean', 'array', 'object'];
const REASONS = ['FieldValueRequired', 'FieldValueInvalid', 'FieldValueForbidden', 'FieldValueDuplicate'];

const APPLIERS: Record<string, Applier> = {
  [`${V}Maximum`]: numericBound('maximum', 'maximum'),
  [`${V}Minimum`]: numericBound('minimum', 'minimum'),
  [`${V}MultipleOf`]: numericBound('multipleOf', 'multipleOf'),
  [`${V}ExclusiveMaximum`]: exclusive('exclusiveMaximum'),
  [`${V}ExclusiveMinimum`]: exclusive('exclusiveMinimum'),
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
  [`${V}Type`]: (s, v, fail) =>
    TYPES.includes(v as string)
      ? void (s.type = v as string)
      : fail(`invalid type ${JSON.stringify(v)}`, `use one of ${TYPES.join(', ')}`),
  'kubebuilder:pruning:PreserveUnknownFields': (s) => void (s['x-kubernetes-preserve-unknown-fields'] = true),
  [`${V}XEmbeddedResource`]: (s) => void (s['x-kubernetes-embedded-resource'] = true),
  [`${V}XIntOrString`]: (s) => void (s['x-kubernetes-int-or-string'] = true),
  [`${V}XValidation`]: (s, v, fail) => {
    const args = v as ValidationRule;
    if (args.reason !== undefined && !REASONS.includes(args.reason)) {
      return fail(`invalid reason ${args.reason}`, `use one of ${REASONS.join(', ')}`);
    }
    const why = celProblem(args.rule);
    if (why)
      return fail(
        `rule: ${why}`,
        'fix the CEL expression (https://kubernetes.io/docs/reference/using-api/cel/)',
      );
    if (args.messageExpression !== undefined) {
      const whyMessage = celProblem(args.messageExpression);
      if (whyMessage) return fail(`messageExpression: ${whyMessage}`, 'fix the CEL expression');
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
  // controller-gen takes the values of a Go enum type's constants, sorted; here the union or enum's values.
  'k8s:enum': (s, _v, fail) => {
    if (s.type !== 'string' || !s.enum) {
      return fail(
        `k8s:enum needs a string enum, not ${withArticle(typeOf(s))}`,
        "use a union of string literals ('a' | 'b') or a string enum",
      );
    }
    s.enum = [...s.enum].sort((a, b) => cmp(JSON.stringify(a), JSON.stringify(b)));
  },
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
    if (s.type !== 'array') return fail(`listType applies to arrays, not to ${withArticle(typeOf(s))}`);
    if (v !== 'map' && v !== 'set' && v !== 'atomic')
      return fail('listType must be "map", "set" or "atomic"');
    s['x-kubernetes-list-type'] = v;
  },
  listMapKey: (s, v, fail) => {
    if (s.type !== 'array') return fail(`listMapKey applies to arrays, not to ${withArticle(typeOf(s))}`);
    if (s['x-kubernetes-list-type'] !== 'map') {
      return fail('listMapKey needs an associative list', 'add +listType=map to the same field');
    }
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    if (!keys.includes(v as string)) s['x-kubernetes-list-map-keys'] = [...keys, v as string];
  },
  mapType: (s, v, fail) => {
    if (s.type !== 'object') return fail(`mapType applies to objects, not to ${withArticle(typeOf(s))}`);
    if (v !== 'atomic' && v !== 'granular') return fail('mapType must be "granular" or "atomic"');
    s['x-kubernetes-map-type'] = v;
  },
  structType: (s, v, fail) => {
    if (s.type !== 'object' && s.type !== undefined)
      return fail(`structType applies to objects, not to ${withArticle(typeOf(s))}`);
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

/**
 * Applies the schema markers among `markers` to `schema`, in controller-gen's order. `what` names it.
 * Where `isNamed` says a schema (the schema itself or its items) is a named type's, the markers combine
 * with that type's own (combine.ts) instead of overwriting them.
 */
export function applyMarkers(
  schema: JSONSchemaProps,
  markers: readonly Marker[],
  what: string,
  problem: MarkerProblem,
  isNamed: (schema: JSONSchemaProps) => boolean = () => false,
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
  /** Runs `entries` on `target`, or on the shape of a use of a named type, then combined with it. */
  const runAll = (target: JSONSchemaProps, entries: typeof direct, named: boolean) => {
    if (!named) {
      for (const entry of entries) run(target, entry);
      return;
    }
    const shape = useShape(target);
    for (const entry of entries) run(shape, entry);
    const conflict = combineUse(target, shape);
    const culprit = entries.find((e) => e.name === `${V}Type`) ?? entries[0];
    if (conflict && culprit)
      problem(culprit.marker, `+${culprit.marker.name} on ${what}: ${conflict}`, 'remove the marker');
  };
  const named = direct.length > 0 && isNamed(schema);
  runAll(schema, direct.sort(byPriority), named);
  const itemEntries = items.sort(byPriority);
  if (itemEntries.length > 0) {
    if (schema.type !== 'array' || schema.items === undefined) {
      for (const entry of itemEntries) {
        problem(
          entry.marker,
          `+${entry.marker.name} on ${what}: items markers apply to arrays, not to ${withArticle(typeOf(schema))}`,
        );
      }
    } else {
      // The items of a named array type are that type's too.
      runAll(schema.items, itemEntries, isNamed(schema.items) || isNamed(schema));
    }
  }
  checkDefault(schema, direct, what, problem);
}

/** A default must validate against the field's own schema (the apiserver rejects the CRD otherwise). */
function checkDefault(
  schema: JSONSchemaProps,
  applied: readonly { marker: Marker; name: string }[],
  what: string,
  problem: MarkerProblem,
): void {
  if (schema.default === undefined) return;
  const marker = applied.find((a) => a.name === 'kubebuilder:default' || a.name === 'default')?.marker;
  if (!marker) return;
  const { default: value, ...withoutDefault } = schema;
  const [first] = valueProblems(value, withoutDefault);
  if (first === undefined) return;
  const hint = first.includes('is not one of the allowed values')
    ? 'use one of the enum values as the default'
    : first.startsWith(`${JSON.stringify(value)} is a`)
      ? `write a${/^[aeiou]/.test(schema.type ?? '') ? 'n' : ''} ${schema.type} default${schema.type === 'string' ? ' (quote it: "...")' : ''}`
      : "change the default to one the field's validations accept";
  problem(marker, `+${marker.name} on ${what}: the default ${first}`, hint);
}
