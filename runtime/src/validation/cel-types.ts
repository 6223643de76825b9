/**
 * The declared CEL type of a schema node, as the API server derives it for `self` and `oldSelf`
 * (k8s.io/apiserver/pkg/cel/common SchemaDeclType): objects with their properties (names escaped),
 * maps through `additionalProperties`, lists, int-or-string as `dyn`, formats as bytes/duration/timestamp,
 * and `apiVersion`, `kind`, `metadata.name` and `metadata.generateName` at the root of a resource. A node the
 * server does not expose (no type, or preserve-unknown-fields without one) has none. Each type also carries
 * the server's size estimates (the most elements a value can have, the least bytes it takes in a request),
 * which its cost estimates rest on.
 */
import type { JSONSchemaProps } from './schema.js';

/** The largest request the API server takes (3 MiB): sizes of unbounded values are estimated from it. */
export const MAX_REQUEST_BYTES = 3 * 1024 * 1024;

export type DeclType =
  | { kind: 'scalar'; cel: string; maxElements: number; minSize: number; schema: JSONSchemaProps }
  | { kind: 'dyn'; maxElements: number; minSize: number; schema: JSONSchemaProps }
  | { kind: 'list'; elem: DeclType; maxElements: number; minSize: number; schema: JSONSchemaProps }
  | { kind: 'map'; elem: DeclType; maxElements: number; minSize: number; schema: JSONSchemaProps }
  | {
      kind: 'object';
      fields: Map<string, DeclType>;
      /** Escaped CEL name -> property name. */
      names: Map<string, string>;
      maxElements: number;
      minSize: number;
      schema: JSONSchemaProps;
    };

const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** A property name as CEL rules spell it (`__dash__` for `-`...), or undefined where it has none. */
export function escapeName(name: string): string | undefined {
  if (RESERVED.has(name)) return `__${name}__`;
  if (!/^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$/.test(name)) return undefined;
  return name
    .replaceAll('__', '__underscores__')
    .replaceAll('.', '__dot__')
    .replaceAll('-', '__dash__')
    .replaceAll('/', '__slash__');
}

const nonNegative = (n: number): number => (n < 0 ? 0 : n);

function maxStringLength(s: JSONSchemaProps): number {
  if (s['x-kubernetes-int-or-string'] === true) return MAX_REQUEST_BYTES - 2;
  switch (s.format) {
    case 'duration':
    case 'date-time':
      return 32;
    case 'date':
      return 12;
    default:
      return MAX_REQUEST_BYTES - 2;
  }
}

/** The same schema with apiVersion, kind and metadata.name/generateName declared, as at a resource's root. */
function withTypeAndObjectMeta(s: JSONSchemaProps): JSONSchemaProps {
  const string: JSONSchemaProps = { type: 'string' };
  return {
    ...s,
    properties: {
      ...s.properties,
      kind: string,
      apiVersion: string,
      metadata: { type: 'object', properties: { name: string, generateName: string } },
    },
  };
}

/** The declared type of `s` (undefined where the server exposes no value to rules). */
export function declType(s: JSONSchemaProps, isResourceRoot: boolean): DeclType | undefined {
  if (s['x-kubernetes-int-or-string'] === true) {
    const maxElements = s.maxLength !== undefined ? nonNegative(s.maxLength) * 4 : maxStringLength(s);
    return { kind: 'dyn', maxElements, minSize: 1, schema: s };
  }
  const schema = isResourceRoot ? withTypeAndObjectMeta(s) : s;
  switch (schema.type) {
    case 'array': {
      if (!schema.items) return undefined;
      const elem = declType(schema.items, schema.items['x-kubernetes-embedded-resource'] === true);
      if (!elem) return undefined;
      const maxElements =
        schema.maxItems !== undefined
          ? nonNegative(schema.maxItems)
          : Math.floor((MAX_REQUEST_BYTES - 2) / (elem.minSize + 1));
      return { kind: 'list', elem, maxElements, minSize: 2, schema };
    }
    case 'object': {
      const additional = schema.additionalProperties;
      if (additional !== undefined && typeof additional === 'object') {
        const elem = declType(additional, additional['x-kubernetes-embedded-resource'] === true);
        if (!elem) return undefined;
        const maxElements =
          schema.maxProperties !== undefined
            ? nonNegative(schema.maxProperties)
            : Math.floor((MAX_REQUEST_BYTES - 2) / (elem.minSize + 6));
        return { kind: 'map', elem, maxElements, minSize: 2, schema };
      }
      const fields = new Map<string, DeclType>();
      const names = new Map<string, string>();
      const required = new Set(schema.required ?? []);
      let minSize = 2;
      for (const [name, prop] of Object.entries(schema.properties ?? {})) {
        const type = declType(prop, prop['x-kubernetes-embedded-resource'] === true);
        if (!type) continue;
        const escaped = escapeName(name);
        if (escaped !== undefined) {
          fields.set(escaped, type);
          names.set(escaped, name);
        }
        if (required.has(name) && prop.default === undefined) minSize += name.length + type.minSize + 4;
      }
      return { kind: 'object', fields, names, maxElements: 0, minSize, schema };
    }
    case 'string': {
      const scalar = (cel: string, minSize: number, maxElements: number): DeclType => ({
        kind: 'scalar',
        cel,
        maxElements,
        minSize,
        schema,
      });
      switch (schema.format) {
        case 'byte':
          return scalar(
            'bytes',
            2,
            schema.maxLength !== undefined ? nonNegative(schema.maxLength) : maxStringLength(schema),
          );
        case 'duration':
          return scalar('google.protobuf.Duration', 3, maxStringLength(schema));
        case 'date':
          return scalar('google.protobuf.Timestamp', 12, maxStringLength(schema));
        case 'date-time':
          return scalar('google.protobuf.Timestamp', 21, maxStringLength(schema));
      }
      let maxElements: number;
      if (schema.maxLength !== undefined) maxElements = nonNegative(schema.maxLength) * 4;
      else if (schema.enum && schema.enum.length > 0)
        maxElements = Math.max(0, ...schema.enum.map((v) => (typeof v === 'string' ? v.length : 0)));
      else maxElements = maxStringLength(schema);
      return scalar('string', 2, maxElements);
    }
    case 'boolean':
      return { kind: 'scalar', cel: 'bool', maxElements: 0, minSize: 4, schema };
    case 'number':
      return { kind: 'scalar', cel: 'double', maxElements: 0, minSize: 1, schema };
    case 'integer':
      return { kind: 'scalar', cel: 'int', maxElements: 0, minSize: 1, schema };
  }
  return undefined;
}

/**
 * How many times a rule at a node can run in one object, as the server bounds it: the number of values
 * its request could hold, from the type's least size.
 */
export function unboundedCardinality(type: DeclType): number {
  return Math.floor(MAX_REQUEST_BYTES / (type.minSize + 1));
}
