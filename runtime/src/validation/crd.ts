/** The versions of a CustomResourceDefinition as validation needs them: the schema, and whether status is apart. */
import type { JSONSchemaProps } from './schema.js';
import { isObject } from './values.js';

/** The part of a CRD version validation needs. */
export interface CrdVersion {
  schema: JSONSchemaProps;
  /** The version has the status subresource: `status` is not the main resource's. */
  statusSubresource: boolean;
}

export interface CrdVersions {
  /** The CRD's name (`guestbooks.webapp.example.com`). */
  name: string;
  group: string;
  kind: string;
  /** Each version by its name (`v1`). */
  versions: Map<string, CrdVersion>;
}

/** Why a document is no CRD validation can use; undefined when it is one. */
export function notACrd(doc: unknown): string | undefined {
  if (
    !isObject(doc) ||
    doc.kind !== 'CustomResourceDefinition' ||
    doc.apiVersion !== 'apiextensions.k8s.io/v1'
  )
    return 'not a CustomResourceDefinition (apiextensions.k8s.io/v1)';
  const spec = isObject(doc.spec) ? doc.spec : {};
  const names = isObject(spec.names) ? spec.names : {};
  if (typeof spec.group !== 'string' || typeof names.kind !== 'string' || !Array.isArray(spec.versions))
    return 'the CRD lacks spec.group, spec.names.kind or spec.versions';
  if (spec.versions.length === 0) return 'the CRD lacks spec.group, spec.names.kind or spec.versions';
  return undefined;
}

/** The versions of a CRD (notACrd says first whether it is one). */
export function crdVersions(doc: unknown): CrdVersions {
  const why = notACrd(doc);
  if (why !== undefined) throw new Error(why);
  const crd = doc as Record<string, unknown>;
  const spec = crd.spec as Record<string, unknown>;
  const names = spec.names as Record<string, unknown>;
  const versions = new Map<string, CrdVersion>();
  for (const version of spec.versions as unknown[]) {
    if (!isObject(version) || typeof version.name !== 'string') continue;
    const schema = isObject(version.schema) ? version.schema.openAPIV3Schema : undefined;
    const subresources = isObject(version.subresources) ? version.subresources : undefined;
    versions.set(version.name, {
      // A version without a schema keeps every field, as the API server does.
      schema: (isObject(schema)
        ? schema
        : { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }) as JSONSchemaProps,
      statusSubresource: subresources !== undefined && 'status' in subresources,
    });
  }
  const metadata = isObject(crd.metadata) ? crd.metadata : {};
  return {
    name: typeof metadata.name === 'string' ? metadata.name : `${String(names.plural)}.${String(spec.group)}`,
    group: spec.group as string,
    kind: names.kind as string,
    versions,
  };
}
