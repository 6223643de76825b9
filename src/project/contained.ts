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
 * containedPath for many files of one root: the root's real path is looked up once.
 */
export function containedPaths(root: string): (relative: string) => string {
  let realRoot: string | undefined;
  return (relative) => {
    const spelling = spellingProblem(relative);
    if (spelling) throw outside(relative, spelling);
    const target = path.join(root, relative);
    realRoot ??= realLocation(root) ?? root;
    const real = realLocation(target);
    if (real === undefined) throw outside(relative, 'symbolic links on the way loop');
    const from = path.relative(realRoot, real);
    if (from === '') throw outside(relative, 'the project directory itself');
    if (from === '..' || from.startsWith(`..${path.sep}`) || path.isAbsolute(from)) {
      throw outside(relative, `a symbolic link on the way leads to ${real}`);
    }
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
 * Where `target` really is: the real path of its nearest existing ancestor (the file itself when it
 * exists) joined with the rest. A link that points nowhere (a file it would create through the link) is
 * followed by hand. Undefined for a loop of links.
 */
function realLocation(target: string): string | undefined {
  let existing = target;
  let rest: string[] = [];
  for (let links = 0; links <= MAX_LINKS;) {
    try {
      return path.join(fs.realpathSync.native(existing), ...rest);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') return undefined;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    }
    const link = readLink(existing);
    if (link !== undefined) {
      links++;
      existing = path.resolve(path.dirname(existing), link);
      continue;
    }
    const parent = path.dirname(existing);
    if (parent === existing) return path.join(existing, ...rest);
    rest = [path.basename(existing), ...rest];
    existing = parent;
  }
  return undefined;
}

function readLink(file: string): string | undefined {
  try {
    return fs.readlinkSync(file);
  } catch {
    return undefined; // not a link, or not there
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
