/**
 * The apiserver's structural-schema rules that a schema node can break by itself (checked for every
 * property, where the TypeScript source to blame is known): a type on every node but int-or-string and
 * preserve-unknown-fields nodes, no `properties` beside a non-`true` `additionalProperties`, no
 * `uniqueItems: true`, set lists of scalars, map lists keyed by scalar required-or-defaulted fields, and
 * only value validations inside `anyOf`/`oneOf`/`allOf`/`not`.
 */
import type { JSONSchemaProps } from './types.js';

export interface StructuralProblem {
  message: string;
  hint?: string;
}

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

/** Problems of `schema` itself and of its items/additionalProperties (not of its properties). */
export function structuralProblems(schema: JSONSchemaProps): StructuralProblem[] {
  const out: StructuralProblem[] = [];
  const visit = (s: JSONSchemaProps, where: string): void => {
    const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
    if (s.type === undefined && !s['x-kubernetes-int-or-string'] && !preserve) {
      out.push({
        message: `${where}has no type`,
        hint: 'give it a type, or mark it +kubebuilder:pruning:PreserveUnknownFields for free-form data',
      });
    }
    if (
      s.properties &&
      Object.keys(s.properties).length > 0 &&
      s.additionalProperties !== undefined &&
      s.additionalProperties !== true
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
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
      for (const branch of s[key] ?? []) {
        valueValidationProblems(
          branch,
          `${where}${key}`,
          out,
          key === 'anyOf' && s['x-kubernetes-int-or-string'] === true,
        );
      }
    }
    if (s.items) visit(s.items, `${where}items: `);
    if (typeof s.additionalProperties === 'object') visit(s.additionalProperties, `${where}values: `);
  };
  visit(schema, '');
  return out;
}
