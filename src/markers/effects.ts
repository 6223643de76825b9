/**
 * What markers act on: the objects a marker definition's effects change (registry.ts). Each generator
 * makes one, runs the effects of the markers it finds over it, and writes the result; none of them
 * knows a marker by name.
 */
import type { JSONSchemaProps } from '../schema/types.js';

/** Says why a marker cannot apply where it stands (the message), and how to fix it (the hint). */
export type Fail = (message: string, hint?: string) => void;

/** What a marker does to the schema of the property or type it stands on. */
export interface SchemaEffect<V> {
  /** controller-gen's order: lower applies first. Default 10. */
  priority?: number;
  /** It applies to the items of the array (the `+kubebuilder:validation:items:` variants). */
  items?: boolean;
  apply(schema: JSONSchemaProps, value: V, fail: Fail): void;
  /** Runs after all the markers of the node applied, once per function (a default against the result). */
  check?(schema: JSONSchemaProps, value: V, fail: Fail): void;
}

/** What a marker says about the property it stands on, beyond its schema. */
export interface FieldFacts {
  /** Whether the property is required; of several such markers, the highest precedence decides. */
  required?: { value: boolean; precedence: number };
  /** The property gets no schema at all (with PreserveUnknownFields: anything goes). */
  schemaless?: true;
  /** The object refuses removing the property once set (when it is optional). */
  immutable?: true;
}

/** An API version directory (`src/api/<group>/<version>/`), as its file-level markers describe it. */
export interface ApiDirectory {
  /** From the first `+groupName` (`'group' in dir` once one was seen, even without a value). */
  group?: string | undefined;
  /** The first `+groupName` is not a group the API server takes (reported at it): the directory makes no CRD. */
  invalidGroup?: true;
  version?: string;
  skip?: boolean;
}

/** The CRD-wide parts a kind's markers set. */
export interface CrdParts {
  names: Record<string, unknown> & { plural: string };
  scope: string;
  annotations: Record<string, string>;
  labels: Record<string, string>;
}

/** The parts of one version of a kind in its CRD that the kind's markers set. */
export interface VersionParts {
  served: boolean;
  storage: boolean;
  skip: boolean;
  deprecated: boolean;
  deprecationWarning?: string;
  subresources: Record<string, unknown>;
  columns: Record<string, unknown>[];
  selectableFields: { jsonPath: string }[];
}

/** The arguments of one `+kubebuilder:rbac` marker: one rule of a role. */
export interface RbacRule {
  groups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
  urls?: string[];
  namespace?: string;
  roleName?: string;
}

/** The admission webhooks of a project and the names of their configurations. */
export interface WebhookSet {
  names: Record<'mutating' | 'validating', string | undefined>;
  mutating: { name: string; webhook: Record<string, unknown> }[];
  validating: { name: string; webhook: Record<string, unknown> }[];
}
