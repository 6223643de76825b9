/**
 * The repository's checking scripts (scripts/golden.mjs, scripts/examples.mjs) run in a child process as
 * `npm run` runs them, and copies of the committed projects they check, to damage on purpose.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { RunResult } from './run.js';

export const repo = fileURLToPath(new URL('../..', import.meta.url));

/** `node scripts/<name> ...args` from the repository's root, with its exit code and output. */
export async function runScript(name: string, ...args: string[]): Promise<RunResult> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [path.join(repo, 'scripts', name), ...args],
      { cwd: repo, timeout: 120_000 },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const copies: string[] = [];

/**
 * Copies the repository's project at `from` (relative to the root), without node_modules, to `<temp>/<as>`,
 * and returns `<temp>`; removeCopies() removes it.
 */
export async function copyProject(from: string, as: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-copy-'));
  copies.push(dir);
  await cp(path.join(repo, from), path.join(dir, as), {
    recursive: true,
    filter: (source) => !source.includes('node_modules'),
  });
  return dir;
}

export async function removeCopies(): Promise<void> {
  await Promise.all(copies.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}
