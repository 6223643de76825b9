/**
 * Which declarations of `@kubesmith/runtime` and `@kubernetes/client-node` the generator's program loads.
 *
 * Both packages' entry points re-export everything: the runtime's `index.d.ts` reaches its client, cache
 * and manager modules and through them all of client-node's ~900 declaration files (2 to 4 s and 150 MB
 * of a cold run), while API types use a handful of types (int32, ObjectMeta, Condition, V1PodSpec...).
 * So, when every import of these packages in the API files names exports it can trace, the program sees
 * the real entry files with a smaller text: only the export declarations of the runtime modules that
 * provide those names (provided those modules import nothing but each other and client-node models), and
 * for client-node only `export { Name } from './gen/models/Name.js'` of the models needed. The
 * declarations themselves are the installed packages' own files, unchanged, so the checker sees exactly
 * the types a full program sees, and known types are still recognised by the package they come from.
 *
 * Anything it cannot trace (a namespace or default import, `export *`, `import('...')` types, a module
 * augmentation, a name from a module that imports more, a client-node name without a model file) loads
 * the full declarations; so does any other file of the finished program that imports either package for
 * a name the smaller entries lack, or imports a cut entry file by a relative path (`checkSubset`).
 */
import path from 'node:path';
import { ts } from './compiler.cjs';

export const RUNTIME = '@kubesmith/runtime';
export const CLIENT_NODE = '@kubernetes/client-node';
const PACKAGES = new Set([RUNTIME, CLIENT_NODE]);

/** The names a file imports from each package, or `undefined` for a package it uses in a way not traced. */
export interface Imports {
  names: Map<string, Set<string> | undefined>;
}

/** The package (or entry) a module specifier of `fromFile` stands for, if it is one of those traced. */
type Target = (specifier: string, fromFile: string) => string | undefined;

const byName: Target = (specifier) => (PACKAGES.has(specifier) ? specifier : undefined);

/** What `sf` imports from the two packages (or what `target` picks), read from its syntax. */
export function importsOf(sf: ts.SourceFile, target: Target = byName): Imports {
  const names = new Map<string, Set<string> | undefined>();
  const add = (pkg: string, name: string | undefined) => {
    if (!names.has(pkg)) names.set(pkg, new Set());
    const set = names.get(pkg);
    if (name === undefined) names.set(pkg, undefined);
    else set?.add(name);
  };
  const specifier = (node: ts.Node | undefined) =>
    node && ts.isStringLiteral(node) ? target(node.text, sf.fileName) : undefined;
  for (const stmt of sf.statements) {
    if (ts.isImportDeclaration(stmt)) {
      const pkg = specifier(stmt.moduleSpecifier);
      if (!pkg) continue;
      const clause = stmt.importClause;
      if (!clause) continue; // `import '@kubesmith/runtime'`: no names
      if (clause.name) add(pkg, undefined);
      const bindings = clause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) add(pkg, undefined);
      if (bindings && ts.isNamedImports(bindings))
        for (const el of bindings.elements) add(pkg, (el.propertyName ?? el.name).text);
    } else if (ts.isExportDeclaration(stmt)) {
      const pkg = specifier(stmt.moduleSpecifier);
      if (!pkg) continue;
      const clause = stmt.exportClause;
      if (!clause || ts.isNamespaceExport(clause)) add(pkg, undefined);
      else for (const el of clause.elements) add(pkg, (el.propertyName ?? el.name).text);
    } else if (ts.isImportEqualsDeclaration(stmt) && ts.isExternalModuleReference(stmt.moduleReference)) {
      const pkg = specifier(stmt.moduleReference.expression);
      if (pkg) add(pkg, undefined);
    } else if (ts.isModuleDeclaration(stmt) && ts.isStringLiteral(stmt.name)) {
      const pkg = specifier(stmt.name); // a module augmentation
      if (pkg) add(pkg, undefined);
    }
  }
  // `import('...').Name` types and `import('...')` calls: not traced.
  if (/\bimport\s*\(/.test(sf.text)) {
    const visit = (node: ts.Node): void => {
      const arg = ts.isImportTypeNode(node)
        ? ts.isLiteralTypeNode(node.argument)
          ? node.argument.literal
          : undefined
        : ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword
          ? node.arguments[0]
          : undefined;
      const pkg = specifier(arg);
      if (pkg) add(pkg, undefined);
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return { names };
}

/** The smaller entry files: their paths (as the program resolves them) and texts, and what they export. */
export interface Subset {
  /** Entry file path (with `/`) -> its smaller text. */
  entries: Map<string, string>;
  /** The names each package's smaller entry exports. */
  exported: Map<string, Set<string>>;
  /** The entry files of each package. */
  entriesByPackage: Map<string, string[]>;
}

/** How the planner finds and reads the packages' declaration files. */
export interface PackageReader {
  /** The entry file `pkg` resolves to from `fromFile`, in both module modes, or undefined. */
  resolve(pkg: string, fromFile: string): string[] | undefined;
  /** A declaration file parsed as the program parses it, or undefined when it cannot be read. */
  parse(file: string): ts.SourceFile | undefined;
}

/**
 * Resolves as the program will, and parses with the program's options into `parsed`, the program's own
 * cache of parsed files (program.ts): the declarations read to plan the subset (the runtime's modules,
 * client-node's models) are the files the program then loads, and are not parsed again. The program's
 * host takes a cached file without asking its `mayRead` (api-program.ts): the planner parses only
 * declaration files (`.d.ts`) at the real paths module resolution gives, which it allows.
 */
export function packageReader(
  options: ts.CompilerOptions,
  parseOptions: ts.CreateSourceFileOptions,
  parsed: Map<string, ts.SourceFile>,
): PackageReader {
  return {
    resolve(pkg, fromFile) {
      const found = new Set<string>();
      for (const mode of [ts.ModuleKind.ESNext, ts.ModuleKind.CommonJS] as const) {
        const resolved = ts.resolveModuleName(pkg, fromFile, options, ts.sys, undefined, undefined, mode);
        const file = resolved.resolvedModule?.resolvedFileName;
        if (!file || !file.endsWith('.d.ts')) return undefined;
        found.add(file.split(path.sep).join('/'));
      }
      return [...found];
    },
    parse(file) {
      const cached = parsed.get(file);
      if (cached) return cached;
      // Read as the program's host reads it (ts.sys drops a byte order mark).
      const text = ts.sys.readFile(file);
      if (text === undefined) return undefined;
      const sf = ts.createSourceFile(file, text, parseOptions);
      parsed.set(file, sf);
      return sf;
    },
  };
}

/**
 * The smaller entries for `wanted` (the names the API files import from each package), or undefined when
 * a wanted name cannot be traced (then the full declarations load).
 */
export function planSubset(wanted: Imports, fromFile: string, reader: PackageReader): Subset | undefined {
  const entries = new Map<string, string>();
  const exported = new Map<string, Set<string>>();
  const entriesByPackage = new Map<string, string[]>();
  const addEntry = (pkg: string, file: string, text: string) => {
    entries.set(file, text);
    entriesByPackage.set(pkg, [...(entriesByPackage.get(pkg) ?? []), file]);
  };
  const clientWanted = new Map<string, Set<string>>(); // from file -> names
  const wantClient = (from: string, names: Iterable<string>) => {
    const set = clientWanted.get(from) ?? new Set<string>();
    for (const n of names) set.add(n);
    clientWanted.set(from, set);
  };

  const runtimeNames = wanted.names.get(RUNTIME);
  if (wanted.names.has(RUNTIME)) {
    if (!runtimeNames) return undefined;
    const indexes = reader.resolve(RUNTIME, fromFile);
    if (!indexes) return undefined;
    for (const index of indexes) {
      const subset = runtimeSubset(reader, index, runtimeNames, wantClient);
      if (!subset) return undefined;
      addEntry(RUNTIME, index, subset.text);
      exported.set(RUNTIME, subset.exported);
    }
  }
  const clientNames = wanted.names.get(CLIENT_NODE);
  if (wanted.names.has(CLIENT_NODE)) {
    if (!clientNames) return undefined;
    wantClient(fromFile, clientNames);
  }
  if (clientWanted.size > 0) {
    const all = new Set<string>();
    for (const names of clientWanted.values()) for (const n of names) all.add(n);
    const text = [...all]
      .sort()
      .map((n) => `export { ${n} } from './gen/models/${n}.js';\n`)
      .join('');
    for (const from of clientWanted.keys()) {
      const indexes = reader.resolve(CLIENT_NODE, from);
      if (!indexes) return undefined;
      for (const index of indexes) {
        const dist = path.posix.dirname(index);
        for (const n of all)
          if (!isModel(reader, path.posix.join(dist, 'gen/models', `${n}.d.ts`), n)) return undefined;
        addEntry(CLIENT_NODE, index, text);
      }
    }
    exported.set(CLIENT_NODE, all);
  }
  return { entries, exported, entriesByPackage };
}

/** Whether `file` declares and exports `name` (client-node's model files each hold one model). */
function isModel(reader: PackageReader, file: string, name: string): boolean {
  const sf = reader.parse(file); // undefined for a file that does not exist
  return (
    sf?.statements.some(
      (s) =>
        (ts.isClassDeclaration(s) ||
          ts.isInterfaceDeclaration(s) ||
          ts.isTypeAliasDeclaration(s) ||
          ts.isEnumDeclaration(s)) &&
        s.name?.text === name &&
        (ts.getCombinedModifierFlags(s) & ts.ModifierFlags.Export) !== 0,
    ) ?? false
  );
}

/**
 * The runtime entry's export declarations that provide `names`, if each comes from a module that imports
 * only modules of the same kind and named client-node exports (reported through `wantClient`).
 */
function runtimeSubset(
  reader: PackageReader,
  index: string,
  names: Set<string>,
  wantClient: (from: string, names: Iterable<string>) => void,
): { text: string; exported: Set<string> } | undefined {
  const sf = reader.parse(index);
  if (!sf) return undefined;
  const byName = new Map<string, ts.ExportDeclaration>();
  for (const stmt of sf.statements) {
    if (
      ts.isExportDeclaration(stmt) &&
      stmt.exportClause &&
      ts.isNamedExports(stmt.exportClause) &&
      stmt.moduleSpecifier &&
      ts.isStringLiteral(stmt.moduleSpecifier) &&
      stmt.moduleSpecifier.text.startsWith('./')
    ) {
      for (const el of stmt.exportClause.elements) byName.set(el.name.text, stmt);
    }
  }
  const kept = new Set<ts.ExportDeclaration>();
  for (const name of names) {
    const decl = byName.get(name);
    if (!decl) return undefined;
    kept.add(decl);
  }
  const dir = path.posix.dirname(index);
  const visited = new Set<string>();
  for (const decl of kept) {
    const target = path.posix.join(dir, (decl.moduleSpecifier as ts.StringLiteral).text);
    if (!selfContained(reader, target, visited, wantClient)) return undefined;
  }
  const exported = new Set<string>();
  let text = '';
  for (const stmt of sf.statements) {
    if (!kept.has(stmt as ts.ExportDeclaration)) continue;
    text += `${sf.text.slice(stmt.getStart(sf), stmt.end)}\n`;
    for (const el of ((stmt as ts.ExportDeclaration).exportClause as ts.NamedExports).elements)
      exported.add(el.name.text);
  }
  return { text, exported };
}

/**
 * Whether the declaration module `specifierPath` (`.../types.js`) imports nothing but relative modules that
 * are themselves self-contained and named exports of client-node.
 */
function selfContained(
  reader: PackageReader,
  specifierPath: string,
  visited: Set<string>,
  wantClient: (from: string, names: Iterable<string>) => void,
): boolean {
  const file = specifierPath.replace(/\.js$/, '.d.ts');
  if (visited.has(file)) return true;
  visited.add(file);
  if (file === specifierPath) return false;
  const sf = reader.parse(file);
  if (!sf) return false;
  if (/\bimport\s*\(/.test(sf.text) || /\/\/\/\s*<reference/.test(sf.text)) return false;
  const imports = importsOf(sf);
  if (imports.names.has(RUNTIME)) return false;
  if (imports.names.has(CLIENT_NODE)) {
    const names = imports.names.get(CLIENT_NODE);
    if (!names) return false;
    wantClient(file, names);
  }
  for (const stmt of sf.statements) {
    const spec =
      ts.isImportDeclaration(stmt) || ts.isExportDeclaration(stmt) ? stmt.moduleSpecifier : undefined;
    if (ts.isImportEqualsDeclaration(stmt)) return false;
    if (!spec || !ts.isStringLiteral(spec) || spec.text === CLIENT_NODE) continue;
    if (!spec.text.startsWith('./') && !spec.text.startsWith('../')) return false;
    if (!selfContained(reader, path.posix.join(path.posix.dirname(file), spec.text), visited, wantClient))
      return false;
  }
  return true;
}

/** The declaration files a relative module specifier of `fromFile` can stand for. */
function relativeTargets(specifier: string, fromFile: string): string[] {
  const base = path.posix.join(path.posix.dirname(fromFile), specifier);
  const stem = base.replace(/\.(?:[cm]?js|[cm]?ts)$/, '');
  return [`${stem}.d.ts`, `${stem}.d.mts`, `${stem}.d.cts`, `${base}/index.d.ts`];
}

/**
 * Whether every file of `program` that imports either package, or one of the cut entry files by a
 * relative path, asks only for names the cut entry exports.
 */
export function checkSubset(program: ts.Program, subset: Subset): boolean {
  const entryPackage = new Map<string, string>();
  for (const [pkg, entries] of subset.entriesByPackage) for (const e of entries) entryPackage.set(e, pkg);
  const target: Target = (specifier, fromFile) => {
    if (PACKAGES.has(specifier)) return specifier;
    if (!specifier.startsWith('.')) return undefined;
    for (const file of relativeTargets(specifier, fromFile)) {
      const pkg = entryPackage.get(file);
      if (pkg) return pkg;
    }
    return undefined;
  };
  for (const sf of program.getSourceFiles()) {
    if (subset.entries.has(sf.fileName) || sf.hasNoDefaultLib) continue;
    for (const [pkg, names] of importsOf(sf, target).names) {
      const available = subset.exported.get(pkg);
      if (!available) continue; // that package loads in full anyway
      if (!names) return false;
      for (const n of names) if (!available.has(n)) return false;
    }
  }
  return true;
}
