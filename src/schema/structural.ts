/**
 * The apiserver's structural-schema rules that a schema node can break by itself (checked for every
 * property, where the TypeScript source to blame is known): a type on every node but int-or-string and
 * preserve-unknown-fields nodes, no `properties` beside a non-`true` `additionalProperties`, no
 * `uniqueItems: true`, set lists of scalars, map lists keyed by scalar required-or-defaulted fields, and
 * only value validations inside `anyOf`/`oneOf`/`allOf`/`not`.
 */
import { celProblem, re2Problem, valueProblems } from './checks.js';
import type { JSONSchemaProps } from './types.js';

export interface StructuralProblem {
  message: string;
  hint?: string;
}

const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object']);
const SCALARS = new Set(['string', 'integer', 'number', 'boolean']);
const isScalar = (s: JSONSchemaProps | undefined): boolean =>
  s !== undefined && (SCALARS.has(s.type ?? '') || s['x-kubernetes-int-or-string'] === true);

/** Keys that may not appear inside anyOf/oneOf/allOf/not (they are not value validations). */
const NOT_VALUE_VALIDATION: readonly (keyof JSONSchemaProps)[] = [
  'description',
  'type',
  'default',
  'additionalProperties',
  'nullable',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
];

function valueValidationProblems(
  branch: JSONSchemaProps,
  where: string,
  out: StructuralProblem[],
  typeAllowed: boolean,
): void {
  for (const key of NOT_VALUE_VALIDATION) {
    // int-or-string's own anyOf [{type: integer}, {type: string}] is the one allowed exception.
    if (key === 'type' && typeAllowed) continue;
    if (branch[key] !== undefined) {
      out.push({
        message: `${where} holds ${key}, which is not a value validation`,
        hint: 'keep only validations inside anyOf/oneOf/allOf/not',
      });
    }
  }
  for (const child of Object.values(branch.properties ?? {}))
    valueValidationProblems(child, where, out, false);
  if (branch.items) valueValidationProblems(branch.items, where, out, false);
}

const BRANCHES = ['anyOf', 'oneOf', 'allOf'] as const;

/** The structural rules one node can break by itself, each message prefixed with `where`. */
function nodeProblems(s: JSONSchemaProps, where: string, out: StructuralProblem[]): void {
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  if (s.type === undefined && !intOrString && !preserve) {
    out.push({
      message: `${where}has no type`,
      hint: 'give it a type, or mark it +kubebuilder:pruning:PreserveUnknownFields for free-form data',
    });
  }
  if (s.type !== undefined && !TYPES.has(s.type)) {
    out.push({
      message: `${where}has the type ${JSON.stringify(s.type)}`,
      hint: `use one of ${[...TYPES].join(', ')}`,
    });
  }
  if (s.type === 'array' && s.items === undefined) {
    out.push({ message: `${where}is an array without items`, hint: 'give the array an item type' });
  }
  if (s['x-kubernetes-embedded-resource'] === true) {
    if (s.type !== 'object')
      out.push({
        message: `${where}is an embedded resource that is not an object`,
        hint: 'embed an object type',
      });
    if (s.additionalProperties !== undefined)
      out.push({
        message: `${where}is an embedded resource with additionalProperties`,
        hint: 'embed an object with properties',
      });
    if (!preserve && Object.keys(s.properties ?? {}).length === 0)
      out.push({
        message: `${where}is an embedded resource without properties`,
        hint: 'add +kubebuilder:pruning:PreserveUnknownFields, or embed a type with properties',
      });
  }
  if (intOrString && (preserve || s['x-kubernetes-embedded-resource'] === true)) {
    out.push({
      message: `${where}is int-or-string and also preserves unknown fields or embeds a resource`,
      hint: 'drop PreserveUnknownFields/EmbeddedResource from an int-or-string field',
    });
  }
  if (
    s.additionalProperties !== undefined &&
    s.additionalProperties !== true &&
    s.properties &&
    Object.keys(s.properties).length > 0
  ) {
    out.push({
      message: `${where}has both properties and additionalProperties`,
      hint: 'use one or the other',
    });
  }
  if (s.uniqueItems === true) {
    out.push({
      message: `${where}sets uniqueItems: true, which the apiserver rejects`,
      hint: 'use +listType=set for a list of unique scalars',
    });
  }
  const listType = s['x-kubernetes-list-type'];
  if (listType !== undefined && s.type !== 'array') {
    out.push({
      message: `${where}has a list type but is not an array`,
      hint: 'put +listType on arrays only',
    });
  }
  if ((listType === 'set' || listType === 'map') && s.items?.nullable === true) {
    out.push({
      message: `${where}is a ${listType} list of nullable items`,
      hint: 'drop +nullable from the item type, or use +listType=atomic',
    });
  }
  if (s['x-kubernetes-list-map-keys'] !== undefined && listType !== 'map') {
    out.push({ message: `${where}has list map keys but is not a map list`, hint: 'add +listType=map' });
  }
  if (listType === 'set' && s.items && !isScalar(s.items)) {
    out.push({
      message: `${where}is a set list of non-scalar items`,
      hint: 'use +listType=map with +listMapKey, or +listType=atomic',
    });
  }
  if (listType === 'map') {
    const items = s.items;
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    if (!items || items.type !== 'object') {
      out.push({
        message: `${where}is a map list of non-object items`,
        hint: 'use +listType=set or atomic for scalars',
      });
    } else if (keys.length === 0) {
      out.push({
        message: `${where}is a map list without keys`,
        hint: 'add +listMapKey=<field> naming the key field',
      });
    } else {
      for (const key of keys) {
        const field = items.properties?.[key];
        if (!field) {
          out.push({
            message: `${where}has list map key ${key}, which is not a property of its items`,
            hint: 'name a property of the item type',
          });
        } else if (!isScalar(field)) {
          out.push({
            message: `${where}has list map key ${key}, which is not a scalar`,
            hint: 'key the list by a string or integer field',
          });
        } else if (!(items.required ?? []).includes(key) && field.default === undefined) {
          out.push({
            message: `${where}has list map key ${key}, which is neither required nor defaulted`,
            hint: `make ${key} required in the item type, or give it a +kubebuilder:default`,
          });
        }
      }
    }
  }
  if (s.anyOf === undefined && s.oneOf === undefined && s.allOf === undefined) return;
  for (const key of BRANCHES) {
    for (const branch of s[key] ?? []) {
      valueValidationProblems(
        branch,
        `${where}${key}`,
        out,
        key === 'anyOf' && s['x-kubernetes-int-or-string'] === true,
      );
    }
  }
}

/** Problems of `schema` itself and of its items/additionalProperties (not of its properties). */
export function structuralProblems(schema: JSONSchemaProps): StructuralProblem[] {
  const out: StructuralProblem[] = [];
  ownProblems(schema, '', out);
  return out;
}

/** structuralProblems' walk (a function of its own: it runs for every property). */
function ownProblems(s: JSONSchemaProps, where: string, out: StructuralProblem[]): void {
  nodeProblems(s, where, out);
  if (s.items) ownProblems(s.items, `${where}items: `, out);
  if (typeof s.additionalProperties === 'object')
    ownProblems(s.additionalProperties, `${where}values: `, out);
}

/** Keywords JSON Schema has and CRD schemas must not use. */
const FORBIDDEN_KEYS = [
  '$ref',
  '$schema',
  'definitions',
  'patternProperties',
  'dependencies',
  'additionalItems',
  'const',
  'examples',
];
const FORBIDDEN = new Set(FORBIDDEN_KEYS);

/**
 * The apiserver's rules over a whole CRD version schema (`openAPIV3Schema`): every node's structural
 * rules, the root's (an object, `metadata` at most `{type: object}`, no additionalProperties), no JSON
 * Schema keyword the apiserver refuses, patterns that compile as RE2, CEL rules that parse, and defaults
 * valid against their own schema. Each problem names its path (`.spec.ports[]`).
 */
export function crdSchemaProblems(root: JSONSchemaProps): StructuralProblem[] {
  const out: StructuralProblem[] = [];
  if (root.type !== 'object') out.push({ message: 'the root schema is not an object' });
  if (root.additionalProperties !== undefined)
    out.push({ message: 'the root schema has additionalProperties', hint: 'give the kind named properties' });
  const metadata = root.properties?.['metadata'];
  if (metadata) {
    const { type, ...rest } = metadata;
    const props = Object.keys(rest.properties ?? {});
    delete rest.properties;
    delete rest.description;
    if (
      type !== 'object' ||
      Object.keys(rest).length > 0 ||
      props.some((p) => p !== 'name' && p !== 'generateName')
    ) {
      out.push({
        message: '.metadata must be {type: object} (only name and generateName may be constrained)',
        hint: 'declare metadata as ObjectMeta',
      });
    }
  }
  const visit = (s: JSONSchemaProps, path: string): void => {
    const where = path === '' ? '' : `${path}: `;
    // One pass over the node's few keys; the problems, when there are any, in FORBIDDEN_KEYS' order.
    let forbidden = false;
    for (const key in s) if (FORBIDDEN.has(key)) forbidden = true;
    if (forbidden) {
      for (const key of FORBIDDEN_KEYS) {
        if (key in s) out.push({ message: `${where}uses ${key}, which CRD schemas do not support` });
      }
    }
    if (path !== '') nodeProblems(s, where, out);
    if (s.pattern !== undefined) {
      const why = re2Problem(s.pattern);
      if (why) out.push({ message: `${where}${why}` });
    }
    for (const rule of s['x-kubernetes-validations'] ?? []) {
      const why =
        celProblem(rule.rule) ??
        (rule.messageExpression !== undefined ? celProblem(rule.messageExpression) : undefined);
      if (why) out.push({ message: `${where}${why}` });
    }
    if (s.default !== undefined) {
      const { default: value, ...own } = s;
      for (const why of valueProblems(value, own)) out.push({ message: `${where}the default ${why}` });
    }
    const properties = s.properties;
    if (properties) {
      for (const name of Object.keys(properties)) {
        if (path === '' && name === 'metadata') continue;
        visit(properties[name]!, `${path}.${name}`);
      }
    }
    if (s.items) visit(s.items, `${path}[]`);
    if (typeof s.additionalProperties === 'object') visit(s.additionalProperties, `${path}[*]`);
  };
  visit(root, '');
  return out;
}
