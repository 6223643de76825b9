/**
 * Whether two CRDs say the same to the API server, as the round trip of `import crd` is held to: group,
 * names, scope, and per version its name, flags, schema, subresources, printer columns and selectable
 * fields, and the annotations the API server reads. Descriptions compare without their white space, and
 * `required` lists as sets. The differences come back as `path: a != b` lines.
 */
import { isDeepStrictEqual } from 'node:util';

const FALSE_AS_ABSENT = new Set([
  'nullable',
  'uniqueItems',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
]);
const KEPT_ANNOTATIONS = ['api-approved.kubernetes.io'];

function normalizeSchema(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) {
    const items = value.map((v) => normalizeSchema(v));
    return key === 'required' ? [...(items as string[])].sort() : items;
  }
  if (typeof value !== 'object' || value === null) {
    return key === 'description' && typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : value;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    // A flag set to false is its default: the same as its absence.
    if (v === false && FALSE_AS_ABSENT.has(k)) continue;
    // No properties and an empty map of them are one structural schema to the API server.
    if (k === 'properties' && typeof v === 'object' && v !== null && Object.keys(v).length === 0) continue;
    // Values (default, example, enum) are data: compared as they are, but for the white space of nothing.
    out[k] = k === 'default' || k === 'example' || k === 'enum' ? v : normalizeSchema(v, k);
  }
  return out;
}

/** The parts of a CRD document the comparison reads. */
export interface CrdDocument {
  metadata?: { name?: string; annotations?: Record<string, string> };
  spec: {
    group: string;
    names: { kind: string } & Record<string, unknown>;
    scope: string;
    versions: Record<string, unknown>[];
  };
}

export function normalizeCrd(crd: CrdDocument): unknown {
  const annotations = Object.fromEntries(
    Object.entries(crd.metadata?.annotations ?? {}).filter(([k]) => KEPT_ANNOTATIONS.includes(k)),
  );
  const spec = crd.spec;
  return {
    name: crd.metadata?.name,
    annotations,
    group: spec['group'],
    names: {
      listKind: `${spec['names']['kind']}List`,
      singular: String(spec['names']['kind']).toLowerCase(),
      ...spec['names'],
    },
    scope: spec['scope'],
    // The API server orders versions by their priority, not by their place in the list: by name here.
    versions: [...spec.versions]
      .sort((a, b) => (String(a['name']) < String(b['name']) ? -1 : 1))
      .map((v) => ({
        name: v['name'],
        served: v['served'],
        storage: v['storage'],
        deprecated: v['deprecated'] ?? false,
        deprecationWarning: v['deprecationWarning'],
        schema: normalizeSchema(v['schema']),
        // No subresources and an empty map of them are the same to the API server.
        subresources:
          v['subresources'] && Object.keys(v['subresources']).length > 0 ? v['subresources'] : undefined,
        additionalPrinterColumns: (
          v['additionalPrinterColumns'] as Record<string, unknown>[] | undefined
        )?.map((c) => ({
          priority: 0,
          ...c,
          ...(c['description'] !== undefined
            ? { description: normalizeSchema(c['description'], 'description') }
            : {}),
        })),
        selectableFields: v['selectableFields'],
      })),
  };
}

/** The differences between two values, as `path: a != b` lines. */
export function differences(a: unknown, b: unknown, path = ''): string[] {
  if (isDeepStrictEqual(a, b)) return [];
  const isObject = (x: unknown) => typeof x === 'object' && x !== null;
  if (isObject(a) && isObject(b) && Array.isArray(a) === Array.isArray(b)) {
    const keys = [...new Set([...Object.keys(a as object), ...Object.keys(b as object)])];
    return keys.flatMap((k) =>
      differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`),
    );
  }
  return [`${path}: ${JSON.stringify(a)?.slice(0, 200)} != ${JSON.stringify(b)?.slice(0, 200)}`];
}
