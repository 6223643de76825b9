/**
 * The source files under `src/` the generator reads, never through a link out of the project. Without
 * TypeScript: a run on two threads (src/manifests/parallel.ts) lists them before the compiler loads.
 */
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { relativeWithin } from '../within.js';

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

export function realPathOf(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

/** Whether the real path `real` is `realRoot` or below it (undefined: a link that leads nowhere). */
export function isInside(realRoot: string, real: string | undefined): boolean {
  return real !== undefined && relativeWithin(realRoot, real) !== undefined;
}
