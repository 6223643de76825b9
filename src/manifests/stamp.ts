/**
 * The up-to-date check of `kubesmith manifests`: a fingerprint of everything the output depends on (the
 * sources under src/, PROJECT, tsconfig.json, package.json, package-lock.json, the flags and this build of
 * kubesmith), kept with the hashes of the files it produced in node_modules/.cache/kubesmith. When neither
 * the inputs nor the outputs changed, the generator does not run at all: no ts-morph, no type checker.
 * Deliberately light: node built-ins only, because it runs before anything heavy is loaded.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubesmithVersion } from '../version.js';

interface Stamp {
  fingerprint: string;
  /** Output path (relative to the root) -> sha256 of its content. */
  outputs: Record<string, string>;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** Where the stamp lives, or undefined when the project has no node_modules (nothing is cached then). */
export function stampPath(root: string): string | undefined {
  const modules = path.join(root, 'node_modules');
  return existsSync(modules) ? path.join(modules, '.cache', 'kubesmith', 'manifests.json') : undefined;
}

async function sourceFiles(dir: string, prefix = ''): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const files: string[] = [];
  for (const entry of entries) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) files.push(...(await sourceFiles(path.join(dir, entry.name), relative)));
    else if (/\.(ts|mts|cts)$/.test(entry.name)) files.push(relative);
  }
  return files.sort();
}

/**
 * Which generator this is, beyond its version number: the size and time of its own modules, so that a
 * rebuilt kubesmith (a contributor's, a linked checkout) never takes a stamp of another build for its own.
 */
async function generatorIdentity(): Promise<string> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const parts: string[] = [];
  for (const dir of ['manifests', 'schema', 'markers'].map((name) => path.join(here, '..', name))) {
    for (const name of (await readdir(dir).catch(() => [] as string[])).sort()) {
      const info = await stat(path.join(dir, name)).catch(() => undefined);
      if (info?.isFile()) parts.push(`${name}:${info.size}:${info.mtimeMs}`);
    }
  }
  return sha256(parts.join('\n'));
}

/** The fingerprint of the inputs of one generator run with `options`. */
export async function fingerprint(root: string, options: object): Promise<string> {
  const hash = createHash('sha256');
  hash.update(`kubesmith ${kubesmithVersion}\n${JSON.stringify(options)}\n`);
  hash.update(`${await generatorIdentity()}\n`);
  for (const file of ['PROJECT', 'tsconfig.json', 'package.json', 'package-lock.json']) {
    const content = await readFile(path.join(root, file)).catch(() => undefined);
    hash.update(`${file}\n${content === undefined ? '-' : sha256(content)}\n`);
  }
  for (const file of await sourceFiles(path.join(root, 'src'))) {
    hash.update(`src/${file}\n${sha256(await readFile(path.join(root, 'src', file)))}\n`);
  }
  return hash.digest('hex');
}

/** The outputs of the last run when its fingerprint is `current` and every output is as it was written. */
export async function upToDateOutputs(root: string, current: string): Promise<string[] | undefined> {
  const file = stampPath(root);
  if (!file) return undefined;
  let stamp: Stamp;
  try {
    stamp = JSON.parse(await readFile(file, 'utf8')) as Stamp;
  } catch {
    return undefined;
  }
  if (stamp.fingerprint !== current) return undefined;
  for (const [output, hash] of Object.entries(stamp.outputs)) {
    const content = await readFile(path.join(root, output)).catch(() => undefined);
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
