/**
 * A run of one command loads that command's module only (src/cli/main.ts, COMMANDS): the others' are a
 * third of the CLI's start-up. Run on the built CLI, as users run it, under a module resolve hook that fails
 * the process when another command's module is imported.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../helpers/build.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const bin = path.join(repo, 'bin/kubesmith.js');

/** Fails any import of dist/cli/init.js: a command module `manifests` does not need. */
const HOOK = `
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.endsWith('/dist/cli/init.js')) throw new Error('init.js loaded by ' + context.parentURL);
  return resolved;
}`;
const REGISTER = `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOK)}));`;

let dir: string;
beforeAll(async () => {
  await buildCli();
  dir = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-lazy-'));
}, 180_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The CLI with `args` in `dir`, under the hook: its exit code and output. */
async function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const hook = pathToFileURL(path.join(dir, 'hook.mjs')).href;
  const { writeFile } = await import('node:fs/promises');
  await writeFile(path.join(dir, 'hook.mjs'), REGISTER);
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', hook, bin, ...args], {
      cwd: dir,
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the CLI loads the module of the command it runs', () => {
  it('`manifests` loads no other command, and says what it lacks', async () => {
    const result = await run('--json', 'manifests');
    expect(result.stderr).not.toContain('init.js loaded');
    expect(result.code).toBe(1); // no PROJECT in an empty directory
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, error: expect.stringContaining('PROJECT') });
  });

  it('`--help` loads them all, and lists every command (the hook catches init.js)', async () => {
    const result = await run('--help');
    expect(result.stderr).toContain('init.js loaded');
    const all = await promisify(execFile)(process.execPath, [bin, '--help'], { cwd: dir });
    for (const name of ['init', 'create', 'manifests', 'envtest', 'build-installer', 'helm-chart', 'edit'])
      expect(all.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
    for (const name of ['alpha', 'import', 'validate', 'run', 'version'])
      expect(all.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
  });
});
