/**
 * testdata/project is what the CLI makes today for the golden commands of scripts/golden.mjs (the quick
 * start, webhooks, a conversion, a built-in controller): the script makes it again in a temporary directory
 * (--skip-install, no network) and compares file by file. After a change to what the CLI writes,
 * `npm run build && npm run golden` rewrites it, and the change is reviewed as a diff of testdata/.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const script = path.join(repo, 'scripts/golden.mjs');

async function golden(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [script, ...args], {
      cwd: repo,
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const temps: string[] = [];
afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('testdata/project (the golden generated project)', () => {
  it('is what the CLI makes today (npm run golden regenerates it)', async () => {
    const result = await golden('--check');
    // On drift, the message lists every file that differs and the command that regenerates them.
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.code).toBe(0);
  }, 120_000);

  it('a file changed, removed or added by hand is drift, named with the command that fixes it', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-golden-test-'));
    temps.push(dir);
    await cp(path.join(repo, 'testdata/project'), path.join(dir, 'project'), {
      recursive: true,
      filter: (source) => !source.includes('node_modules'),
    });
    const main = path.join(dir, 'project/src/main.ts');
    const lines = (await readFile(main, 'utf8')).split('\n');
    lines[20] = '// changed by hand';
    await writeFile(main, lines.join('\n'));
    await rm(path.join(dir, 'project/config/rbac/role.yaml'));
    await writeFile(path.join(dir, 'project/notes.txt'), 'not made by the CLI\n');

    const result = await golden('--check', '--dir', dir);
    expect(result.code).toBe(3);
    expect(result.stdout.trim().split('\n').sort()).toEqual([
      'testdata/project/config/rbac/role.yaml: missing',
      'testdata/project/notes.txt: not made by the CLI',
      'testdata/project/src/main.ts: differs from line 21',
    ]);
    expect(result.stderr).toBe(
      'error: 3 file(s) of testdata/ differ from what the CLI makes today\n' +
        'hint: run `npm run build && npm run golden` and review the diff (no file there is edited by hand)\n',
    );
  }, 120_000);
});
