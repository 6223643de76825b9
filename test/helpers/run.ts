/** Running the CLI in-process against a temporary directory, and looking at what it left. */
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'vitest';
import { main } from '../../src/cli/main.js';
import { kubesmithVersion } from '../../src/version.js';

/**
 * The environment of in-process runs: kubesmith's packages pinned to registry specs, so that `init` does
 * not pack tarballs (seconds each) in every test. test/cli/packages.test.ts tests the default, unpinned.
 */
const pinnedEnv: NodeJS.ProcessEnv = {
  ...process.env,
  KUBESMITH_RUNTIME_SPEC: `^${kubesmithVersion}`,
  KUBESMITH_CLI_SPEC: `^${kubesmithVersion}`,
};

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.text += chunk.toString();
    callback();
  }
}

export async function run(cwd: string, ...args: string[]): Promise<RunResult> {
  return runWithEnv(pinnedEnv, cwd, ...args);
}

export async function runWithEnv(env: NodeJS.ProcessEnv, cwd: string, ...args: string[]): Promise<RunResult> {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await main(['node', 'kubesmith', ...args], { cwd, env, stdout, stderr });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/**
 * Runs the CLI where it finds no tools: HOME, the cache, KUBEBUILDER_ASSETS and PATH all point at an empty
 * directory beside `cwd` (no kubectl, no envtest binaries).
 */
export async function runWithoutTools(cwd: string, ...args: string[]): Promise<RunResult> {
  const empty = path.join(path.dirname(cwd), 'empty');
  await mkdir(empty, { recursive: true });
  const env = { HOME: empty, XDG_CACHE_HOME: empty, KUBEBUILDER_ASSETS: empty, PATH: empty };
  return runWithEnv(env, cwd, ...args);
}

export async function tempDir(name = 'project'): Promise<string> {
  const parent = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-test-'));
  const dir = path.join(parent, name);
  await mkdir(dir);
  return dir;
}

export async function removeTemp(dir: string): Promise<void> {
  await rm(path.dirname(dir), { recursive: true, force: true });
}

/** Every file below `dir` with its content. */
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isDirectory()) continue;
    const full = path.join(entry.parentPath, entry.name);
    result[path.relative(dir, full)] = await readFile(full, 'utf8');
  }
  return result;
}

export function read(dir: string, file: string): Promise<string> {
  return readFile(path.join(dir, file), 'utf8');
}

/**
 * Runs `args` in `dir` and expects a refusal: exit `code`, one error line matching `message`, one hint
 * line, and nothing written.
 */
export async function expectRefused(
  dir: string,
  args: readonly string[],
  code: number,
  message: RegExp,
): Promise<void> {
  const before = await snapshot(dir);
  const result = await run(dir, ...args);
  expect(result.code).toBe(code);
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(message);
  expect(lines[1]).toMatch(/^hint: /);
  expect(await snapshot(dir)).toEqual(before);
}
