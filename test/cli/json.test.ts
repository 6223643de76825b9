/** `--json`: one JSON document on stdout, for success and for failure, whatever the command. */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTemp, run, tempDir } from '../helpers/run.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir('guestbook');
});
afterEach(async () => {
  await removeTemp(dir);
});

const guestbook = ['create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook'];

describe('--json', () => {
  it('create api lists the files it scaffolded and the manifests it regenerated', async () => {
    expect((await run(dir, 'init', '--domain', 'example.com', '--skip-install')).code).toBe(0);
    const result = await run(dir, ...guestbook, '--json');
    expect(result.code, result.stderr).toBe(0);
    const json = JSON.parse(result.stdout) as {
      files: { action: string; path: string }[];
      manifests: { path: string; status: string }[];
    };
    expect(json.files).toContainEqual({ action: 'create', path: 'src/api/webapp/v1/guestbook.types.ts' });
    expect(json.manifests).toEqual([
      { path: 'config/crd/bases/webapp.example.com_guestbooks.yaml', status: 'created' },
      { path: 'config/rbac/role.yaml', status: 'updated' },
    ]);
  });

  it('a failure in the project: ok false, the error, the hint and the exit code', async () => {
    const result = await run(dir, ...guestbook, '--json');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      ok: false,
      error: `not in a kubesmith project: no PROJECT file in ${dir} or its parents`,
      hint: expect.stringMatching(/kubesmith init/) as unknown,
      exitCode: 1,
    });
    // People still get the one-line error on stderr.
    expect(result.stderr).toMatch(/^error: not in a kubesmith project/m);
  });

  it('a usage error: exit code 2, also when --json comes before the command', async () => {
    for (const args of [
      ['init', '--license', 'gpl', '--json'],
      ['--json', 'init', '--license', 'gpl'],
    ]) {
      const result = await run(dir, ...args);
      expect(result.code).toBe(2);
      expect(JSON.parse(result.stdout)).toEqual({
        ok: false,
        error: "option '--license <license>' argument 'gpl' is invalid. Allowed choices are apache2, none.",
        hint: 'add --help for the flags and examples of this command',
        exitCode: 2,
      });
    }
  });

  it('manifests --check on stale files: one document with the stale files and exit code 3', async () => {
    expect((await run(dir, 'init', '--domain', 'example.com', '--skip-install')).code).toBe(0);
    expect((await run(dir, ...guestbook)).code).toBe(0);
    const types = path.join(dir, 'src/api/webapp/v1/guestbook.types.ts');
    await writeFile(
      types,
      (await readFile(types, 'utf8')).replace('foo?: string;', 'foo?: string;\n  bar?: string;'),
    );
    const result = await run(dir, 'manifests', '--check', '--json');
    expect(result.code).toBe(3);
    // The diff is for people: with --json, stdout holds the one document.
    const json = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(json).toMatchObject({
      ok: false,
      command: 'manifests',
      stale: ['config/crd/bases/webapp.example.com_guestbooks.yaml'],
      error: '1 generated file is out of date: config/crd/bases/webapp.example.com_guestbooks.yaml',
      hint: 'run kubesmith manifests and commit the result',
      exitCode: 3,
    });
  });
});
