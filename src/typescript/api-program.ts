/**
 * The project's TypeScript as the generator reads it: one program over the API files (`src/api/**` and what
 * they import; source-files.ts finds them), made as small as it can be (declarations.ts, lib-subset.ts)
 * and built with TypeScript's API (program.ts).
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { relativeWithin } from '../within.js';
import { ts } from './compiler.cjs';
import { checkSubset, importsOf, packageReader, planSubset, type Imports } from './declarations.js';
import { libBlocker as findLibBlocker, type IsBrand } from './lib-subset.js';
import { createProgram, parseOptions, projectOptions, type LibVariant } from './program.js';
import { isInside, realPathOf } from './source-files.js';

const COMPILER_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  skipLibCheck: true,
  noEmit: true,
  lib: ['lib.es5.d.ts'],
  types: [],
};

/**
 * Over the project's tsconfig: API types need ES5's library (Array, Record, Partial, Omit, Date...), never the
 * DOM or @types/node, which are most of what a program loads; leaving them out halves the generator's time.
 */
const GENERATOR_OPTIONS: ts.CompilerOptions = {
  noEmit: true,
  lib: ['lib.es5.d.ts'],
  types: [],
};

/**
 * What the program may read: the project's own files where they really are inside the project (an import
 * or a link that leads out is as if the file did not exist), and installed packages, by a path through
 * a node_modules directory or as declarations (`.d.ts`): a workspace's packages are links out of
 * node_modules, which TypeScript follows. npm makes node_modules, not a pull request.
 */
function readableFor(root: string): (file: string) => boolean {
  const realRoot = realpathSync(root);
  const roots = [...new Set([path.resolve(root), realRoot])];
  const isPackageFile = (file: string) => /\/node_modules\//.test(file) || /\.d\.[cm]?ts$/.test(file);
  return (file) => {
    const inProject = roots
      .map((r) => relativeWithin(r, file))
      .find((from) => from !== undefined && from !== '');
    if (inProject === undefined || inProject.split(path.sep)[0] === 'node_modules')
      return isPackageFile(file);
    return isInside(realRoot, realPathOf(file));
  };
}

/**
 * The API files parsed as `apiProgram` parses them (for the project's tsconfig target), before any program:
 * what `parsed` takes, so that a caller who reads their syntax first does not parse them twice.
 */
export function parseApiFiles(
  root: string,
  apiFiles: readonly string[],
  read: (file: string) => string,
): Map<string, ts.SourceFile> {
  const parse = parseOptions(projectOptions(root, GENERATOR_OPTIONS, COMPILER_OPTIONS));
  return new Map(apiFiles.map((file) => [file, ts.createSourceFile(file, read(file), parse)]));
}

/** What `files` import from the runtime and client-node, together. */
export function importsOfAll(files: Iterable<ts.SourceFile>): Imports {
  const wanted: Imports = { names: new Map() };
  for (const sf of files) {
    for (const [pkg, names] of importsOf(sf).names) {
      if (!wanted.names.has(pkg)) wanted.names.set(pkg, new Set());
      const set = wanted.names.get(pkg);
      if (!names) wanted.names.set(pkg, undefined);
      else for (const n of names) set?.add(n);
    }
  }
  return wanted;
}

/**
 * The program over the API files: with the smaller entries of the runtime and client-node when every
 * import of them can be traced (declarations.ts), else, or when another file of the program imports
 * them for more, with the full declarations. With the smaller library (lib-subset.ts) when `lib` allows
 * and the full declarations are not needed (their ~900 files would only be walked to find a blocker);
 * `isBrand` says which intersections the schema mapper reads no members of. `parsed`: API files already
 * parsed (parseApiFiles), not parsed again. `imports`: what the API files import from the two packages
 * (importsOfAll), when `apiFiles` are only some of them (one thread's share, whose program reaches the
 * others through imports); by default read from `apiFiles`.
 */
export function apiProgram(
  root: string,
  apiFiles: string[],
  overlay: ReadonlyMap<string, string>,
  read: (file: string) => string,
  lib: LibVariant,
  isBrand: IsBrand,
  parsed?: ReadonlyMap<string, ts.SourceFile>,
  imports?: Imports,
): { program: ts.Program; declarations: 'subset' | 'full'; lib: LibVariant; libBlocker?: string } {
  const options = projectOptions(root, GENERATOR_OPTIONS, COMPILER_OPTIONS);
  const cache = new Map<string, ts.SourceFile>();
  const mayRead = readableFor(root);
  const full = () => ({
    program: createProgram(apiFiles, options, overlay, cache, 'full', mayRead),
    declarations: 'full' as const,
    lib: 'full' as const,
  });
  /** The program with the smaller library unless a file blocks it; then again with the full one. */
  const withLib = (entries: ReadonlyMap<string, string>, program: ts.Program) => {
    if (lib === 'full') return { program, lib: 'full' as const };
    const blocker = findLibBlocker(program, isBrand);
    if (blocker === undefined) return { program, lib: 'subset' as const };
    // Every parsed and bound file serves again, but the library.
    return {
      program: createProgram(apiFiles, options, entries, cache, 'full', mayRead),
      lib: 'full' as const,
      libBlocker: blocker,
    };
  };
  const roots: ts.SourceFile[] = [];
  for (const file of apiFiles) {
    const sf = parsed?.get(file) ?? ts.createSourceFile(file, read(file), parseOptions(options));
    cache.set(file, sf);
    roots.push(sf);
  }
  const wanted = imports ?? importsOfAll(roots);
  const first = apiFiles[0];
  if (first === undefined) return full();
  if (wanted.names.size === 0) {
    // Nothing from the runtime or client-node: no declarations of theirs to cut.
    const program = createProgram(apiFiles, options, overlay, cache, lib, mayRead);
    return { ...withLib(overlay, program), declarations: 'full' };
  }
  const subset = planSubset(wanted, first, packageReader(options, parseOptions(options), cache));
  if (!subset) return full();
  const entries = new Map([...overlay, ...subset.entries]);
  const program = createProgram(apiFiles, options, entries, cache, lib, mayRead);
  if (!checkSubset(program, subset)) return full();
  return { ...withLib(entries, program), declarations: 'subset' };
}
