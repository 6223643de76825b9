/**
 * A kind `kubesmith import crd` imported into the project, as `create api --resource=false` and `create
 * webhook` find it: its types in src/external/<group>/<version>/<kind>.types.ts, its CRD the copy the import
 * keeps in config/crd/external, where its plural, scope and schema are read. Both are files anyone can edit
 * (a pull request): the copy is read with a size bound, and its plural is held to the rules of `--plural`.
 */
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { KubesmithError } from '../errors.js';
import { yaml } from '../lazy-yaml.js';
import { containedPath } from './contained.js';
import { EXTERNAL_API_DIR, EXTERNAL_CRD_DIR } from './layout.js';
import { validateGroup, validateKind, validatePlural, validateVersion } from './validation.js';

/** A copy is the CRD `import crd` wrote; the largest public CRDs are a few MB. */
const MAX_COPY_BYTES = 16 * 1024 * 1024;

export interface ImportedKind {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  /** The version's openAPIV3Schema in the copy (undefined when it has none). */
  schema: unknown;
  /** Whether the version has the status subresource. */
  statusSubresource: boolean;
  /** Relative to the project root. */
  typesFile: string;
  crdFile: string;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether `<group>/<version>/<kind>.types.ts` is in src/external: an imported kind, whose copy must exist. */
export function isImportedKind(root: string, ref: { group: string; version: string; kind: string }): boolean {
  if (validateGroup(ref.group, '') || validateVersion(ref.version) || validateKind(ref.kind)) return false;
  try {
    return lstatSync(containedPath(root, typesFileOf(ref))).isFile();
  } catch {
    return false;
  }
}

const typesFileOf = (ref: { group: string; version: string; kind: string }) =>
  `${EXTERNAL_API_DIR}/${ref.group}/${ref.version}/${ref.kind.toLowerCase()}.types.ts`;

/** The imported kind `ref` (isImportedKind said it is one), from its CRD's copy. */
export function readImportedKind(
  root: string,
  ref: { group: string; version: string; kind: string },
): ImportedKind {
  const typesFile = typesFileOf(ref);
  const reimport = `import its CRD again with \`kubesmith import crd\`: a project keeps a copy in ${EXTERNAL_CRD_DIR} for its tests`;
  let names: string[];
  try {
    names = readdirSync(containedPath(root, EXTERNAL_CRD_DIR));
  } catch {
    names = [];
  }
  for (const name of names.filter((n) => n.startsWith(`${ref.group}_`) && n.endsWith('.yaml')).sort()) {
    const crdFile = `${EXTERNAL_CRD_DIR}/${name}`;
    const crd = readCopy(root, crdFile);
    const spec = isObject(crd) && isObject(crd['spec']) ? crd['spec'] : undefined;
    const crdNames = isObject(spec?.['names']) ? spec['names'] : undefined;
    if (spec?.['group'] !== ref.group || crdNames?.['kind'] !== ref.kind) continue;
    const plural = crdNames['plural'];
    const problem = typeof plural === 'string' ? validatePlural(plural) : { message: 'missing', hint: '' };
    if (problem || typeof plural !== 'string' || name !== `${ref.group}_${plural}.yaml`)
      throw new KubesmithError(`${crdFile}: .spec.names.plural: not the plural its file is named after`, {
        hint: reimport,
      });
    const versions = Array.isArray(spec['versions']) ? spec['versions'].filter(isObject) : [];
    const version = versions.find((v) => v['name'] === ref.version);
    if (version === undefined)
      throw new KubesmithError(`${crdFile}: ${ref.kind} has no version ${ref.version}`, { hint: reimport });
    const schema = isObject(version['schema']) ? version['schema']['openAPIV3Schema'] : undefined;
    const subresources = isObject(version['subresources']) ? version['subresources'] : {};
    return {
      ...ref,
      plural,
      namespaced: spec['scope'] !== 'Cluster',
      schema,
      statusSubresource: subresources['status'] !== undefined,
      typesFile,
      crdFile,
    };
  }
  throw new KubesmithError(
    `${typesFile} is an imported kind, but ${EXTERNAL_CRD_DIR} has no copy of its CRD (${ref.kind}.${ref.group})`,
    { hint: reimport },
  );
}

function readCopy(root: string, file: string): unknown {
  const full = containedPath(root, file);
  const stat = lstatSync(full);
  if (!stat.isFile() || stat.size > MAX_COPY_BYTES)
    throw new KubesmithError(
      `${file}: not a CRD copy kubesmith import crd writes (a regular file, at most 16 MiB)`,
      {
        hint: 'import the CRD again with `kubesmith import crd`',
      },
    );
  try {
    return yaml().parse(readFileSync(full, 'utf8'), { maxAliasCount: 100 });
  } catch (error) {
    throw new KubesmithError(`${file}: not valid YAML: ${String((error as Error).message).split('\n')[0]}`, {
      hint: 'import the CRD again with `kubesmith import crd`',
    });
  }
}
