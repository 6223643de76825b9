/**
 * What the importer takes from a CRD, checked as the API server would check it: a CRD is hostile input
 * (anyone's file, a URL), and its group, versions and kind become the paths of the files written
 * (`<out>/<group>/<version>/<kind>.types.ts`) and the names of TypeScript declarations. Every problem is one
 * line naming the input, the document and the path in it, and stops the run before anything is written.
 */
import { KubesmithError } from '../errors.js';
import { GROUP_RULE, isGroup, isLabel, LABEL_RULE, MAX_CRD_NAME } from '../manifests/crd-names.js';
import { printable } from '../printable.js';
import type { JSONSchemaProps } from '../schema/types.js';
import { crdSchemaProblems } from '../schema/structural.js';

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  format?: string;
  priority?: number;
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema: JSONSchemaProps;
  subresources?: {
    status?: object;
    scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  };
  additionalPrinterColumns?: PrinterColumn[];
  selectableFields?: { jsonPath: string }[];
}

export interface Crd {
  group: string;
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  scope: 'Namespaced' | 'Cluster';
  /** Annotations carried over: those the API server acts on (`api-approved.kubernetes.io`). */
  annotations: Record<string, string>;
  versions: CrdVersion[];
  /** Where it came from: `<input>: document <n>`, for messages. */
  origin: string;
}

/** Where a document stands in the inputs: the input as shown, and its number (1-based) in the input. */
export interface DocumentOrigin {
  input: string;
  document: number;
}

export const originText = (o: DocumentOrigin): string => `${o.input}: document ${o.document}`;

/** The annotations of a CRD that the API server reads, and so the importer keeps. */
const KEPT_ANNOTATIONS = ['api-approved.kubernetes.io'];

/** A kind becomes a TypeScript interface named after it: letters and digits only. */
const KIND_NAME = /^[A-Za-z][A-Za-z0-9]{0,58}$/;

/** TypeScript's reserved words (a kind is the name of an interface, and the generator reads it back). */
const RESERVED = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false finally ' +
    'for function if import in instanceof new null return super switch this throw true try typeof var void ' +
    'while with implements interface let package private protected public static yield any boolean number ' +
    'string symbol type never unknown object undefined'
  ).split(' '),
);

function fail(origin: DocumentOrigin, path: string, message: string, hint: string): never {
  throw new KubesmithError(`${originText(origin)}: ${path}: ${message}`, { hint });
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const show = (v: unknown): string => printable(JSON.stringify(v) ?? String(v)).slice(0, 120);

function stringAt(origin: DocumentOrigin, value: unknown, path: string): string {
  if (typeof value !== 'string') fail(origin, path, `expected a string, found ${show(value)}`, 'fix the CRD');
  return value;
}

function labelAt(origin: DocumentOrigin, value: unknown, path: string): string {
  const name = stringAt(origin, value, path);
  if (!isLabel(name))
    fail(origin, path, `${show(name)} is not ${LABEL_RULE}`, 'fix the CRD: the API server refuses it');
  return name;
}

function listAt(origin: DocumentOrigin, value: unknown, path: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail(origin, path, `expected a list, found ${show(value)}`, 'fix the CRD');
  return value;
}

/** The CRD in one parsed document, checked; throws a KubesmithError positioned at the document. */
export function readCrd(document: unknown, origin: DocumentOrigin): Crd {
  if (!isObject(document)) {
    fail(origin, '.', `not a CustomResourceDefinition: ${show(document)}`, 'give the YAML or JSON of CRDs');
  }
  const { apiVersion, kind } = document;
  if (kind !== 'CustomResourceDefinition') {
    fail(
      origin,
      '.kind',
      `not a CustomResourceDefinition but ${show(kind)}`,
      'give only CRDs (apiextensions.k8s.io/v1, kind CustomResourceDefinition)',
    );
  }
  if (apiVersion !== 'apiextensions.k8s.io/v1') {
    fail(
      origin,
      '.apiVersion',
      `${show(apiVersion)} CRDs are not supported, only apiextensions.k8s.io/v1`,
      apiVersion === 'apiextensions.k8s.io/v1beta1'
        ? 'apply it to a cluster and read it back as v1 (kubectl get crd <name> -o yaml), or take the v1 CRD of a newer release'
        : 'give an apiextensions.k8s.io/v1 CustomResourceDefinition',
    );
  }
  const metadata = isObject(document['metadata']) ? document['metadata'] : {};
  const spec = document['spec'];
  if (!isObject(spec)) fail(origin, '.spec', 'missing', 'fix the CRD');
  const group = stringAt(origin, spec['group'], '.spec.group');
  if (!isGroup(group)) fail(origin, '.spec.group', `${show(group)} is not ${GROUP_RULE}`, 'fix the CRD');
  const names = spec['names'];
  if (!isObject(names)) fail(origin, '.spec.names', 'missing', 'fix the CRD');
  const kindName = stringAt(origin, names['kind'], '.spec.names.kind');
  if (!KIND_NAME.test(kindName) || RESERVED.has(kindName)) {
    fail(
      origin,
      '.spec.names.kind',
      `${show(kindName)} is not a kind kubesmith can name a type after: letters and digits, starting with a letter, at most 59, not a TypeScript reserved word`,
      'fix the CRD',
    );
  }
  const plural = labelAt(origin, names['plural'], '.spec.names.plural');
  const singular =
    names['singular'] === undefined
      ? kindName.toLowerCase()
      : labelAt(origin, names['singular'], '.spec.names.singular');
  if (names['listKind'] !== undefined && names['listKind'] !== `${kindName}List`) {
    fail(
      origin,
      '.spec.names.listKind',
      `${show(names['listKind'])}: kubesmith names the list kind ${kindName}List, the API server's default`,
      'drop listKind from the CRD or rename it to the default',
    );
  }
  const shortNames = listAt(origin, names['shortNames'], '.spec.names.shortNames').map((n, i) =>
    labelAt(origin, n, `.spec.names.shortNames[${i}]`),
  );
  const categories = listAt(origin, names['categories'], '.spec.names.categories').map((n, i) =>
    labelAt(origin, n, `.spec.names.categories[${i}]`),
  );
  const scope = spec['scope'];
  if (scope !== 'Namespaced' && scope !== 'Cluster') {
    fail(origin, '.spec.scope', `${show(scope)} is neither Namespaced nor Cluster`, 'fix the CRD');
  }
  const name = metadata['name'];
  if (name !== `${plural}.${group}` || name.length > MAX_CRD_NAME) {
    fail(
      origin,
      '.metadata.name',
      `${show(name)} is not <plural>.<group> (${plural}.${group}), as the API server requires`,
      'fix the CRD',
    );
  }
  const annotations: Record<string, string> = {};
  const given = isObject(metadata['annotations']) ? metadata['annotations'] : {};
  for (const key of KEPT_ANNOTATIONS) {
    const value = given[key];
    if (typeof value === 'string') annotations[key] = value;
  }
  const versionList = listAt(origin, spec['versions'], '.spec.versions');
  if (versionList.length === 0) fail(origin, '.spec.versions', 'no versions', 'fix the CRD');
  const seen = new Set<string>();
  const versions = versionList.map((v, i) => {
    const at = `.spec.versions[${i}]`;
    const version = readVersion(origin, v, at);
    if (seen.has(version.name))
      fail(origin, `${at}.name`, `version ${version.name} appears twice`, 'fix the CRD');
    seen.add(version.name);
    return version;
  });
  if (versions.filter((v) => v.storage).length !== 1) {
    fail(origin, '.spec.versions', 'exactly one version must be the storage version', 'fix the CRD');
  }
  return {
    group,
    kind: kindName,
    plural,
    singular,
    shortNames,
    categories,
    scope,
    annotations,
    versions,
    origin: originText(origin),
  };
}

const STRING_KEYWORDS = [
  'type',
  'format',
  'title',
  'description',
  'pattern',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
] as const;
const NUMBER_KEYWORDS = [
  'maximum',
  'minimum',
  'multipleOf',
  'maxLength',
  'minLength',
  'maxItems',
  'minItems',
  'maxProperties',
  'minProperties',
] as const;
const BOOLEAN_KEYWORDS = [
  'exclusiveMaximum',
  'exclusiveMinimum',
  'uniqueItems',
  'nullable',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
] as const;

/** The JSON type of each keyword above, by name. */
const SCALAR_KEYWORD_TYPES = new Map<string, 'string' | 'number' | 'boolean'>([
  ...STRING_KEYWORDS.map((key) => [key, 'string'] as const),
  ...NUMBER_KEYWORDS.map((key) => [key, 'number'] as const),
  ...BOOLEAN_KEYWORDS.map((key) => [key, 'boolean'] as const),
]);

/**
 * Whether a scalar keyword of `schema` has the wrong type, found through the node's own few keys rather
 * than by looking up each of the 23 keywords in every node of a big CRD.
 */
function scalarKeywordWrong(schema: Record<string, unknown>): boolean {
  for (const key in schema) {
    const expected = SCALAR_KEYWORD_TYPES.get(key);
    if (expected === undefined) continue;
    const value = schema[key];
    if (value === undefined) continue;
    if (typeof value !== expected || (expected === 'number' && !Number.isFinite(value))) return true;
  }
  return false;
}

/**
 * A child schema's problem with its path from the parent: the path is made on the way up only, as paths
 * made for every node cost the import of big CRDs more than the checks themselves.
 */
const within = (prefix: string, found: { path: string; message: string }) => ({
  path: `${prefix}${found.path}`,
  message: found.message,
});

/**
 * The first keyword of a schema whose value has the wrong JSON type (the API server would not decode the
 * CRD), with its path from the schema. The importer writes these values into markers, so a string where a
 * number belongs must never get that far.
 */
function keywordTypeProblem(schema: unknown): { path: string; message: string } | undefined {
  if (!isObject(schema)) return { path: '', message: `a schema must be an object, found ${show(schema)}` };
  const bad = (key: string, what: string) => ({
    path: `.${key}`,
    message: `must be ${what}, found ${show(schema[key])}`,
  });
  // In the order of the lists, so that the first wrong keyword is always the same one.
  if (scalarKeywordWrong(schema)) {
    for (const key of STRING_KEYWORDS)
      if (schema[key] !== undefined && typeof schema[key] !== 'string') return bad(key, 'a string');
    for (const key of NUMBER_KEYWORDS) {
      const value = schema[key];
      if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value)))
        return bad(key, 'a number');
    }
    for (const key of BOOLEAN_KEYWORDS)
      if (schema[key] !== undefined && typeof schema[key] !== 'boolean') return bad(key, 'true or false');
  }
  for (const key of ['required', 'x-kubernetes-list-map-keys']) {
    const value = schema[key];
    if (value !== undefined && !(Array.isArray(value) && value.every((v) => typeof v === 'string')))
      return bad(key, 'a list of strings');
  }
  if (schema['enum'] !== undefined && !Array.isArray(schema['enum'])) return bad('enum', 'a list');
  const docs = schema['externalDocs'];
  if (
    docs !== undefined &&
    !(
      isObject(docs) &&
      typeof docs['url'] === 'string' &&
      ['string', 'undefined'].includes(typeof docs['description'])
    )
  )
    return bad('externalDocs', '{url, description} strings');
  const rules = schema['x-kubernetes-validations'];
  if (rules !== undefined) {
    if (!Array.isArray(rules)) return bad('x-kubernetes-validations', 'a list of rules');
    for (const [i, rule] of rules.entries()) {
      const at = `.x-kubernetes-validations[${i}]`;
      if (!isObject(rule) || typeof rule['rule'] !== 'string')
        return { path: at, message: 'a rule must have a string rule' };
      for (const key of ['message', 'messageExpression', 'reason', 'fieldPath'])
        if (rule[key] !== undefined && typeof rule[key] !== 'string')
          return { path: `${at}.${key}`, message: 'must be a string' };
      if (rule['optionalOldSelf'] !== undefined && typeof rule['optionalOldSelf'] !== 'boolean')
        return { path: `${at}.optionalOldSelf`, message: 'must be true or false' };
    }
  }
  const properties = schema['properties'];
  if (properties !== undefined) {
    if (!isObject(properties)) return bad('properties', 'an object');
    for (const [name, child] of Object.entries(properties)) {
      const found = keywordTypeProblem(child);
      if (found) return within(`.properties[${JSON.stringify(name)}]`, found);
    }
  }
  for (const key of ['items', 'not'] as const) {
    if (schema[key] !== undefined) {
      const found = keywordTypeProblem(schema[key]);
      if (found) return within(`.${key}`, found);
    }
  }
  const extra = schema['additionalProperties'];
  if (extra !== undefined && typeof extra !== 'boolean') {
    const found = keywordTypeProblem(extra);
    if (found) return within('.additionalProperties', found);
  }
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = schema[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) return bad(key, 'a list of schemas');
    for (const [i, child] of list.entries()) {
      const found = keywordTypeProblem(child);
      if (found) return within(`.${key}[${i}]`, found);
    }
  }
  return undefined;
}

/** Printer columns and selectable fields, whose strings and numbers the importer writes into markers. */
function columnProblem(columns: unknown[], fields: unknown[]): string | undefined {
  for (const [i, c] of columns.entries()) {
    if (!isObject(c)) return `additionalPrinterColumns[${i}] must be an object`;
    for (const key of ['name', 'type', 'jsonPath'])
      if (typeof c[key] !== 'string') return `additionalPrinterColumns[${i}].${key} must be a string`;
    for (const key of ['description', 'format'])
      if (c[key] !== undefined && typeof c[key] !== 'string')
        return `additionalPrinterColumns[${i}].${key} must be a string`;
    if (c['priority'] !== undefined && !Number.isInteger(c['priority']))
      return `additionalPrinterColumns[${i}].priority must be an integer`;
  }
  for (const [i, f] of fields.entries()) {
    if (!isObject(f) || typeof f['jsonPath'] !== 'string')
      return `selectableFields[${i}].jsonPath must be a string`;
  }
  return undefined;
}

function readVersion(origin: DocumentOrigin, value: unknown, at: string): CrdVersion {
  if (!isObject(value)) fail(origin, at, `expected a version, found ${show(value)}`, 'fix the CRD');
  const name = labelAt(origin, value['name'], `${at}.name`);
  const schemaHolder = value['schema'];
  const schema = isObject(schemaHolder) ? schemaHolder['openAPIV3Schema'] : undefined;
  if (!isObject(schema)) {
    fail(
      origin,
      `${at}.schema.openAPIV3Schema`,
      'missing: a v1 CRD has a structural schema for each version',
      'fix the CRD',
    );
  }
  const typed = schema as JSONSchemaProps;
  const wrong = keywordTypeProblem(typed);
  if (wrong) {
    fail(
      origin,
      `${at}.schema.openAPIV3Schema${wrong.path}`,
      wrong.message,
      'fix the CRD: the API server refuses it',
    );
  }
  const [problem] = crdSchemaProblems(typed);
  if (problem) {
    fail(
      origin,
      `${at}.schema.openAPIV3Schema`,
      problem.message,
      problem.hint ?? 'the API server would refuse this CRD; fix it',
    );
  }
  const version: CrdVersion = {
    name,
    served: value['served'] === true,
    storage: value['storage'] === true,
    schema: typed,
  };
  if (value['deprecated'] === true) version.deprecated = true;
  if (typeof value['deprecationWarning'] === 'string')
    version.deprecationWarning = value['deprecationWarning'];
  for (const key of ['served', 'storage', 'deprecated']) {
    if (value[key] !== undefined && typeof value[key] !== 'boolean')
      fail(origin, `${at}.${key}`, `must be true or false, found ${show(value[key])}`, 'fix the CRD');
  }
  if (isObject(value['subresources'])) {
    const scale = value['subresources']['scale'];
    const paths =
      isObject(scale) &&
      typeof scale['specReplicasPath'] === 'string' &&
      typeof scale['statusReplicasPath'] === 'string' &&
      ['string', 'undefined'].includes(typeof scale['labelSelectorPath']);
    if (scale !== undefined && !paths)
      fail(origin, `${at}.subresources.scale`, 'the replica paths must be strings', 'fix the CRD');
    version.subresources = value['subresources'] as CrdVersion['subresources'] & object;
  }
  const columns = listAt(origin, value['additionalPrinterColumns'], `${at}.additionalPrinterColumns`);
  if (columns.length > 0) version.additionalPrinterColumns = columns as PrinterColumn[];
  const fields = listAt(origin, value['selectableFields'], `${at}.selectableFields`);
  const columnWrong = columnProblem(columns, fields);
  if (columnWrong) fail(origin, at, columnWrong, 'fix the CRD: the API server refuses it');
  if (fields.length > 0) version.selectableFields = fields as { jsonPath: string }[];
  return version;
}
