/**
 * The up-to-date check of `kubesmith manifests`: a fingerprint of everything the output depends on (the
 * sources under src/, PROJECT, tsconfig.json, package.json, package-lock.json, the flags and this build of
 * kubesmith), kept with the hashes of the files it produced in node_modules/.cache/kubesmith. When neither
 * the inputs nor the outputs changed, the generator does not run at all: no ts-morph, no type checker.
 * Deliberately light: node built-ins only, because it runs before anything heavy is loaded. Files are read
 * synchronously, one after the other: a promise per small file costs more in waiting than the reads.
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, type Dirent } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { containedPath, containedPaths } from '../project/contained.js';
import { kubesmithVersion } from '../version.js';
import {
  PACKAGE_FILE,
  PACKAGE_LOCK_FILE,
  PROJECT_FILE,
  SOURCE_DIR,
  TSCONFIG_FILE,
} from '../project/layout.js';

interface Stamp {
  fingerprint: string;
  /** Output path (relative to the root) -> sha256 of its content. */
  outputs: Record<string, string>;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

const readOrNothing = (file: string): Buffer | undefined => {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
};

const readdirOrNothing = (dir: string): string[] => {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
};

const statOrNothing = (file: string) => {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
};

/**
 * Where the stamp lives, or undefined when the project has no node_modules (nothing is cached then), or
 * when a link in the way leads out of the project: the cache is read and written only inside it.
 */
function stampPath(root: string): string | undefined {
  if (!existsSync(path.join(root, 'node_modules'))) return undefined;
  try {
    return containedPath(root, 'node_modules/.cache/kubesmith/manifests.json');
  } catch {
    return undefined;
  }
}

/**
 * The TypeScript files below `dir`, relative to it; undefined when a symbolic link stands among them. A
 * link is not followed (it may lead out of the project, or change with what it leads to), so such a tree
 * has no fingerprint: every run generates.
 */
function sourceFiles(dir: string, prefix = ''): string[] | undefined {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const files: string[] = [];
  for (const entry of entries) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isSymbolicLink()) return undefined;
    if (entry.isDirectory()) {
      const below = sourceFiles(path.join(dir, entry.name), relative);
      if (below === undefined) return undefined;
      files.push(...below);
    } else if (/\.(ts|mts|cts)$/.test(entry.name)) files.push(relative);
  }
  return files.sort();
}

/** The folders of dist/ whose modules make the generator (docs/architecture.md). */
const GENERATOR_FOLDERS = ['typescript', 'markers', 'schema', 'manifests'];
/** The modules among their files (not the declarations and source maps beside them). */
const MODULE = /\.c?js$/;

/**
 * Which generator this is, beyond its version number: the size and time of its own modules, so that a
 * rebuilt kubesmith (a contributor's, a linked checkout) never takes a stamp of another build for its own.
 */
function generatorIdentity(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const parts: string[] = [];
  for (const dir of GENERATOR_FOLDERS.map((name) => path.join(here, '..', name))) {
    for (const name of readdirOrNothing(dir).sort()) {
      if (!MODULE.test(name)) continue;
      const info = statOrNothing(path.join(dir, name));
      if (info?.isFile()) parts.push(`${name}:${info.size}:${info.mtimeMs}`);
    }
  }
  return sha256(parts.join('\n'));
}

/** The fingerprint of the inputs of one generator run with `options`. */
export async function fingerprint(root: string, options: object): Promise<string> {
  const hash = createHash('sha256');
  hash.update(`kubesmith ${kubesmithVersion}\n${JSON.stringify(options)}\n`);
  hash.update(`${generatorIdentity()}\n`);
  for (const file of [PROJECT_FILE, TSCONFIG_FILE, PACKAGE_FILE, PACKAGE_LOCK_FILE]) {
    const content = readOrNothing(path.join(root, file));
    hash.update(`${file}\n${content === undefined ? '-' : sha256(content)}\n`);
  }
  const sources = sourceFiles(path.join(root, SOURCE_DIR));
  if (sources === undefined) return `unique ${randomUUID()}`;
  // `file` is made of directory entries' names (never `.` or `..`): joined without path.join, which
  // normalizes the whole path character by character.
  const sourceDir = path.join(root, SOURCE_DIR);
  for (const file of sources) {
    // Each file's name and length, then its bytes, into the one hash: no hash of its own per file.
    const content = readFileSync(`${sourceDir}/${file}`);
    hash.update(`${SOURCE_DIR}/${file}\n${content.length}\n`);
    hash.update(content);
  }
  return hash.digest('hex');
}

/** The outputs of the last run when its fingerprint is `current` and every output is as it was written. */
export async function upToDateOutputs(root: string, current: string): Promise<string[] | undefined> {
  const file = stampPath(root);
  if (!file) return undefined;
  let stamp: Stamp;
  try {
    stamp = JSON.parse(readFileSync(file, 'utf8')) as Stamp;
  } catch {
    return undefined;
  }
  if (stamp.fingerprint !== current) return undefined;
  const inside = containedPaths(root);
  for (const [output, hash] of Object.entries(stamp.outputs)) {
    let file: string;
    try {
      file = inside(output); // the stamp is a file in the project too: an output outside it is no shortcut
    } catch {
      return undefined;
    }
    const content = readOrNothing(file);
    if (content === undefined || sha256(content) !== hash) return undefined;
  }
  return Object.keys(stamp.outputs);
}

/** Records that `files` are what the inputs with fingerprint `current` generate. Best effort. */
export async function saveStamp(
  root: string,
  current: string,
  files: readonly { path: string; content: string }[],
): Promise<void> {
  const file = stampPath(root);
  if (!file) return;
  const stamp: Stamp = {
    fingerprint: current,
    outputs: Object.fromEntries(files.map((f) => [f.path, sha256(f.content)])),
  };
  try {
    await mkdir(path.dirname(file), { recursive: true });
    const temp = `${file}.${process.pid}.tmp`;
    await writeFile(temp, `${JSON.stringify(stamp, null, 2)}\n`);
    await rename(temp, file);
  } catch {
    // A cache that cannot be written only costs the next run its shortcut.
  }
}
