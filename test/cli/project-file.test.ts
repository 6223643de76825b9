/**
 * A PROJECT file from a stranger's pull request: too large, an alias bomb, not a file, or resources whose
 * names would become paths and code. Each is refused, naming PROJECT (and the resource and field), before
 * anything is written.
 */
import { readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectRefused as refused, removeTemp, run, snapshot, tempDir } from '../helpers/run.js';

let dir: string;
let project: string;
beforeEach(async () => {
  dir = await tempDir('demo');
  expect((await run(dir, 'init', '--domain', 'example.com', '--skip-install')).code).toBe(0);
  expect(
    (await run(dir, 'create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook')).code,
  ).toBe(0);
  project = await readFile(path.join(dir, 'PROJECT'), 'utf8');
});
afterEach(async () => {
  await removeTemp(dir);
});

const another = ['create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Other'];

/** Runs `create api` for a new kind and expects it refused: exit 1, one line and a hint, nothing written. */
const expectRefused = (message: RegExp) => refused(dir, another, 1, message);

describe('a PROJECT', () => {
  it('larger than 1 MiB is refused before it is parsed', async () => {
    await writeFile(path.join(dir, 'PROJECT'), `${project}#${'x'.repeat(1024 * 1024)}\n`);
    await expectRefused(/^error: .*PROJECT: PROJECT is larger than the 1048576 bytes a PROJECT may have$/);
  });

  it.skipIf(process.platform === 'win32')('that is not a regular file is not read', async () => {
    // A PROJECT that links to /dev/zero would be read forever (snapshot() would too: file names only here).
    const file = path.join(dir, 'PROJECT');
    await rm(file);
    await symlink('/dev/zero', file);
    const before = await readdir(dir, { recursive: true });
    const result = await run(dir, ...another);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: .*PROJECT: PROJECT is not a regular file\nhint: /);
    expect(await readdir(dir, { recursive: true })).toEqual(before);
  });

  it('whose aliases expand without bound is refused', async () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level < 12; level++) {
      const name = String.fromCharCode(97 + level);
      const previous = String.fromCharCode(96 + level);
      bomb.push(`${name}: &${name} [${Array(10).fill(`*${previous}`).join(', ')}]`);
    }
    await writeFile(
      path.join(dir, 'PROJECT'),
      `${project}bomb:\n${bomb.map((line) => `  ${line}`).join('\n')}\n`,
    );
    await expectRefused(/^error: .*PROJECT: PROJECT is not valid: .*alias/i);
  });

  it.each([
    ['group', 'group: webapp', 'group: ../../x', /either Group or Domain is invalid/],
    ['version', 'version: v1', 'version: v1/../../x', /Version must respect DNS-1123/],
    ['kind', 'kind: Guestbook', 'kind: My-Kind', /invalid Kind: My-Kind: must be PascalCase/],
    ['kind', 'kind: Guestbook', "kind: 'A*/x'", /invalid Kind: A\*\/x/],
    ['domain', '    domain: example.com', '    domain: ../evil', /domain \(\.\.\/evil\) is invalid/],
    [
      'path',
      'path: src/api/webapp/v1/guestbook.types.ts',
      'path: ../../etc/passwd',
      /path "\.\.\/\.\.\/etc\/passwd" is not a file of the project/,
    ],
    [
      'path',
      'path: src/api/webapp/v1/guestbook.types.ts',
      'path: /etc/passwd',
      /path "\/etc\/passwd" is not a file/,
    ],
    ['plural', 'version: v1', 'version: v1\n    plural: ../x', /invalid plural: \.\.\/x/],
    [
      'webhooks.spoke.0',
      'version: v1',
      'version: v1\n    webhooks:\n      conversion: true\n      spoke: [../v2]\n      webhookVersion: v1',
      /Version must respect DNS-1123 \(was \.\.\/v2\)/,
    ],
  ])(
    'whose resource has a bad %s is refused, naming PROJECT:line:col, the resource and the field',
    async (field, from, to, problem) => {
      expect(project).toContain(from);
      await writeFile(path.join(dir, 'PROJECT'), project.replace(from, to));
      const before = await snapshot(dir);
      const result = await run(dir, ...another);
      expect(result.code).toBe(1);
      const [error, hint] = result.stderr.trim().split('\n');
      expect(error).toMatch(/^error: .*PROJECT:\d+:\d+: PROJECT resource 1 \(.*\): /);
      expect(error).toContain(`: ${field}: `);
      expect(error).toMatch(problem);
      expect(hint).toMatch(/^hint: /);
      expect(await snapshot(dir)).toEqual(before);
    },
  );
});
