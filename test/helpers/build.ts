/**
 * The CLI compiled from the sources as they are (`tsc -p tsconfig.build.json` into dist/), for the test
 * files that run dist/ rather than src/: compiled at most once per content of its inputs, not once per
 * file (each compile is seconds of CPU, and two at once write dist/ under each other's readers).
 *
 * A stamp in node_modules/.cache records the hash of the inputs the last compile here read and the time
 * of dist/cli/main.js it wrote; a lock directory beside it lets one test file compile while the others
 * wait. dist/ made by anything else (`npm run build`) is compiled once more, to be sure of what it holds.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { repo } from './scripts.js';

const cacheDir = path.join(repo, 'node_modules', '.cache', 'kubesmith-tests');
const stampFile = path.join(cacheDir, 'dist-cli.json');
const lockDir = path.join(cacheDir, 'dist-cli.lock');
const output = path.join(repo, 'dist', 'cli', 'main.js');
/** Longer than a compile on a loaded machine: a lock this old was left by a killed run. */
const STALE_LOCK_MS = 5 * 60_000;

/** What tsc's output depends on: the sources it compiles, its configuration, its version. */
async function inputsHash(): Promise<string> {
  const hash = createHash('sha256');
  const files = (await readdir(path.join(repo, 'src'), { recursive: true }))
    .filter((file) => /\.[cm]?ts$/.test(file) && !file.endsWith('.test.ts'))
    .map((file) => path.join('src', file))
    .sort();
  files.push('tsconfig.build.json', 'tsconfig.base.json', 'node_modules/typescript/package.json');
  for (const file of files)
    hash
      .update(`${file}\0`)
      .update(await readFile(path.join(repo, file)))
      .update('\0');
  return hash.digest('hex');
}

async function stamp(hash: string): Promise<string> {
  const built = await stat(output).catch(() => undefined);
  return JSON.stringify({ hash, output: built?.mtimeMs });
}

async function upToDate(hash: string): Promise<boolean> {
  const recorded = await readFile(stampFile, 'utf8').catch(() => '');
  return recorded !== '' && recorded === (await stamp(hash));
}

async function lock(): Promise<void> {
  await mkdir(cacheDir, { recursive: true });
  for (;;) {
    try {
      await mkdir(lockDir);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const held = await stat(lockDir).catch(() => undefined);
      if (held && Date.now() - held.mtimeMs > STALE_LOCK_MS)
        await rm(lockDir, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

export async function buildCli(): Promise<void> {
  const hash = await inputsHash();
  if (await upToDate(hash)) return;
  await lock();
  try {
    // Another file may have compiled the same sources while this one waited.
    if (await upToDate(hash)) return;
    await execa('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: repo });
    await writeFile(stampFile, await stamp(hash));
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}
