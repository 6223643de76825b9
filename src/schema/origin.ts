/**
 * Which package a declaration comes from, by the `name` of the nearest package.json above its file (the
 * one that has a name: dual packages keep nameless `{"type": "module"}` files in subdirectories). Known
 * types (Duration, Quantity...) are recognised this way, never by a substring of a path, so a user's own
 * `Duration` in a project under a directory named `runtime` stays the user's.
 */
import path from 'node:path';

/** package.json files larger than this are not read (a name sits in the first lines of any real one). */
const MAX_PACKAGE_JSON = 1 << 20;

/** Reads a file, or says it is not there. */
export type ReadFile = (fileName: string) => string | undefined;

/** A function from a file name to its package's name, caching what it learns per directory. */
export function packageNameFinder(readFile: ReadFile): (fileName: string) => string | undefined {
  const byDir = new Map<string, string | undefined>();
  const nameIn = (dir: string): string | undefined => {
    if (byDir.has(dir)) return byDir.get(dir);
    let name: string | undefined;
    const text = readFile(path.posix.join(dir, 'package.json'));
    if (text !== undefined && text.length <= MAX_PACKAGE_JSON) {
      try {
        const parsed = JSON.parse(text) as { name?: unknown } | null;
        if (typeof parsed?.name === 'string') name = parsed.name;
      } catch {
        // Not JSON: no name here; look further up.
      }
    }
    const parent = path.posix.dirname(dir);
    if (name === undefined && parent !== dir) name = nameIn(parent);
    byDir.set(dir, name);
    return name;
  };
  // Asked once per known-type question, for a few files: remembered per file name too.
  const byFile = new Map<string, string | undefined>();
  return (fileName) => {
    if (byFile.has(fileName)) return byFile.get(fileName);
    const name = nameIn(path.posix.dirname(fileName.split(path.sep).join('/')));
    byFile.set(fileName, name);
    return name;
  };
}
