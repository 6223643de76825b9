/**
 * CRDs: kinds found in `src/api/<group>/<version>/*.ts`, group from `+groupName` (in group-version.ts),
 * version from the directory or `+versionName`; names, scope, subresources, printer columns and version
 * flags from the kind's markers; versions of one kind merged into one CRD, sorted by name.
 */
import path from 'node:path';
import { ts } from '../typescript/compiler.cjs';
import type { ApiDirectory, CrdParts, VersionParts } from '../markers/effects.js';
import type { Marker } from '../markers/registry.js';
import { crdDefaultPlural } from '../project/plural.js';
import { crdSchemaProblems } from '../schema/structural.js';
import { OBJECT_ROOT } from './crd-markers.js';
import { isKindName, isLabel, KIND_RULE, LABEL_RULE, MAX_CRD_NAME } from './crd-names.js';
import type { JSONSchemaProps } from '../schema/types.js';
import { API_DIR, crdFile, EXTERNAL_API_DIR } from '../project/layout.js';
import type { ManifestContext } from './context.js';

export interface GeneratedFile {
  path: string;
  documents: unknown[];
  /** The declaration the file comes from, for diagnostics about the file as a whole. */
  source?: ts.Node;
}

interface KindVersion {
  group: string;
  version: string;
  kind: string;
  decl: ts.InterfaceDeclaration | ts.TypeAliasDeclaration | ts.ClassDeclaration;
  markers: Marker[];
}

interface VersionDir {
  dir: string;
  files: ts.SourceFile[];
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function versionDirs(ctx: ManifestContext): VersionDir[] {
  const byDir = new Map<string, ts.SourceFile[]>();
  for (const sf of ctx.sources) {
    const rel = ctx.displayPath(sf);
    const prefix = ctx.apiDir === '' ? '' : `${ctx.apiDir}/`;
    if (!rel.startsWith(prefix)) continue;
    const parts = rel.slice(prefix.length).split('/');
    // <group>/<version>/<file>.ts
    if (parts.length !== 3) continue;
    const dir = prefix + parts.slice(0, 2).join('/');
    byDir.set(dir, [...(byDir.get(dir) ?? []), sf]);
  }
  return [...byDir.entries()].sort(([a], [b]) => cmp(a, b)).map(([dir, files]) => ({ dir, files }));
}

/** Whether a declaration is a kind: exported, with apiVersion, kind and metadata, or object:root=true. */
function isKind(ctx: ManifestContext, decl: ts.Node, markers: Marker[], alone: boolean): boolean {
  const root = markers.find((m) => m.definition === OBJECT_ROOT);
  const names = alone ? declaredNames(decl) : undefined;
  const type = names ? undefined : ctx.checker.getTypeAtLocation(decl);
  const has = (name: string) => names?.has(name) ?? type?.getProperty(name) !== undefined;
  if (has('items') && !has('spec')) return false; // a List type
  if (root) return root.value !== false;
  return has('apiVersion') && has('kind') && has('metadata');
}

/**
 * The names of an interface's properties and methods read from its syntax, when they are all it has (the
 * caller knows it is the type's only declaration): no `extends`, no computed name. Otherwise undefined,
 * and the checker is asked: resolving an interface's members is most of its cost here, for the many
 * interfaces that are not kinds, whose schemas are read from their syntax too.
 */
function declaredNames(decl: ts.Node): Set<string> | undefined {
  if (!ts.isInterfaceDeclaration(decl) || decl.heritageClauses) return undefined;
  const names = new Set<string>();
  for (const member of decl.members) {
    if (!member.name) continue; // call, construct and index signatures add no property
    if (!ts.isIdentifier(member.name) && !ts.isStringLiteral(member.name)) return undefined;
    names.add(member.name.text);
  }
  return names;
}

/** The declarations a kind can be. */
const isTypeDeclaration = (
  node: ts.Node,
): node is ts.InterfaceDeclaration | ts.TypeAliasDeclaration | ts.ClassDeclaration =>
  ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node) || ts.isClassDeclaration(node);

function exported(node: ts.Node): boolean {
  return (ts.getCombinedModifierFlags(node as ts.Declaration) & ts.ModifierFlags.Export) !== 0;
}

/** The kinds of the project, and every declaration that is a kind (also those left out for an error). */
function findKinds(ctx: ManifestContext): { kinds: KindVersion[]; kindDecls: Set<ts.Node> } {
  const kinds: KindVersion[] = [];
  const kindDecls = new Set<ts.Node>();
  for (const { dir, files } of versionDirs(ctx)) {
    const apiDir: ApiDirectory = {};
    for (const sf of files)
      for (const m of ctx.markers.fileMarkers(sf).package)
        m.definition.directory?.(apiDir, m.value, ctx.report.marker(m));
    if (apiDir.skip) continue;
    const candidates: { decl: KindVersion['decl']; markers: Marker[] }[] = [];
    for (const sf of files) {
      // Read for its directory's markers only: another thread of a parallel run has its kinds.
      if (!ctx.owns(sf)) continue;
      for (const stmt of sf.statements) {
        if (!isTypeDeclaration(stmt) || !stmt.name || !exported(stmt)) continue;
        // Of a type declared more than once (TypeScript merges them), the first declaration stands for
        // it; the schema builder reports the others.
        const declarations = ctx.checker.getSymbolAtLocation(stmt.name)?.declarations ?? [stmt];
        if (declarations.find(isTypeDeclaration) !== stmt) continue;
        const markers = ctx.markers.markersOf(stmt);
        if (isKind(ctx, stmt, markers, declarations.length === 1)) candidates.push({ decl: stmt, markers });
      }
    }
    if (candidates.length === 0) continue;
    for (const { decl } of candidates) kindDecls.add(decl);
    const group = apiDir.group;
    if (apiDir.invalidGroup) continue;
    const gv = files.find((sf) => path.basename(sf.fileName) === 'group-version.ts') ?? files[0]!;
    if (group === undefined) {
      ctx.report.error(
        { file: ctx.displayPath(gv), line: 1, col: 1 },
        'missing-group',
        `missing +groupName for the API version in ${dir}`,
        `add a comment line "// +groupName=${dir.split('/').at(-2)}.${ctx.domain ?? '<domain>'}" to ${dir}/group-version.ts`,
      );
      continue;
    }
    const version = apiDir.version ?? dir.split('/').at(-1) ?? '';
    if (apiDir.version === undefined && !isLabel(version)) {
      ctx.report.error(
        { file: ctx.displayPath(gv), line: 1, col: 1 },
        'invalid-version',
        `the version directory name ${JSON.stringify(version)} of ${dir} is not a version the API server takes: it must be ${LABEL_RULE}`,
        'rename the directory (e.g. v1, v1beta1), or name the version with a comment line "// +versionName=v1" in group-version.ts',
      );
      continue;
    }
    for (const { decl, markers } of candidates) {
      const kind = decl.name!.text;
      if (!isKindName(kind)) {
        ctx.report.error(
          decl.name!,
          'invalid-kind',
          `invalid kind ${kind}: the API server takes ${KIND_RULE}`,
          'rename the type, e.g. Guestbook',
        );
        continue;
      }
      kinds.push({ group, version, kind, decl, markers });
    }
  }
  return { kinds, kindDecls };
}

/** What a kind's markers say about its version (crd-markers.ts). */
function versionParts(ctx: ManifestContext, kv: KindVersion): VersionParts {
  const parts: VersionParts = {
    served: true,
    storage: false,
    skip: false,
    deprecated: false,
    subresources: {},
    columns: [],
    selectableFields: [],
  };
  for (const m of kv.markers) m.definition.version?.(parts, m.value, ctx.report.marker(m));
  return parts;
}

function versionEntry(
  kv: KindVersion,
  parts: VersionParts,
  schema: JSONSchemaProps,
): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    name: kv.version,
    served: parts.served,
    storage: false,
    schema: { openAPIV3Schema: schema },
  };
  if (parts.deprecated) entry['deprecated'] = true;
  if (parts.deprecationWarning !== undefined) entry['deprecationWarning'] = parts.deprecationWarning;
  if (Object.keys(parts.subresources).length > 0) entry['subresources'] = parts.subresources;
  if (parts.columns.length > 0) entry['additionalPrinterColumns'] = parts.columns;
  if (parts.selectableFields.length > 0) entry['selectableFields'] = parts.selectableFields;
  return entry;
}

/**
 * Cuts descriptions longer than `max` as controller-gen does (at a sentence end, else a word, plus "...").
 * Returns a changed copy: the schema's subtrees are the schema builder's cached ones, shared by every use.
 */
function truncateDescriptions(schema: JSONSchemaProps, max: number): JSONSchemaProps {
  if (max < 0) return schema;
  const out: JSONSchemaProps = { ...schema };
  if (out.description !== undefined) {
    if (max === 0) delete out.description;
    else if (out.description.length > max) out.description = truncate(out.description, max);
  }
  const cut = (child: JSONSchemaProps) => truncateDescriptions(child, max);
  if (out.properties) {
    const properties: Record<string, JSONSchemaProps> = {};
    for (const [name, child] of Object.entries(out.properties)) properties[name] = cut(child);
    out.properties = properties;
  }
  if (out.items) out.items = cut(out.items);
  if (typeof out.additionalProperties === 'object') out.additionalProperties = cut(out.additionalProperties);
  if (out.allOf) out.allOf = out.allOf.map(cut);
  if (out.anyOf) out.anyOf = out.anyOf.map(cut);
  if (out.oneOf) out.oneOf = out.oneOf.map(cut);
  return out;
}

function truncate(desc: string, max: number): string {
  const cut = desc.slice(0, max);
  const sentence = Math.max(cut.lastIndexOf('.'), cut.lastIndexOf('!'), cut.lastIndexOf('?'));
  if (sentence > 0) return cut.slice(0, sentence + 1);
  const space = cut.search(/\s\S*$/);
  if (space > 0) return `${cut.slice(0, space)}...`;
  return `${cut}...`;
}

/**
 * Kind markers (resource, subresource, printcolumn...) anywhere but on a kind are errors, but in the kinds
 * `kubesmith import crd` wrote into src/external: the project uses them and does not own their CRDs.
 */
function checkKindMarkers(ctx: ManifestContext, kindDecls: ReadonlySet<ts.Node>): void {
  for (const sf of ctx.sources) {
    if (!ctx.owns(sf)) continue;
    if (ctx.apiDir === API_DIR && ctx.displayPath(sf).startsWith(`${EXTERNAL_API_DIR}/`)) continue;
    for (const [node, markers] of ctx.markers.fileMarkers(sf).byNode) {
      if (markers.length === 0 || kindDecls.has(node)) continue;
      // Markers that act on a CRD or a version of it stand on kinds only.
      for (const m of markers) {
        if (!m.definition.crd && !m.definition.version) continue;
        const name = (node as ts.NamedDeclaration).name?.getText(sf) ?? 'this declaration';
        ctx.report.error(
          m,
          'misplaced-marker',
          `marker +${m.name} stands on ${name}, which is not a kind`,
          'put it above a kind: an exported type with apiVersion, kind and metadata in src/api/<group>/<version>/',
        );
      }
    }
  }
}

/** The CRD files of the project, each as soon as it is made (in the order of their group and kind). */
export function* generateCrds(
  ctx: ManifestContext,
  options: { version: string; maxDescLen?: number },
): Generator<GeneratedFile> {
  const { kinds, kindDecls } = findKinds(ctx);
  checkKindMarkers(ctx, kindDecls);
  const byGroupKind = new Map<string, KindVersion[]>();
  for (const kv of kinds) {
    const key = `${kv.group}/${kv.kind}`;
    byGroupKind.set(key, [...(byGroupKind.get(key) ?? []), kv]);
  }
  for (const [, versions] of [...byGroupKind.entries()].sort(([a], [b]) => cmp(a, b))) {
    const first = versions[0]!;
    const lower = first.kind.toLowerCase();
    const crd: CrdParts = {
      names: {
        kind: first.kind,
        listKind: `${first.kind}List`,
        plural: crdDefaultPlural(first.kind),
        singular: lower,
      },
      scope: 'Namespaced',
      annotations: { 'kubesmith.dev/version': options.version },
      labels: {},
    };
    const entries: {
      kv: KindVersion;
      parts: VersionParts;
      schema: JSONSchemaProps;
      entry: Record<string, unknown>;
    }[] = [];
    for (const kv of versions) {
      const parts = versionParts(ctx, kv);
      if (parts.skip) continue;
      for (const m of kv.markers) m.definition.crd?.(crd, m.value, ctx.report.marker(m));
      const schema = ctx.schemas.rootSchema(kv.decl);
      entries.push({ kv, parts, schema, entry: versionEntry(kv, parts, schema) });
    }
    if (entries.length === 0) continue;
    entries.sort((a, b) => cmp(a.kv.version, b.kv.version));
    if (entries.length === 1) entries[0]!.entry['storage'] = true;
    else {
      const storage = entries.filter(({ parts }) => parts.storage);
      if (storage.length !== 1) {
        const at = storage.length > 1 ? storage[1]!.kv.decl : entries[0]!.kv.decl;
        ctx.report.error(
          at,
          storage.length > 1 ? 'several-storage-versions' : 'no-storage-version',
          `${first.kind}.${first.group} has ${storage.length === 0 ? 'no' : storage.length} storage versions among ${entries.map((e) => e.kv.version).join(', ')}`,
          'mark exactly one version of the kind with +kubebuilder:storageversion',
        );
      }
      for (const { entry } of storage) entry['storage'] = true;
    }
    // The apiserver's rules over each whole schema: a safety net behind the per-property checks, which
    // point at the exact source; so it runs only when those found nothing.
    if (!ctx.report.hasErrors()) {
      for (const { kv, schema } of entries) {
        for (const problem of crdSchemaProblems(schema)) {
          ctx.report.error(
            kv.decl,
            'not-structural',
            `${kv.kind} ${kv.version}: ${problem.message}`,
            problem.hint ?? 'the apiserver would reject this CRD; change the type or its markers',
          );
        }
      }
    }
    if (options.maxDescLen !== undefined) {
      for (const e of entries) {
        e.schema = truncateDescriptions(e.schema, options.maxDescLen);
        e.entry['schema'] = { openAPIV3Schema: e.schema };
      }
    }
    const { names, scope, annotations, labels } = crd;
    const plural = names.plural;
    if (plural.length + 1 + first.group.length > MAX_CRD_NAME) {
      ctx.report.error(
        first.decl.name!,
        'invalid-crd-name',
        `the CRD's name ${plural}.${first.group} is longer than ${MAX_CRD_NAME} characters, the API server's limit`,
        'shorten the group (+groupName) or the plural (+kubebuilder:resource:path)',
      );
      continue;
    }
    const object = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: {
        annotations,
        ...(Object.keys(labels).length > 0 ? { labels } : {}),
        name: `${plural}.${first.group}`,
      },
      spec: { group: first.group, names, scope, versions: entries.map((e) => e.entry) },
    };
    yield { path: crdFile(first.group, plural), documents: [object], source: first.decl };
  }
}
