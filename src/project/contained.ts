/**
 * The one check between a path kubesmith computed and the disk: every file a command reads to compare,
 * writes or removes is named relative to the project root, and must stay inside it. The names come from
 * files anyone can edit (PROJECT, markers, dist/chart/.kubesmith-files), so the check takes nothing on
 * trust: not the spelling (absolute paths, `..`, backslashes, NUL), and not the directories on the way,
 * any of which may be a symbolic link that leads out of the project.
 */
import fs from 'node:fs';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import { relativeWithin } from '../within.js';

/** More links than this on the way to one file is a loop (Linux's own limit is 40). */
const MAX_LINKS = 40;

/**
 * The absolute path of `relative` (forward slashes, relative to `root`), once it is certain to lie inside
 * the project, through whatever symbolic links stand on the way. Throws a KubesmithError naming the path
 * otherwise, before anything is read or written.
 */
export function containedPath(root: string, relative: string): string {
  return containedPaths(root)(relative);
}

/**
 * containedPath for many files of one root: what it learns of the directories on the way (their real
 * paths) is kept, so that each further file below them costs one lstat, and a file asked again none.
 */
export function containedPaths(root: string): (relative: string) => string {
  const known = new Map<string, string | undefined>();
  // Each answer, for a file checked again (read, then written): `known` would give the same one.
  const answers = new Map<string, string>();
  return (relative) => {
    const answer = answers.get(relative);
    if (answer !== undefined) return answer;
    const spelling = spellingProblem(relative);
    if (spelling) throw outside(relative, spelling);
    const target = path.join(root, relative);
    const realRoot = realLocation(path.resolve(root), known) ?? root;
    const real = realLocation(path.resolve(target), known);
    if (real === undefined) throw outside(relative, 'symbolic links on the way loop');
    const from = relativeWithin(realRoot, real);
    if (from === undefined) throw outside(relative, `a symbolic link on the way leads to ${real}`);
    if (from === '') throw outside(relative, 'the project directory itself');
    answers.set(relative, target);
    return target;
  };
}

/** What is wrong with the name itself, whatever the disk holds. */
function spellingProblem(relative: string): string | undefined {
  if (relative === '' || relative === '.') return 'an empty path';
  if (relative.includes('\0')) return 'a NUL character';
  if (relative.includes('\\')) return 'a backslash';
  if (path.posix.isAbsolute(relative) || path.win32.isAbsolute(relative)) return 'an absolute path';
  if (relative.split('/').includes('..')) return 'a .. segment';
  return undefined;
}

/**
 * Where the absolute path `file` really is, existing or not: each symbolic link on the way is followed,
 * also one that points nowhere (a file would be created through it). `known` keeps each path's answer.
 * Undefined for a loop of links.
 */
function realLocation(file: string, known: Map<string, string | undefined>, links = 0): string | undefined {
  if (known.has(file)) return known.get(file);
  const parent = path.dirname(file);
  let real: string | undefined;
  if (parent === file) real = file;
  else {
    const realParent = realLocation(parent, known, links);
    if (realParent === undefined) real = undefined;
    else if (!isLink(file)) real = path.join(realParent, path.basename(file));
    else if (links >= MAX_LINKS) real = undefined;
    else real = followLink(realParent, fs.readlinkSync(file), known, links + 1);
  }
  known.set(file, real);
  return real;
}

/**
 * Where a link's text leads from the real directory the link stands in. Name by name, as the kernel does:
 * a `..` after a link goes up from where that link leads, not back to where the link stands, so the text
 * is never normalized as a string.
 */
function followLink(
  realDir: string,
  text: string,
  known: Map<string, string | undefined>,
  links: number,
): string | undefined {
  let current: string | undefined = path.isAbsolute(text) ? path.parse(realDir).root : realDir;
  for (const name of text.split('/')) {
    if (name === '' || name === '.') continue;
    current = name === '..' ? path.dirname(current) : realLocation(path.join(current, name), known, links);
    if (current === undefined) return undefined;
  }
  return current;
}

/** Whether `file` is a symbolic link; false when it is not there (or a file stands where a directory would). */
function isLink(file: string): boolean {
  try {
    return fs.lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
  } catch {
    return false; // ENOTDIR: a file on the way, which the write itself reports
  }
}

function outside(relative: string, reason: string): KubesmithError {
  return new KubesmithError(
    `refusing ${JSON.stringify(relative)}: not a file inside the project (${reason})`,
    {
      hint: 'kubesmith reads and writes only inside the project; the name comes from an edited file (PROJECT, a marker, a record such as dist/chart/.kubesmith-files) or a link: fix that and run again; nothing was written',
    },
  );
}
