/**
 * Checks of what an npm tarball holds, as pure functions of its package.json and its file list, so that
 * each check is tested on a made-up package that breaks it (packlist.test.ts) as well as run on the real
 * tarballs (package.test.ts).
 */
import path from 'node:path';

export interface PackedPackage {
  /** The package.json inside the tarball. */
  manifest: Record<string, unknown>;
  /** Paths inside the package, `/`-separated, without the tarball's `package/` prefix. */
  files: string[];
  /** The text of a packed file. */
  read(file: string): string;
}

/** Every file the manifest points at: bin, main, types, and each target in exports. */
export function entryTargets(manifest: Record<string, unknown>): { field: string; target: string }[] {
  const targets: { field: string; target: string }[] = [];
  const bin = manifest['bin'];
  if (typeof bin === 'string') targets.push({ field: 'bin', target: bin });
  else if (bin && typeof bin === 'object') {
    for (const [name, target] of Object.entries(bin))
      targets.push({ field: `bin.${name}`, target: String(target) });
  }
  for (const field of ['main', 'types', 'typings', 'module']) {
    if (typeof manifest[field] === 'string') targets.push({ field, target: manifest[field] });
  }
  const walk = (value: unknown, where: string): void => {
    if (typeof value === 'string') targets.push({ field: where, target: value });
    else if (Array.isArray(value)) value.forEach((item, i) => walk(item, `${where}[${i}]`));
    else if (value && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) walk(item, `${where}["${key}"]`);
    }
  };
  if (manifest['exports'] !== undefined) walk(manifest['exports'], 'exports');
  return targets;
}

/** bin, main, types and exports targets that are not in the tarball (exports patterns with `*` are not used here). */
export function missingTargets(pkg: PackedPackage): string[] {
  const files = new Set(pkg.files);
  return entryTargets(pkg.manifest)
    .filter(({ target }) => !files.has(path.posix.normalize(target)))
    .map(({ field, target }) => `${field} -> ${target}`);
}

/**
 * Test code that would be published: `*.test.*` / `*.spec.*` files and test, __tests__ and fixtures
 * directories. `templates/` is left out: its test files are the templates of a generated project's tests.
 */
export function shippedTests(files: string[]): string[] {
  return files.filter(
    (file) =>
      !file.startsWith('templates/') &&
      (/\.(test|spec)\.[cm]?[jt]sx?(\.map)?$/.test(file) ||
        /(^|\/)(test|tests|__tests__|fixtures?)\//.test(file) ||
        /\.test\.d\.[cm]?ts(\.map)?$/.test(file)),
  );
}

/**
 * Source maps whose sources are not in the tarball: a debugger or `node --enable-source-maps` would point
 * at files the user does not have. A source is fine when it is shipped or its text is in `sourcesContent`.
 */
export function danglingSourceMaps(pkg: PackedPackage): string[] {
  const files = new Set(pkg.files);
  const problems: string[] = [];
  for (const file of pkg.files.filter((f) => f.endsWith('.map'))) {
    let map: { sources?: unknown; sourceRoot?: unknown; sourcesContent?: unknown };
    try {
      map = JSON.parse(pkg.read(file)) as typeof map;
    } catch {
      problems.push(`${file}: not JSON`);
      continue;
    }
    const sources = Array.isArray(map.sources) ? (map.sources as unknown[]) : [];
    const contents = Array.isArray(map.sourcesContent) ? (map.sourcesContent as unknown[]) : [];
    const base = path.posix.join(
      path.posix.dirname(file),
      typeof map.sourceRoot === 'string' ? map.sourceRoot : '',
    );
    sources.forEach((source, i) => {
      if (typeof contents[i] === 'string') return;
      const resolved = path.posix.normalize(path.posix.join(base, String(source)));
      if (!files.has(resolved)) problems.push(`${file} -> ${resolved}`);
    });
  }
  return problems;
}

/** The compiled module of a source file: `src/a/b.ts` -> `a/b.js`, `.cts` -> `.cjs`, relative to rootDir. */
export function compiledName(source: string): string {
  return source
    .replace(/\.cts$/, '.cjs')
    .replace(/\.mts$/, '.mjs')
    .replace(/\.tsx?$/, '.js');
}

/**
 * JavaScript in `dist/` that no source file compiles to: left over from a module since deleted or renamed,
 * because tsc never cleans its outDir. `sources` are paths below the source root (`a/b.ts`).
 */
export function staleOutputs(distFiles: string[], sources: string[]): string[] {
  const expected = new Set(sources.filter((s) => !/\.d\.[cm]?ts$/.test(s)).map(compiledName));
  return distFiles
    .filter((file) => /^dist\/.*\.[cm]?js$/.test(file))
    .filter((file) => !expected.has(file.slice('dist/'.length)));
}

/** The relative modules an ES module loads: `from './x.js'`, `import './x.js'` and `import('./x.js')`. */
export function relativeImports(code: string): string[] {
  return [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.\.?\/[^"']+)["']/g)].map((m) => m[1]!);
}

/**
 * JavaScript in `dist/` that no entry point (main or exports) loads, itself or through the modules it
 * imports, statically or with `import()`: for a bundled package, whose chunks have no source file of their
 * own to be checked against (staleOutputs), a chunk left over from an earlier build.
 */
export function unreachableOutputs(pkg: PackedPackage): string[] {
  const reached = new Set<string>();
  const todo = entryTargets(pkg.manifest)
    .map(({ target }) => path.posix.normalize(target))
    .filter((target) => /\.[cm]?js$/.test(target));
  for (let file = todo.pop(); file !== undefined; file = todo.pop()) {
    if (reached.has(file)) continue;
    reached.add(file);
    for (const specifier of relativeImports(pkg.read(file))) {
      todo.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)));
    }
  }
  return pkg.files.filter((file) => /^dist\/.*\.[cm]?js$/.test(file) && !reached.has(file));
}

/** The two lists compared: what only the first has, what only the second has. */
export function difference(expected: string[], actual: string[]): { missing: string[]; extra: string[] } {
  const a = new Set(actual);
  const e = new Set(expected);
  return { missing: expected.filter((f) => !a.has(f)), extra: actual.filter((f) => !e.has(f)) };
}
