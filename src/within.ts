/**
 * Whether a path lies within a directory, by their spelling: `relativeWithin` gives the path of `file`
 * relative to `dir` when `file` is `dir` or below it. Callers that must see through symbolic links pass
 * real paths. A name such as `..x` is a file like any other, not a climb.
 */
import path from 'node:path';

export function relativeWithin(dir: string, file: string): string | undefined {
  const from = path.relative(dir, file);
  if (from === '..' || from.startsWith(`..${path.sep}`) || path.isAbsolute(from)) return undefined;
  return from;
}
