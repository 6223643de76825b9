/**
 * The markers that shape schemas, each with its arguments and what it does (DESIGN §3), with
 * controller-gen's type checks (Minimum on a string is an error, integral bounds on integers, listMapKey
 * only on a map list...) and priorities. Validation markers also come as `+kubebuilder:validation:items:`
 * variants, which apply to an array's items; `+k8s:` aliases do what the marker they stand for does.
 */
import type { Fail, SchemaEffect } from '../markers/effects.js';
import { T } from '../markers/grammar.js';
import { defineMarker, optional, required, type MarkerDefinition, type Target } from '../markers/registry.js';
import { celProblem, re2Problem, valueProblems } from './checks.js';
import type { JSONSchemaProps, ValidationRule } from './types.js';

const V = 'kubebuilder:validation:';
export const ITEMS_PREFIX = `${V}items:`;

const FIELD: readonly Target[] = ['field'];
const TYPE: readonly Target[] = ['type'];
const FIELD_AND_TYPE: readonly Target[] = ['field', 'type'];

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const isNumeric = (s: JSONSchemaProps) => s.type === 'integer' || s.type === 'number';
const isTextual = (s: JSONSchemaProps) => s.type === 'string' || s['x-kubernetes-int-or-string'] === true;
const withArticle = (word: string) => `${/^[aeiou]/.test(word) ? 'an' : 'a'} ${word}`;
const typeOf = (s: JSONSchemaProps) =>
  s.type ?? (s['x-kubernetes-int-or-string'] ? 'int-or-string' : 'untyped');

function addRule(schema: JSONSchemaProps, rule: ValidationRule): void {
  schema['x-kubernetes-validations'] = [...(schema['x-kubernetes-validations'] ?? []), rule];
}

// Effects shared by several markers (a validation marker, its items: variant, its k8s: alias).

function numericBound(key: 'maximum' | 'minimum' | 'multipleOf'): SchemaEffect<number> {
  return {
    apply(schema, n, fail) {
      if (!isNumeric(schema)) {
        return fail(
          `${key} applies to numbers, not to ${withArticle(typeOf(schema))}`,
          'remove the marker or change the type',
        );
      }
      if (schema.type === 'integer' && !Number.isInteger(n)) {
        return fail(
          `cannot apply the non-integral ${key} ${n} to an integer`,
          `use a whole number, or type the field as number`,
        );
      }
      schema[key] = n;
    },
  };
}

/** As Go's `omitempty`: `=false` leaves nothing behind. */
function exclusive(key: 'exclusiveMaximum' | 'exclusiveMinimum'): SchemaEffect<boolean> {
  return {
    apply(schema, value, fail) {
      if (!isNumeric(schema)) return fail(`${key} applies to numbers, not to ${withArticle(typeOf(schema))}`);
      if (value) schema[key] = true;
      else delete schema[key];
    },
  };
}

function needsText(schema: JSONSchemaProps, key: string, fail: Fail): boolean {
  if (isTextual(schema)) return true;
  fail(
    `${key} applies to strings, not to ${withArticle(typeOf(schema))}`,
    'remove the marker or change the type',
  );
  return false;
}

function length(key: 'maxLength' | 'minLength'): SchemaEffect<number> {
  return {
    apply(schema, n, fail) {
      if (needsText(schema, key, fail)) schema[key] = n;
    },
  };
}

const pattern: SchemaEffect<string> = {
  apply(schema, value, fail) {
    if (!needsText(schema, 'pattern', fail)) return;
    // The apiserver compiles patterns with Go's regexp (RE2): JavaScript accepting one is not enough.
    const why = re2Problem(value);
    if (why) return fail(why, 'write the pattern in RE2 syntax (no lookaround, backreferences or \\u)');
    schema.pattern = value;
  },
};

function needsArray(schema: JSONSchemaProps, key: string, fail: Fail): boolean {
  if (schema.type === 'array') return true;
  fail(`${key} applies to arrays, not to ${withArticle(typeOf(schema))}`);
  return false;
}

function itemCount(key: 'maxItems' | 'minItems'): SchemaEffect<number> {
  return {
    apply(schema, n, fail) {
      if (needsArray(schema, key, fail)) schema[key] = n;
    },
  };
}

const uniqueItems: SchemaEffect<boolean> = {
  apply(schema, value, fail) {
    // As Go's `omitempty`: uniqueItems=false leaves nothing behind.
    if (needsArray(schema, 'uniqueItems', fail) && value) schema.uniqueItems = true;
  },
};

function propertyCount(key: 'maxProperties' | 'minProperties'): SchemaEffect<number> {
  return {
    apply(schema, n, fail) {
      if (schema.type !== 'object')
        return fail(`${key} applies to objects, not to ${withArticle(typeOf(schema))}`);
      schema[key] = n;
    },
  };
}

const TYPES = ['string', 'number', 'integer', 'boolean', 'array', 'object'];
const REASONS = ['FieldValueRequired', 'FieldValueInvalid', 'FieldValueForbidden', 'FieldValueDuplicate'];

const preserveUnknownFields: SchemaEffect<true> = {
  apply: (s) => void (s['x-kubernetes-preserve-unknown-fields'] = true),
};
const embeddedResource: SchemaEffect<true> = {
  apply: (s) => void (s['x-kubernetes-embedded-resource'] = true),
};

const xValidation: SchemaEffect<ValidationRule> = {
  apply(schema, args, fail) {
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
    addRule(schema, rule);
  },
};

function oneOfRule(
  kind: 'AtMostOneOf' | 'ExactlyOneOf' | 'AtLeastOneOf',
  priority: number,
): SchemaEffect<string[]> {
  return {
    priority,
    apply(schema, fields, fail) {
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
    },
  };
}

/** A default must validate against the field's own schema (the apiserver rejects the CRD otherwise). */
function checkDefault(schema: JSONSchemaProps, _value: unknown, fail: Fail): void {
  if (schema.default === undefined) return;
  const { default: value, ...withoutDefault } = schema;
  const [first] = valueProblems(value, withoutDefault);
  if (first === undefined) return;
  const hint = first.includes('is not one of the allowed values')
    ? 'use one of the enum values as the default'
    : first.startsWith(`${JSON.stringify(value)} is a`)
      ? `write a${/^[aeiou]/.test(schema.type ?? '') ? 'n' : ''} ${schema.type} default${schema.type === 'string' ? ' (quote it: "...")' : ''}`
      : "change the default to one the field's validations accept";
  fail(`the default ${first}`, hint);
}

const maximum = numericBound('maximum');
const minimum = numericBound('minimum');
const maxItems = itemCount('maxItems');
const listType: SchemaEffect<string> = {
  priority: 9,
  apply(schema, value, fail) {
    if (schema.type !== 'array')
      return fail(`listType applies to arrays, not to ${withArticle(typeOf(schema))}`);
    if (value !== 'map' && value !== 'set' && value !== 'atomic')
      return fail('listType must be "map", "set" or "atomic"');
    schema['x-kubernetes-list-type'] = value;
  },
};
const listMapKey: SchemaEffect<string> = {
  apply(schema, value, fail) {
    if (schema.type !== 'array')
      return fail(`listMapKey applies to arrays, not to ${withArticle(typeOf(schema))}`);
    if (schema['x-kubernetes-list-type'] !== 'map') {
      return fail('listMapKey needs an associative list', 'add +listType=map to the same field');
    }
    const keys = schema['x-kubernetes-list-map-keys'] ?? [];
    if (!keys.includes(value)) schema['x-kubernetes-list-map-keys'] = [...keys, value];
  },
};

/** A validation marker and its `items:` variant, which applies to the items of an array. */
function withItems<Value>(definition: MarkerDefinition<Value>): MarkerDefinition<Value>[] {
  const items: MarkerDefinition<Value> = {
    ...definition,
    name: ITEMS_PREFIX + definition.name.slice(V.length),
    help: `for array items: ${definition.help}`,
  };
  if (definition.schema) items.schema = { ...definition.schema, items: true };
  return [definition, items];
}

const requiredField = (value: boolean, precedence: number) => ({ required: { value, precedence } });

/** Validation markers, on properties and types. */
const VALIDATION: readonly MarkerDefinition[] = [
  defineMarker({
    name: `${V}Maximum`,
    targets: FIELD_AND_TYPE,
    value: required(T.number),
    help: 'the maximum numeric value',
    schema: maximum,
  }),
  defineMarker({
    name: `${V}Minimum`,
    targets: FIELD_AND_TYPE,
    value: required(T.number),
    help: 'the minimum numeric value',
    schema: minimum,
  }),
  defineMarker({
    name: `${V}ExclusiveMaximum`,
    targets: FIELD_AND_TYPE,
    value: required(T.bool),
    help: 'the maximum is exclusive',
    schema: exclusive('exclusiveMaximum'),
  }),
  defineMarker({
    name: `${V}ExclusiveMinimum`,
    targets: FIELD_AND_TYPE,
    value: required(T.bool),
    help: 'the minimum is exclusive',
    schema: exclusive('exclusiveMinimum'),
  }),
  defineMarker({
    name: `${V}MultipleOf`,
    targets: FIELD_AND_TYPE,
    value: required(T.number),
    help: 'the value must be a multiple of this one',
    schema: numericBound('multipleOf'),
  }),
  defineMarker({
    name: `${V}MinProperties`,
    targets: FIELD_AND_TYPE,
    value: required(T.int),
    help: 'the minimum number of keys of an object',
    schema: propertyCount('minProperties'),
  }),
  defineMarker({
    name: `${V}MaxProperties`,
    targets: FIELD_AND_TYPE,
    value: required(T.int),
    help: 'the maximum number of keys of an object',
    schema: propertyCount('maxProperties'),
  }),
  defineMarker({
    name: `${V}MaxLength`,
    targets: FIELD_AND_TYPE,
    value: required(T.int),
    help: 'the maximum length of a string',
    schema: length('maxLength'),
  }),
  defineMarker({
    name: `${V}MinLength`,
    targets: FIELD_AND_TYPE,
    value: required(T.int),
    help: 'the minimum length of a string',
    schema: length('minLength'),
  }),
  defineMarker({
    name: `${V}Pattern`,
    targets: FIELD_AND_TYPE,
    value: required(T.string),
    help: 'a regular expression the string must match',
    schema: pattern,
  }),
  defineMarker({
    name: `${V}MaxItems`,
    targets: FIELD_AND_TYPE,
    value: required(T.int),
    help: 'the maximum length of a list',
    schema: maxItems,
  }),
  defineMarker({
    name: `${V}MinItems`,
    targets: FIELD_AND_TYPE,
    value: required(T.int),
    help: 'the minimum length of a list',
    schema: itemCount('minItems'),
  }),
  defineMarker({
    name: `${V}UniqueItems`,
    targets: FIELD_AND_TYPE,
    value: required(T.bool),
    help: 'all items of the list must be unique',
    schema: uniqueItems,
  }),
  defineMarker({
    name: `${V}Enum`,
    targets: FIELD_AND_TYPE,
    value: required(T.list(T.any)),
    help: 'the exact values allowed',
    schema: { apply: (s, values) => void (s.enum = values) },
  }),
  defineMarker({
    name: `${V}Format`,
    targets: FIELD_AND_TYPE,
    value: required(T.string),
    help: 'the OpenAPI format (date-time, int32, byte...)',
    schema: { apply: (s, format) => void (s.format = format) },
  }),
  defineMarker({
    name: `${V}Type`,
    targets: FIELD_AND_TYPE,
    value: required(T.string),
    help: 'overrides the schema type',
    schema: {
      priority: 9,
      apply: (s, type, fail) =>
        TYPES.includes(type)
          ? void (s.type = type)
          : fail(`invalid type ${JSON.stringify(type)}`, `use one of ${TYPES.join(', ')}`),
    },
  }),
  defineMarker({
    name: `${V}XPreserveUnknownFields`,
    targets: FIELD_AND_TYPE,
    help: 'keeps unknown fields (x-kubernetes-preserve-unknown-fields)',
    schema: preserveUnknownFields,
  }),
  defineMarker({
    name: `${V}XEmbeddedResource`,
    targets: FIELD_AND_TYPE,
    help: 'an embedded Kubernetes object (x-kubernetes-embedded-resource)',
    schema: embeddedResource,
  }),
  defineMarker({
    name: `${V}XIntOrString`,
    targets: FIELD_AND_TYPE,
    help: 'an integer or a string (x-kubernetes-int-or-string)',
    schema: { priority: 9, apply: (s) => void (s['x-kubernetes-int-or-string'] = true) },
  }),
  defineMarker({
    name: `${V}XValidation`,
    targets: FIELD_AND_TYPE,
    args: {
      rule: required(T.string),
      message: optional(T.string),
      messageExpression: optional(T.string),
      reason: optional(T.string),
      fieldPath: optional(T.string),
      optionalOldSelf: optional(T.bool),
    },
    help: 'a CEL validation rule',
    schema: xValidation,
  }),
];

/**
 * On a kind: what of apiVersion, kind and metadata stays in the root's `required` (a Go kind, as TypeMeta is
 * inlined and ObjectMeta `omitempty`, requires none of them). Read by the schema builder's rootSchema.
 */
export const ROOT_REQUIRED = defineMarker({
  name: 'kubesmith:root:required',
  targets: TYPE,
  value: required(T.list(T.string)),
  help: "on a kind: apiVersion, kind or metadata stay in the root's required list",
});

/** On a kind: `=false` leaves apiVersion and kind without the standard descriptions (read by rootSchema). */
export const ROOT_TYPE_META_DESCRIPTIONS = defineMarker({
  name: 'kubesmith:root:typeMetaDescriptions',
  targets: TYPE,
  value: required(T.bool),
  help: 'on a kind: false leaves apiVersion and kind without their standard descriptions',
});

export const SCHEMA_MARKERS: readonly MarkerDefinition[] = [
  ROOT_REQUIRED,
  ROOT_TYPE_META_DESCRIPTIONS,
  ...VALIDATION.flatMap((definition) => withItems(definition)),
  // Type-only validation.
  defineMarker({
    name: `${V}AtMostOneOf`,
    targets: TYPE,
    value: required(T.list(T.string)),
    help: 'at most one of these fields may be set',
    schema: oneOfRule('AtMostOneOf', 11),
  }),
  defineMarker({
    name: `${V}ExactlyOneOf`,
    targets: TYPE,
    value: required(T.list(T.string)),
    help: 'exactly one of these fields must be set',
    schema: oneOfRule('ExactlyOneOf', 12),
  }),
  defineMarker({
    name: `${V}AtLeastOneOf`,
    targets: TYPE,
    value: required(T.list(T.string)),
    help: 'at least one of these fields must be set',
    schema: oneOfRule('AtLeastOneOf', 13),
  }),
  defineMarker({
    name: 'k8s:enum',
    targets: TYPE,
    help: 'the type is an enum of its string values',
    // controller-gen takes the values of a Go enum type's constants, sorted; here the union or enum's values.
    schema: {
      apply(s, _value, fail) {
        if (s.type !== 'string' || !s.enum) {
          return fail(
            `k8s:enum needs a string enum, not ${withArticle(typeOf(s))}`,
            "use a union of string literals ('a' | 'b') or a string enum",
          );
        }
        s.enum = [...s.enum].sort((a, b) => cmp(JSON.stringify(a), JSON.stringify(b)));
      },
    },
  }),
  // Field-only.
  defineMarker({
    name: `${V}Required`,
    targets: FIELD,
    help: 'the field is required (prefer +required)',
    field: requiredField(true, 3),
  }),
  defineMarker({
    name: `${V}Optional`,
    targets: FIELD,
    help: 'the field is optional (prefer +optional)',
    field: requiredField(false, 4),
  }),
  defineMarker({
    name: 'required',
    targets: FIELD,
    help: 'the field is required',
    field: requiredField(true, 1),
  }),
  defineMarker({
    name: 'optional',
    targets: FIELD,
    help: 'the field is optional',
    field: requiredField(false, 2),
  }),
  defineMarker({
    name: 'k8s:required',
    targets: FIELD,
    help: 'the field is required (and non-empty)',
    field: requiredField(true, 1),
    schema: {
      apply(s) {
        if (s.type === 'string' && s.minLength === undefined) s.minLength = 1;
        if (s.type === 'array' && s.minItems === undefined) s.minItems = 1;
        if (s.type === 'object' && s.minProperties === undefined) s.minProperties = 1;
      },
    },
  }),
  defineMarker({
    name: 'k8s:optional',
    targets: FIELD,
    help: 'the field is optional',
    field: requiredField(false, 2),
  }),
  defineMarker({
    name: 'nullable',
    targets: FIELD,
    help: 'the field may be null',
    schema: { apply: (s) => void (s.nullable = true) },
  }),
  defineMarker({
    name: 'kubebuilder:default',
    targets: FIELD,
    value: required(T.any),
    help: 'the default value',
    schema: {
      apply(s, v) {
        const isEmptyObject =
          v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0;
        s.default = s.type === 'array' && isEmptyObject ? [] : v;
      },
      check: checkDefault,
    },
  }),
  defineMarker({
    name: 'default',
    targets: FIELD,
    value: required(T.json),
    help: 'the default value, as JSON',
    schema: {
      priority: 9,
      apply(s, v) {
        if (v !== undefined) s.default = v;
      },
      check: checkDefault,
    },
  }),
  defineMarker({
    name: 'kubebuilder:example',
    targets: FIELD,
    value: required(T.any),
    help: 'an example value',
    schema: { apply: (s, v) => void (s.example = v) },
  }),
  defineMarker({
    name: `${V}EmbeddedResource`,
    targets: FIELD,
    help: 'an embedded Kubernetes object',
    schema: embeddedResource,
  }),
  defineMarker({
    name: `${V}Schemaless`,
    targets: FIELD,
    help: 'emit no schema for this field (use with PreserveUnknownFields)',
    field: { schemaless: true },
  }),
  defineMarker({
    name: 'k8s:immutable',
    targets: FIELD,
    help: 'the field cannot change once set',
    field: { immutable: true },
    schema: { apply: (s) => addRule(s, { rule: 'self == oldSelf', message: 'field is immutable' }) },
  }),
  defineMarker({
    name: 'k8s:maxItems',
    targets: FIELD,
    value: required(T.int),
    help: 'the maximum length of a list',
    schema: maxItems,
  }),
  defineMarker({
    name: 'k8s:minimum',
    targets: FIELD,
    value: required(T.number),
    help: 'the minimum numeric value',
    schema: minimum,
  }),
  defineMarker({
    name: 'k8s:maximum',
    targets: FIELD,
    value: required(T.number),
    help: 'the maximum numeric value',
    schema: maximum,
  }),
  defineMarker({
    name: 'kubesmith:example',
    targets: FIELD,
    value: required(T.json),
    help: 'an example value, as JSON (any value, where +kubebuilder:example takes a marker value)',
    schema: { apply: (s, v) => void (s.example = v) },
  }),
  // Field and type.
  ...(['allOf', 'anyOf', 'oneOf', 'not'] as const).map((key) =>
    defineMarker({
      name: `kubesmith:validation:${key}`,
      targets: FIELD_AND_TYPE,
      value: required(T.json),
      help: `${key}: ${key === 'not' ? 'a schema' : 'a list of schemas'} as JSON (value validations), verbatim`,
      schema: {
        apply(s, v, fail) {
          const isSchema = (x: unknown) => typeof x === 'object' && x !== null && !Array.isArray(x);
          if (key === 'not') {
            if (!isSchema(v)) return fail('expected a JSON object, a schema');
            s.not = v as JSONSchemaProps;
          } else {
            if (!Array.isArray(v) || !v.every(isSchema)) return fail('expected a JSON list of schemas');
            s[key] = v as JSONSchemaProps[];
          }
        },
      },
    }),
  ),
  defineMarker({
    name: 'kubebuilder:pruning:PreserveUnknownFields',
    targets: FIELD_AND_TYPE,
    help: 'keeps unknown fields',
    schema: preserveUnknownFields,
  }),
  defineMarker({
    name: 'kubebuilder:title',
    targets: FIELD_AND_TYPE,
    value: required(T.any),
    help: 'the schema title',
    schema: {
      apply: (s, v, fail) =>
        typeof v === 'string' ? void (s.title = v) : fail('the title must be a string'),
    },
  }),
  defineMarker({
    name: 'listType',
    targets: FIELD_AND_TYPE,
    value: required(T.string),
    help: 'atomic, set or map',
    schema: listType,
  }),
  defineMarker({
    name: 'listMapKey',
    targets: FIELD_AND_TYPE,
    value: required(T.string),
    help: 'a key field of a map list',
    schema: listMapKey,
  }),
  defineMarker({
    name: 'mapType',
    targets: FIELD_AND_TYPE,
    value: required(T.string),
    help: 'atomic or granular',
    schema: {
      apply(s, v, fail) {
        if (s.type !== 'object') return fail(`mapType applies to objects, not to ${withArticle(typeOf(s))}`);
        if (v !== 'atomic' && v !== 'granular') return fail('mapType must be "granular" or "atomic"');
        s['x-kubernetes-map-type'] = v;
      },
    },
  }),
  defineMarker({
    name: 'structType',
    targets: FIELD_AND_TYPE,
    value: required(T.string),
    help: 'atomic or granular',
    schema: {
      apply(s, v, fail) {
        if (s.type !== 'object' && s.type !== undefined)
          return fail(`structType applies to objects, not to ${withArticle(typeOf(s))}`);
        if (v !== 'atomic' && v !== 'granular') return fail('structType must be "granular" or "atomic"');
        s['x-kubernetes-map-type'] = v;
      },
    },
  }),
  defineMarker({
    name: 'k8s:listType',
    targets: FIELD_AND_TYPE,
    value: required(T.string),
    help: 'atomic, set or map',
    schema: listType,
  }),
  defineMarker({
    name: 'k8s:listMapKey',
    targets: FIELD_AND_TYPE,
    value: required(T.string),
    help: 'a key field of a map list',
    schema: listMapKey,
  }),
  defineMarker({
    name: 'kubebuilder:externalDocs',
    targets: FIELD_AND_TYPE,
    args: { url: required(T.string), description: optional(T.string) },
    help: 'a link to external documentation',
    schema: {
      apply(s, { url, description }, fail) {
        try {
          new URL(url);
        } catch {
          return fail(`invalid url ${JSON.stringify(url)}`);
        }
        s.externalDocs = description ? { url, description } : { url };
      },
    },
  }),
];
