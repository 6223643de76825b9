/**
 * testdata/project is what the CLI makes today for the golden commands of scripts/golden.mjs (the quick
 * start, webhooks, a conversion, a built-in controller): the script makes it again in a temporary directory
 * (--skip-install, no network) and compares file by file. After a change to what the CLI writes,
 * `npm run build && npm run golden` rewrites it, and the change is reviewed as a diff of testdata/.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyProject, removeCopies, runScript } from '../helpers/scripts.js';

const golden = (...args: string[]) => runScript('golden.mjs', ...args);

afterAll(removeCopies);

describe('testdata/project (the golden generated project)', () => {
  it('is what the CLI makes today (npm run golden regenerates it)', async () => {
    const result = await golden('--check');
    // On drift, the message lists every file that differs and the command that regenerates them.
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.code).toBe(0);
  }, 120_000);

  it('a file changed, removed or added by hand is drift, named with the command that fixes it', async () => {
    const dir = await copyProject('testdata/project', 'project');
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
