/**
 * Unions, once their members are mapped: literals of one scalar type become an `enum` (in source order),
 * `true | false` a boolean, and object types tagged by a string-literal property one object with a
 * `oneOf` per variant. Anything else has no structural schema.
 */
import type { ts } from '../typescript/compiler.cjs';
import type { Reporter } from './report.js';
import type { JSONSchemaProps } from './types.js';

/** The schema of a union of two or more mapped members. */
export function unionSchema(
  parts: JSONSchemaProps[],
  at: ts.Node,
  path: string,
  reporter: Reporter,
): JSONSchemaProps {
  const scalarType = parts[0]?.type;
  if (
    parts.length > 0 &&
    parts.every((p) => p.enum !== undefined && p.type === scalarType && !p.properties && !p.format)
  ) {
    const values: unknown[] = [];
    for (const p of parts) for (const v of p.enum ?? []) if (!values.includes(v)) values.push(v);
    return scalarType === 'boolean' && values.length === 2
      ? { type: 'boolean' }
      : { type: scalarType, enum: values };
  }
  if (parts.length > 0 && parts.every((p) => p.type === 'object' && p.properties))
    return taggedUnion(parts, at, path, reporter);
  return reporter.unsupported(
    at,
    path,
    'a union of different types',
    'use one type, a union of string literals, or a union of objects tagged by a literal property',
  );
}

/** A discriminated union: one object with every variant's properties, the tag an enum, oneOf per variant. */
function taggedUnion(
  parts: JSONSchemaProps[],
  at: ts.Node,
  path: string,
  reporter: Reporter,
): JSONSchemaProps {
  const first = parts[0]!;
  const tag = Object.keys(first.properties ?? {}).find((key) =>
    parts.every((p) => {
      const prop = p.properties?.[key];
      return prop?.type === 'string' && prop.enum?.length === 1 && (p.required ?? []).includes(key);
    }),
  );
  if (tag === undefined) {
    return reporter.unsupported(
      at,
      path,
      'an untagged union of object types',
      'add a string-literal tag property to every variant (kind: "A"), or merge the variants into one type',
    );
  }
  const merged: JSONSchemaProps = { type: 'object', properties: {} };
  const tagValues: unknown[] = [];
  const oneOf: JSONSchemaProps[] = [];
  for (const part of parts) {
    for (const [key, prop] of Object.entries(part.properties ?? {})) {
      if (key === tag) continue;
      merged.properties![key] ??= prop;
    }
    const value = part.properties?.[tag]?.enum?.[0];
    tagValues.push(value);
    oneOf.push({
      properties: { [tag]: { enum: [value] } },
      required: [...(part.required ?? [])].sort(),
    });
  }
  const tagSchema: JSONSchemaProps = { type: 'string', enum: tagValues };
  const tagDescription = first.properties?.[tag]?.description;
  if (tagDescription) tagSchema.description = tagDescription;
  merged.properties![tag] = tagSchema;
  merged.required = [tag];
  merged.oneOf = oneOf;
  return merged;
}
