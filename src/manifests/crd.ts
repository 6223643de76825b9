/**
 * CRDs: kinds found in `src/api/<group>/<version>/*.ts`, group from `+groupName` (in group-version.ts),
 * version from the directory or `+versionName`; names, scope, subresources, printer columns and version
 * flags from the kind's markers; versions of one kind merged into one CRD, sorted by name.
 */
import path from 'node:path';
import { ts } from './ts-morph.cjs';
import { isError, type Marker } from '../markers/index.js';
import { crdDefaultPlural } from '../project/plural.js';
import { crdSchemaProblems, type JSONSchemaProps } from '../schema/index.js';
import { crdFile } from '../project/layout.js';
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
    const parts = rel.split('/');
    if (parts.length !== 5 || parts[0] !== 'src' || parts[1] !== 'api') continue;
    const dir = parts.slice(0, 4).join('/');
    byDir.set(dir, [...(byDir.get(dir) ?? []), sf]);
  }
  return [...byDir.entries()].sort(([a], [b]) => cmp(a, b)).map(([dir, files]) => ({ dir, files }));
}

function report(ctx: ManifestContext, node: ts.Node, code: string, message: string, hint?: string): void {
  ctx.builder.report(node, code, message, hint);
}

/** Whether a declaration is a kind: exported, with apiVersion, kind and metadata, or object:root=true. */
function isKind(ctx: ManifestContext, decl: ts.Node, markers: Marker[]): boolean {
  const root = markers.find((m) => m.name === 'kubebuilder:object:root');
  const type = ctx.checker.getTypeAtLocation(decl);
  const has = (name: string) => type.getProperty(name) !== undefined;
  if (has('items') && !has('spec')) return false; // a List type
  if (root) return root.value !== false;
  return has('apiVersion') && has('kind') && has('metadata');
}

function exported(node: ts.Node): boolean {
  return (ts.getCombinedModifierFlags(node as ts.Declaration) & ts.ModifierFlags.Export) !== 0;
}

/** The kinds of the project, and every declaration that is a kind (also those left out for an error). */
function findKinds(ctx: ManifestContext): { kinds: KindVersion[]; kindDecls: Set<ts.Node> } {
  const kinds: KindVersion[] = [];
  const kindDecls = new Set<ts.Node>();
  for (const { dir, files } of versionDirs(ctx)) {
    const pkg = files.flatMap((sf) => ctx.builder.fileMarkers(sf).package);
    if (pkg.some((m) => m.name === 'kubebuilder:skip')) continue;
    const candidates: { decl: KindVersion['decl']; markers: Marker[] }[] = [];
    for (const sf of files) {
      for (const stmt of sf.statements) {
        if (!(
          ts.isInterfaceDeclaration(stmt) ||
          ts.isTypeAliasDeclaration(stmt) ||
          ts.isClassDeclaration(stmt)
        ))
          continue;
        if (!stmt.name || !exported(stmt)) continue;
        const markers = ctx.builder.markersOf(stmt);
        if (isKind(ctx, stmt, markers)) candidates.push({ decl: stmt, markers });
      }
    }
    if (candidates.length === 0) continue;
    for (const { decl } of candidates) kindDecls.add(decl);
    const groupMarker = pkg.find((m) => m.name === 'groupName');
    const group = typeof groupMarker?.value === 'string' ? groupMarker.value : undefined;
    if (group === undefined) {
      const gv = files.find((sf) => path.basename(sf.fileName) === 'group-version.ts') ?? files[0]!;
      ctx.diagnostics.push({
        file: ctx.displayPath(gv),
        line: 1,
        col: 1,
        code: 'missing-group',
        message: `missing +groupName for the API version in ${dir}`,
        hint: `add a comment line "// +groupName=${dir.split('/')[2]}.${ctx.domain ?? '<domain>'}" to ${dir}/group-version.ts`,
      });
      continue;
    }
    const versionMarker = pkg.find((m) => m.name === 'versionName');
    const version =
      typeof versionMarker?.value === 'string' ? versionMarker.value : (dir.split('/')[3] ?? '');
    for (const { decl, markers } of candidates) {
      kinds.push({ group, version, kind: decl.name!.text, decl, markers });
    }
  }
  return { kinds, kindDecls };
}

interface ColumnArgs {
  name: string;
  type: string;
  JSONPath: string;
  description?: string;
  format?: string;
  priority?: number;
}

function versionEntry(ctx: ManifestContext, kv: KindVersion): Record<string, unknown> {
  const schema: JSONSchemaProps = ctx.builder.rootSchema(kv.decl);
  const entry: Record<string, unknown> = {
    name: kv.version,
    served: true,
    storage: false,
    schema: { openAPIV3Schema: schema },
  };
  const subresources: Record<string, unknown> = {};
  const columns: Record<string, unknown>[] = [];
  const selectable: { jsonPath: string }[] = [];
  for (const m of kv.markers) {
    const v = m.value as Record<string, unknown>;
    switch (m.name) {
      case 'kubebuilder:subresource:status':
        subresources['status'] = {};
        break;
      case 'kubebuilder:subresource:scale':
        subresources['scale'] = {
          specReplicasPath: v['specpath'],
          statusReplicasPath: v['statuspath'],
          ...(v['selectorpath'] !== undefined ? { labelSelectorPath: v['selectorpath'] } : {}),
        };
        break;
      case 'kubebuilder:printcolumn': {
        const c = m.value as ColumnArgs;
        columns.push({
          name: c.name,
          type: c.type,
          jsonPath: c.JSONPath,
          ...(c.description ? { description: c.description } : {}),
          ...(c.format ? { format: c.format } : {}),
          ...(c.priority ? { priority: c.priority } : {}),
        });
        break;
      }
      case 'kubebuilder:selectablefield':
        selectable.push({ jsonPath: v['JSONPath'] as string });
        break;
      case 'kubebuilder:unservedversion':
        entry['served'] = false;
        break;
      case 'kubebuilder:deprecatedversion':
        entry['deprecated'] = true;
        if (typeof v['warning'] === 'string') entry['deprecationWarning'] = v['warning'];
        break;
    }
  }
  if (Object.keys(subresources).length > 0) entry['subresources'] = subresources;
  if (columns.length > 0) entry['additionalPrinterColumns'] = columns;
  if (selectable.length > 0) entry['selectableFields'] = selectable;
  return entry;
}

/** Cuts descriptions longer than `max` as controller-gen does (at a sentence end, else a word, plus "..."). */
export function truncateDescriptions(schema: JSONSchemaProps, max: number): void {
  if (max < 0) return;
  if (schema.description !== undefined) {
    if (max === 0) delete schema.description;
    else if (schema.description.length > max) schema.description = truncate(schema.description, max);
  }
  const children: JSONSchemaProps[] = [
    ...Object.values(schema.properties ?? {}),
    ...(schema.items ? [schema.items] : []),
    ...(typeof schema.additionalProperties === 'object' ? [schema.additionalProperties] : []),
    ...(schema.allOf ?? []),
    ...(schema.anyOf ?? []),
    ...(schema.oneOf ?? []),
  ];
  for (const child of children) truncateDescriptions(child, max);
}

function truncate(desc: string, max: number): string {
  const cut = desc.slice(0, max);
  const sentence = Math.max(cut.lastIndexOf('.'), cut.lastIndexOf('!'), cut.lastIndexOf('?'));
  if (sentence > 0) return cut.slice(0, sentence + 1);
  const space = cut.search(/\s\S*$/);
  if (space > 0) return `${cut.slice(0, space)}...`;
  return `${cut}...`;
}

/** Kind markers (resource, subresource, printcolumn...) anywhere but on a kind are errors. */
function checkKindMarkers(ctx: ManifestContext, kindDecls: ReadonlySet<ts.Node>): void {
  for (const sf of ctx.sources) {
    for (const [node, markers] of ctx.builder.fileMarkers(sf).byNode) {
      if (kindDecls.has(node)) continue;
      const name = (node as ts.NamedDeclaration).name?.getText(sf) ?? 'this declaration';
      for (const m of markers.filter((m) => m.definition.kindOnly)) {
        ctx.diagnostics.push({
          file: m.file,
          line: m.line,
          col: m.col,
          code: 'misplaced-marker',
          message: `marker +${m.name} stands on ${name}, which is not a kind`,
          hint: 'put it above a kind: an exported type with apiVersion, kind and metadata in src/api/<group>/<version>/',
        });
      }
    }
  }
}

/** The CRD files of the project. */
export function generateCrds(
  ctx: ManifestContext,
  options: { version: string; maxDescLen?: number },
): GeneratedFile[] {
  const { kinds, kindDecls } = findKinds(ctx);
  checkKindMarkers(ctx, kindDecls);
  const byGroupKind = new Map<string, KindVersion[]>();
  for (const kv of kinds) {
    const key = `${kv.group}/${kv.kind}`;
    byGroupKind.set(key, [...(byGroupKind.get(key) ?? []), kv]);
  }
  const files: GeneratedFile[] = [];
  for (const [, versions] of [...byGroupKind.entries()].sort(([a], [b]) => cmp(a, b))) {
    const first = versions[0]!;
    const lower = first.kind.toLowerCase();
    const names: Record<string, unknown> = {
      kind: first.kind,
      listKind: `${first.kind}List`,
      plural: crdDefaultPlural(first.kind),
      singular: lower,
    };
    let scope = 'Namespaced';
    const annotations: Record<string, string> = { 'kubesmith.dev/version': options.version };
    const labels: Record<string, string> = {};
    const entries: { kv: KindVersion; entry: Record<string, unknown> }[] = [];
    for (const kv of versions) {
      if (kv.markers.some((m) => m.name === 'kubebuilder:skipversion')) continue;
      for (const m of kv.markers) {
        const v = m.value as Record<string, unknown>;
        if (m.name === 'kubebuilder:resource') {
          if (typeof v['path'] === 'string' && v['path']) names['plural'] = v['path'];
          if (typeof v['singular'] === 'string' && v['singular']) names['singular'] = v['singular'];
          if (Array.isArray(v['shortName'])) names['shortNames'] = v['shortName'];
          if (Array.isArray(v['categories'])) names['categories'] = v['categories'];
          scope = typeof v['scope'] === 'string' && v['scope'] ? v['scope'] : 'Namespaced';
          if (scope !== 'Namespaced' && scope !== 'Cluster') {
            ctx.diagnostics.push({
              file: m.file,
              line: m.line,
              col: m.col,
              code: 'invalid-marker',
              message: `invalid scope ${JSON.stringify(scope)} in +kubebuilder:resource`,
              hint: 'use scope=Namespaced or scope=Cluster',
            });
          }
        }
        if (m.name === 'kubebuilder:metadata') {
          for (const a of (v['annotations'] as string[] | undefined) ?? []) {
            const eq = a.indexOf('=');
            if (eq < 0) {
              ctx.diagnostics.push({
                file: m.file,
                line: m.line,
                col: m.col,
                code: 'invalid-marker',
                message: `annotation ${a} is not in 'key=value' format`,
              });
            } else annotations[a.slice(0, eq)] = a.slice(eq + 1);
          }
          for (const l of (v['labels'] as string[] | undefined) ?? []) {
            const eq = l.indexOf('=');
            labels[eq < 0 ? l : l.slice(0, eq)] = eq < 0 ? '' : l.slice(eq + 1);
          }
        }
      }
      entries.push({ kv, entry: versionEntry(ctx, kv) });
    }
    if (entries.length === 0) continue;
    entries.sort((a, b) => cmp(a.kv.version, b.kv.version));
    if (entries.length === 1) entries[0]!.entry['storage'] = true;
    else {
      const storage = entries.filter(({ kv }) =>
        kv.markers.some((m) => m.name === 'kubebuilder:storageversion'),
      );
      if (storage.length !== 1) {
        const at = storage.length > 1 ? storage[1]!.kv.decl : entries[0]!.kv.decl;
        report(
          ctx,
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
    if (!ctx.diagnostics.some(isError)) {
      for (const { kv, entry } of entries) {
        const schema = (entry['schema'] as { openAPIV3Schema: JSONSchemaProps }).openAPIV3Schema;
        for (const problem of crdSchemaProblems(schema)) {
          report(
            ctx,
            kv.decl,
            'not-structural',
            `${kv.kind} ${kv.version}: ${problem.message}`,
            problem.hint ?? 'the apiserver would reject this CRD; change the type or its markers',
          );
        }
      }
    }
    if (options.maxDescLen !== undefined) {
      for (const { entry } of entries) {
        truncateDescriptions(
          (entry['schema'] as { openAPIV3Schema: JSONSchemaProps }).openAPIV3Schema,
          options.maxDescLen,
        );
      }
    }
    const plural = names['plural'] as string;
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: {
        annotations,
        ...(Object.keys(labels).length > 0 ? { labels } : {}),
        name: `${plural}.${first.group}`,
      },
      spec: { group: first.group, names, scope, versions: entries.map((e) => e.entry) },
    };
    files.push({
      path: crdFile(first.group, plural),
      documents: [crd],
      source: first.decl,
    });
  }
  return files;
}
