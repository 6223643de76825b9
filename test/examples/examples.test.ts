/**
 * examples/ is what the CLI makes today: scripts/examples.mjs makes every example again and compares, and
 * only the files a user edits (USER_FILES there) may differ. `npm run examples` rewrites them.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyProject, removeCopies, repo, runScript } from '../helpers/scripts.js';

const examples = (...args: string[]) => runScript('examples.mjs', ...args);

afterAll(removeCopies);

describe('examples/', () => {
  it('is what the CLI makes today (npm run examples regenerates it)', async () => {
    const result = await examples('--check');
    expect(result.stdout).toBe('');
    expect(result.code).toBe(0);
  }, 120_000);

  it('a changed generated file is drift; a changed user file is not', async () => {
    const dir = await copyProject('examples/demo-application', 'demo-application');
    const controller = path.join(dir, 'demo-application/src/controllers/demoapplication.controller.ts');
    await writeFile(controller, `${await readFile(controller, 'utf8')}\n// edited by hand\n`);
    await writeFile(path.join(dir, 'demo-application/README.md'), '# my own story\n');
    await writeFile(path.join(dir, 'demo-application/notes.txt'), 'not made by the CLI\n');

    const result = await examples('--check', '--only', 'demo-application', '--dir', dir);
    expect(result.code).toBe(3);
    expect(result.stdout.trim().split('\n').sort()).toEqual([
      'examples/demo-application/notes.txt: not made by the CLI',
      'examples/demo-application/src/controllers/demoapplication.controller.ts: differs from line 505',
    ]);
    expect(result.stderr).toMatch(
      /^error: 2 file\(s\) of examples\/ differ .*\nhint: run `npm run build && npm run examples`/m,
    );

    // Writing puts the CLI's file back and keeps the user's README.
    expect((await examples('--only', 'demo-application', '--dir', dir)).code).toBe(0);
    expect(await readFile(controller, 'utf8')).toBe(
      await readFile(
        path.join(repo, 'examples/demo-application/src/controllers/demoapplication.controller.ts'),
        'utf8',
      ),
    );
    expect(await readFile(path.join(dir, 'demo-application/README.md'), 'utf8')).toBe('# my own story\n');
    expect((await examples('--check', '--only', 'demo-application', '--dir', dir)).code).toBe(0);
  }, 120_000);
});
