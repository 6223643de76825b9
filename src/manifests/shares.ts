/**
 * How a run on two threads (parallel.ts) shares out the API files: whole kinds to each share, the files
 * every share reads for file-level markers, and whether the API may be split at all.
 *
 * - The plan is made from the files' text, so that each thread parses only its own files: files that
 *   seem to declare the same name (an exported interface, type or class, which crd.ts may take for a
 *   kind) stay together, so every version of a kind is in one share, whatever group its directory names.
 *   Each thread's parsed files then confirm it (`summarize`, `confirm`): a name the text missed, declared
 *   in both shares, or an API `oneProgramReason` refuses, and the run stays on one thread.
 * - Every share reads the file-level markers of every API file that has a line that could be one (from a
 *   `+` to the end of its line or comment, a name the registry knows as a file-level marker): the group,
 *   version and defaults of their directories, wherever they stand.
 * - The main thread's share (the first) has the API files outside version directories, and the other
 *   sources (`others` in context.ts).
 */
import path from 'node:path';
import type { MarkerRegistry } from '../markers/index.js';
import { API_DIR } from '../project/layout.js';
import { importsOfAll } from '../typescript/api-program.js';
import type { Imports } from '../typescript/declarations.js';
import { ts } from '../typescript/compiler.cjs';
import type { SourceListing } from './sources.js';

// Read once: the bundle's `ts.SyntaxKind` is a getter, and the walk below switches on every node's kind.
const Kind = ts.SyntaxKind;

/** Which API files each thread generates (the main thread's first), and those every thread reads. */
export interface Plan {
  owned: [string[], string[]];
  /** The API files that may hold a file-level marker (`mayHoldFileMarker`): every share reads them. */
  packageFiles: string[];
}

/**
 * The plan, from the files' text, before any is parsed (each thread parses only its own): files that
 * seem to declare the same name (`export interface Foo`...) go together, the groups shared out by size.
 * The syntax confirms it once parsed (`confirm`). Undefined when there are fewer than two groups.
 */
export function planShares(listing: SourceListing, registry: MarkerRegistry): Plan | undefined {
  const prefix = `${(listing.paths ? listing.root : path.join(listing.root, API_DIR)).split(path.sep).join('/')}/`;
  const texts = new Map(listing.apiFiles.map((f) => [f, listing.read(f)]));
  const kindFiles: string[] = [];
  const rest: string[] = [];
  // Kinds are read from `<group>/<version>/<file>.ts` only (crd.ts); other API files are the main thread's.
  for (const file of listing.apiFiles)
    (file.slice(prefix.length).split('/').length === 3 ? kindFiles : rest).push(file);
  // Files that declare the same name belong together: union-find over the names.
  const parent = new Map(kindFiles.map((f) => [f, f]));
  const find = (f: string): string => {
    let at = f;
    while (parent.get(at) !== at) at = parent.get(at)!;
    parent.set(f, at);
    return at;
  };
  const byName = new Map<string, string>();
  for (const file of kindFiles) {
    for (const [, name] of texts.get(file)!.matchAll(EXPORTED_NAME)) {
      const other = byName.get(name!);
      if (other === undefined) byName.set(name!, file);
      else {
        const [a, b] = [find(file), find(other)].sort();
        parent.set(b!, a!);
      }
    }
  }
  const groups = new Map<string, string[]>();
  for (const file of kindFiles) {
    const root = find(file);
    groups.set(root, [...(groups.get(root) ?? []), file]);
  }
  if (groups.size < 2) return undefined;
  const weight = (files: readonly string[]) => files.reduce((sum, f) => sum + texts.get(f)!.length, 0);
  // The biggest groups first, each to the lighter share; the main thread starts with its other files.
  const loads: [number, number] = [weight(rest), 0];
  const owned: [string[], string[]] = [[...rest], []];
  const sorted = [...groups.values()].sort((a, b) => weight(b) - weight(a) || (a[0]! < b[0]! ? -1 : 1));
  for (const files of sorted) {
    const to = loads[0] <= loads[1] ? 0 : 1;
    owned[to].push(...files);
    loads[to] += weight(files) * (to === 1 ? WORKER_COST : 1);
  }
  return {
    owned: [owned[0].sort(), owned[1].sort()],
    packageFiles: listing.apiFiles.filter((f) => mayHoldFileMarker(texts.get(f)!, registry)),
  };
}

/**
 * A byte of the worker's share counts for more than one of the main thread's: the worker starts its share
 * later (its own start and TypeScript take longer than the main thread's plan), which outweighs the main
 * thread's other work (the other sources, the merge). Measured by thread CPU time at 50 and 200 kinds of
 * both corpora of `npm run bench`: 0.85 left the worker last by 0.1 to 0.2 s, 1.25 the main thread by
 * up to 0.1 s.
 */
const WORKER_COST = 1.15;

/** `export interface Foo`, `export declare abstract class Foo`...: what the plan reads names from. */
const EXPORTED_NAME =
  /\bexport\s+(?:declare\s+)?(?:default\s+)?(?:abstract\s+)?(?:interface|type|class)\s+([A-Za-z_$][\w$]*)/g;

/** What a thread's parsed files say about the plan: their names, whether one refuses it, their imports. */
export interface Summary {
  names: [file: string, names: string[]][];
  reason: string | undefined;
  imports: Imports;
}

export function summarize(files: Iterable<ts.SourceFile>): Summary {
  const summary: Summary = { names: [], reason: undefined, imports: { names: new Map() } };
  const all = [...files];
  for (const sf of all) {
    summary.names.push([sf.fileName, declaredNames(sf)]);
    const why = oneProgramReason(sf);
    if (why !== undefined && summary.reason === undefined) summary.reason = `${sf.fileName}: ${why}`;
  }
  summary.imports = importsOfAll(all);
  return summary;
}

/**
 * The imports of all the API files when the two threads' summaries confirm the plan: no file refuses it,
 * and no name is declared in both shares (the text missed one). Undefined otherwise.
 */
export function confirm(summaries: readonly [Summary, Summary]): Imports | undefined {
  const share = new Map<string, number>();
  for (const [index, summary] of summaries.entries()) {
    if (summary.reason !== undefined) return undefined;
    for (const [, names] of summary.names) {
      for (const name of names) {
        if ((share.get(name) ?? index) !== index) return undefined;
        share.set(name, index);
      }
    }
  }
  const imports: Imports = { names: new Map() };
  for (const summary of summaries) {
    for (const [pkg, names] of summary.imports.names) {
      if (!imports.names.has(pkg)) imports.names.set(pkg, new Set());
      const set = imports.names.get(pkg);
      if (!names) imports.names.set(pkg, undefined);
      else for (const n of names) set?.add(n);
    }
  }
  return imports;
}

/** The names an API file declares as crd.ts looks for kinds: exported interfaces, type aliases, classes. */
function declaredNames(sf: ts.SourceFile): string[] {
  const names: string[] = [];
  for (const stmt of sf.statements) {
    const named = stmt as ts.Statement & { name?: ts.Identifier };
    if (named.name && hasExport(stmt)) names.push(named.name.text);
  }
  return names;
}

function hasExport(stmt: ts.Statement): boolean {
  const modifiers = (stmt as { modifiers?: readonly ts.Node[] }).modifiers ?? [];
  return modifiers.some((m) => m.kind === Kind.ExportKeyword);
}

/**
 * Whether any line of `text` could be a file-level marker (a group, a version, a default of the directory,
 * an rbac rule): from a `+` to the end of its line or comment, a name the registry knows as one. Every
 * marker the collector finds is such a line, so a file without one has no file-level marker.
 */
export function mayHoldFileMarker(text: string, registry: MarkerRegistry): boolean {
  for (let at = text.indexOf('+'); at >= 0; at = text.indexOf('+', at + 1)) {
    let end = at;
    while (end < text.length && !'\n\r\u2028\u2029'.includes(text[end]!) && !text.startsWith('*/', end))
      end++;
    if (registry.lookup(text.slice(at, end).trim(), 'package')) return true;
  }
  return false;
}

/**
 * Why an API file's schemas could depend on which other files share its program, or undefined. A union the
 * checker computes lists its members in the order it created their types, and the other kinds of a program
 * change that order: what makes one is refused here (an indexed access, `typeof`, `keyof`, a mapped,
 * conditional or template literal type, a generic declaration or instantiation but Array, ReadonlyArray,
 * Record<string, T> and the mapping aliases over a named type or a literal), and so are scripts and
 * namespaces, whose declarations other files see without an import.
 */
export function oneProgramReason(sf: ts.SourceFile): string | undefined {
  if (!ts.isExternalModule(sf)) return 'a script (no import or export)';
  for (const stmt of sf.statements) {
    const why = ts.isModuleDeclaration(stmt)
      ? 'a namespace or module declaration'
      : ts.isClassDeclaration(stmt)
        ? classReason(stmt)
        : ts.isInterfaceDeclaration(stmt) || ts.isTypeAliasDeclaration(stmt)
          ? typeReason(stmt)
          : undefined; // values (a kind's `GroupVersion.kind<T>(...)`), imports, enums: no type of a schema
    if (why !== undefined) return why;
  }
  return undefined;
}

/** A class's types: its type parameters, what it extends, its properties' (an inferred one refuses). */
function classReason(decl: ts.ClassDeclaration): string | undefined {
  if (decl.typeParameters) return 'a generic class';
  for (const clause of decl.heritageClauses ?? []) {
    // `implements` checks the class against a type; it makes none of its members.
    if (clause.token !== Kind.ExtendsKeyword) continue;
    for (const type of clause.types) {
      const why = typeReason(type);
      if (why !== undefined) return why;
    }
  }
  for (const member of decl.members) {
    if (ts.isPropertyDeclaration(member) || ts.isGetAccessorDeclaration(member)) {
      if (!member.type) return 'a class property whose type is inferred';
      const why = typeReason(member.type);
      if (why !== undefined) return why;
    } else if (ts.isConstructorDeclaration(member)) {
      for (const parameter of member.parameters) {
        if (!parameter.type) return 'a constructor parameter whose type is inferred';
        const why = typeReason(parameter.type);
        if (why !== undefined) return why;
      }
    }
  }
  return undefined;
}

/** The first type construct under `node` that `refused` names. */
function typeReason(node: ts.Node): string | undefined {
  let found: string | undefined;
  const visit = (child: ts.Node): void => {
    if (found) return;
    found = refused(child);
    if (!found) ts.forEachChild(child, visit);
  };
  visit(node);
  return found;
}

const FREE = new Set(['Array', 'ReadonlyArray']);
const MAPPING = new Set(['Partial', 'Required', 'Readonly', 'Pick', 'Omit']);

function refused(node: ts.Node): string | undefined {
  switch (node.kind) {
    case Kind.TypeQuery:
    case Kind.IndexedAccessType:
    case Kind.MappedType:
    case Kind.ConditionalType:
    case Kind.InferType:
    case Kind.TemplateLiteralType:
    case Kind.TypeParameter:
      return ts.SyntaxKind[node.kind];
    case Kind.TypeOperator:
      return (node as ts.TypeOperatorNode).operator === Kind.KeyOfKeyword ? 'keyof' : undefined;
    case Kind.TypeReference:
    case Kind.ExpressionWithTypeArguments: {
      const ref = node as ts.TypeReferenceNode | ts.ExpressionWithTypeArguments;
      const args = ref.typeArguments;
      if (!args || args.length === 0) return undefined;
      const name =
        ts.isTypeReferenceNode(ref) && ts.isIdentifier(ref.typeName) ? ref.typeName.text : undefined;
      if (name !== undefined && FREE.has(name)) return undefined;
      if (name === 'Record' && args[0]?.kind === Kind.StringKeyword) return undefined;
      const first = args[0]!;
      const plain =
        ts.isTypeLiteralNode(first) ||
        (ts.isTypeReferenceNode(first) && (first.typeArguments?.length ?? 0) === 0);
      if (name !== undefined && MAPPING.has(name) && plain) return undefined;
      return `type arguments of ${name ?? 'an expression'}`;
    }
    default:
      return undefined;
  }
}
