/**
 * Markers on a use of a named type (a property, array items, an alias of an alias) combine with the
 * markers of the type; they never replace them. controller-gen writes such a use as `$ref` to the type
 * plus the use's own keywords and then flattens the two into one schema; this reproduces that flattening,
 * so a field `MinLength=10` over a type with `MinLength=1` keeps both, as `allOf: [{minLength: 1},
 * {minLength: 10}]`, and the CRD is the one controller-gen writes for the Go twin.
 */
import type { JSONSchemaProps } from './types.js';

type Schema = Record<string, unknown>;

/** Keywords the use's value replaces: its docs and the last word on pruning and map topology. */
const USE_WINS = new Set([
  'title',
  'example',
  'externalDocs',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-map-type',
]);

/** Flags: set by either side (a false flag is never written, as Go's omitempty). */
const FLAGS = new Set([
  'nullable',
  'exclusiveMaximum',
  'exclusiveMinimum',
  'uniqueItems',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
]);

/**
 * Keywords equal on both sides that stay merged: strings (Go compares them by value) and the property
 * counts (which controller-gen compares by value). Every other keyword set on both sides (bounds,
 * lengths, defaults, list types...) goes into `allOf`, even when the values agree, as controller-gen does.
 */
const SAME_VALUE_MERGES = new Set(['format', 'pattern', 'minProperties', 'maxProperties']);

/**
 * The keywords the use's markers may set on a named type's schema before they are applied: what the
 * markers' type checks read (a MinLength needs a string). Its keys are not the use's own unless a marker
 * changes them.
 */
export function useShape(typeSchema: JSONSchemaProps): JSONSchemaProps {
  const shape: JSONSchemaProps = {};
  if (typeSchema.type !== undefined) shape.type = typeSchema.type;
  if (typeSchema.format !== undefined) shape.format = typeSchema.format;
  if (typeSchema['x-kubernetes-int-or-string']) shape['x-kubernetes-int-or-string'] = true;
  return shape;
}

/**
 * Combines into `target` (the named type's schema) what the use's markers set on `shape` (made by
 * `useShape(target)` and then marked). Returns a problem when the two cannot combine (different types).
 */
export function combineUse(target: JSONSchemaProps, shape: JSONSchemaProps): string | undefined {
  const before = useShape(target) as Schema;
  const dst = target as Schema;
  const src = shape as Schema;
  const typeSide: Schema = {};
  const useSide: Schema = {};
  let problem: string | undefined;
  for (const key of Object.keys(src)) {
    const value = src[key];
    if (value === undefined || before[key] === value) continue; // the shape's own, unchanged
    const current = dst[key];
    if (key === 'type') {
      if (current !== undefined && current !== value)
        problem = `conflicting types: the type is ${String(current)}, the marker makes it ${String(value)}`;
      else dst[key] = value;
    } else if (current === undefined || (FLAGS.has(key) && current === false)) {
      dst[key] = value;
    } else if (USE_WINS.has(key)) {
      dst[key] = value;
    } else if (key === 'enum') {
      // The type's values stand (controller-gen keeps the first enum it meets, the type's).
    } else if (key === 'x-kubernetes-validations') {
      // The use's rules first, then the type's.
      dst[key] = [...(value as unknown[]), ...(current as unknown[])];
    } else if (FLAGS.has(key) || (SAME_VALUE_MERGES.has(key) && current === value)) {
      // Equal on both sides: nothing to add.
    } else {
      typeSide[key] = current;
      useSide[key] = value;
      delete dst[key];
    }
  }
  if (Object.keys(useSide).length > 0) {
    target.allOf = [...(target.allOf ?? []), typeSide as JSONSchemaProps, useSide as JSONSchemaProps];
  }
  return problem;
}
