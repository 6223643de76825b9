/**
 * examples/ is what the CLI makes today: scripts/examples.mjs makes every example again and compares, and
 * only the files a user edits (USER_FILES there) may differ. `npm run examples` rewrites them.
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
const script = path.join(repo, 'scripts/examples.mjs');

async function examples(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
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

describe('examples/', () => {
  it('is what the CLI makes today (npm run examples regenerates it)', async () => {
    const result = await examples('--check');
    expect(result.stdout).toBe('');
    expect(result.code).toBe(0);
  }, 120_000);

  it('a changed generated file is drift; a changed user file is not', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-examples-test-'));
    temps.push(dir);
    await cp(path.join(repo, 'examples/demo-application'), path.join(dir, 'demo-application'), {
      recursive: true,
      filter: (source) => !source.includes('node_modules'),
    });
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
