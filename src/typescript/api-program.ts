/**
 * The project's TypeScript as the generator reads it: the source files under `src/` (never through a link
 * out of the project), and one program over the API files (`src/api/**` and what they import), made as
 * small as it can be (declarations.ts, lib-subset.ts) and built with TypeScript's API (program.ts).
 */
import { readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { relativeWithin } from '../within.js';
import { ts } from './compiler.cjs';
import { checkSubset, importsOf, planSubset, resolverFor, type Imports } from './declarations.js';
import { libBlocker as findLibBlocker, type IsBrand } from './lib-subset.js';
import { createProgram, parseOptions, projectOptions, type LibVariant } from './program.js';

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
 * The `.ts` files under `dir` but tests and declarations (as ts-morph's `**\/*.ts` glob found them: no dot
 * entries). A file or directory that is a symbolic link out of the project (`realRoot`) is not read: it is
 * put in `linkedOut`, and the generator reports it. A pull request can add such a link, and a file read
 * from outside the project could be printed in a diagnostic in the CI log.
 */
export function sourceFiles(
  dir: string,
  realRoot: string,
  linkedOut: string[],
  out: string[] = [],
  seen = new Set<string>(),
): string[] {
  let entries;
  try {
    const real = realpathSync(dir);
    if (seen.has(real)) return out; // a symbolic link back up the tree
    seen.add(real);
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const file = `${dir}/${entry.name}`;
    if (entry.isSymbolicLink() && !isInside(realRoot, realPathOf(file))) {
      linkedOut.push(file);
      continue;
    }
    const isDir =
      entry.isDirectory() ||
      (entry.isSymbolicLink() && statSync(file, { throwIfNoEntry: false })?.isDirectory());
    if (isDir) sourceFiles(file, realRoot, linkedOut, out, seen);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts'))
      out.push(file);
  }
  return out;
}

function realPathOf(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

/** Whether the real path `real` is `realRoot` or below it (undefined: a link that leads nowhere). */
function isInside(realRoot: string, real: string | undefined): boolean {
  return real !== undefined && relativeWithin(realRoot, real) !== undefined;
}

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
 * The program over the API files: with the smaller entries of the runtime and client-node when every
 * import of them can be traced (declarations.ts), else, or when another file of the program imports
 * them for more, with the full declarations. With the smaller library (lib-subset.ts) when `lib` allows
 * and the full declarations are not needed (their ~900 files would only be walked to find a blocker);
 * `isBrand` says which intersections the schema mapper reads no members of.
 */
export function apiProgram(
  root: string,
  apiFiles: string[],
  overlay: ReadonlyMap<string, string>,
  read: (file: string) => string,
  lib: LibVariant,
  isBrand: IsBrand,
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
  const wanted: Imports = { names: new Map() };
  for (const file of apiFiles) {
    const sf = ts.createSourceFile(file, read(file), parseOptions(options));
    cache.set(file, sf);
    for (const [pkg, names] of importsOf(sf).names) {
      if (!wanted.names.has(pkg)) wanted.names.set(pkg, new Set());
      const set = wanted.names.get(pkg);
      if (!names) wanted.names.set(pkg, undefined);
      else for (const n of names) set?.add(n);
    }
  }
  const first = apiFiles[0];
  if (first === undefined) return full();
  if (wanted.names.size === 0) {
    // Nothing from the runtime or client-node: no declarations of theirs to cut.
    const program = createProgram(apiFiles, options, overlay, cache, lib, mayRead);
    return { ...withLib(overlay, program), declarations: 'full' };
  }
  const subset = planSubset(wanted, first, resolverFor(options));
  if (!subset) return full();
  const entries = new Map([...overlay, ...subset.entries]);
  const program = createProgram(apiFiles, options, entries, cache, lib, mayRead);
  if (!checkSubset(program, subset)) return full();
  return { ...withLib(entries, program), declarations: 'subset' };
}
