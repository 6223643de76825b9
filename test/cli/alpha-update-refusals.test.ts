/**
 * `kubesmith alpha update` refuses each bad input of issue 27 with one error line and a hint, exit 1, and
 * nothing changed: not a git repository, a dirty work tree, a PROJECT that does not parse, one naming a
 * resource whose files are gone, one recording a key no command writes, an old kubesmith that cannot be
 * installed, an output branch that exists.
 */
import { execFileSync } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTemp, run, snapshot, tempDir } from '../helpers/run.js';

const TIMEOUT = 120_000;
let dir: string;

beforeEach(async () => {
  dir = await tempDir('guestbook');
  expect((await run(dir, 'init', '--domain', 'example.com', '--skip-install')).code).toBe(0);
  const api = ['create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook'];
  expect((await run(dir, ...api)).code).toBe(0);
}, TIMEOUT);
afterEach(async () => {
  await removeTemp(dir);
});

const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 60_000,
  });

async function gitProject(): Promise<void> {
  git('init', '--quiet', '--initial-branch=main');
  git('add', '-A');
  git('commit', '--quiet', '-m', 'scaffold');
}

/** Runs alpha update and expects a refusal: exit 1, one error line matching `message`, a hint, nothing changed. */
async function refused(message: RegExp, ...flags: string[]): Promise<void> {
  const before = await snapshot(dir);
  const refs = () => {
    try {
      return git('for-each-ref', '--format=%(refname) %(objectname)') + git('worktree', 'list');
    } catch {
      return 'no repository';
    }
  };
  const refsBefore = refs();
  const result = await run(dir, 'alpha', 'update', ...flags);
  expect(result.code).toBe(1);
  const errors = result.stderr.split('\n').filter((line) => line.startsWith('error:'));
  expect(errors).toHaveLength(1);
  expect(errors[0]).toMatch(message);
  expect(result.stderr).toMatch(/^hint: \S/m);
  expect(await snapshot(dir)).toEqual(before);
  expect(refs()).toBe(refsBefore);
}

describe('alpha update refuses', () => {
  it(
    'a project outside a git repository',
    async () => {
      await refused(/is not in a git repository/);
    },
    TIMEOUT,
  );

  it(
    'a work tree with uncommitted changes',
    async () => {
      await gitProject();
      await writeFile(path.join(dir, 'src/main.ts'), '// mine\n', { flag: 'a' });
      await refused(/the git work tree has 1 uncommitted change \(src\/main\.ts\)/);
    },
    TIMEOUT,
  );

  it(
    'a PROJECT that does not parse',
    async () => {
      await writeFile(path.join(dir, 'PROJECT'), 'domain: [example.com\n');
      await gitProject();
      await refused(/PROJECT/);
    },
    TIMEOUT,
  );

  it(
    'a PROJECT naming a resource whose files are gone',
    async () => {
      await rm(path.join(dir, 'src/api/webapp/v1/guestbook.types.ts'));
      await gitProject();
      await refused(
        /PROJECT names webapp\/v1 Guestbook, whose src\/api\/webapp\/v1\/guestbook\.types\.ts is not on the branch/,
      );
    },
    TIMEOUT,
  );

  it(
    'a key in PROJECT that no kubesmith command writes',
    async () => {
      await writeFile(path.join(dir, 'PROJECT'), 'someoneElses: data\n', { flag: 'a' });
      await gitProject();
      await refused(/PROJECT records the key "someoneElses"/);
    },
    TIMEOUT,
  );

  it(
    'an old kubesmith that cannot be installed',
    async () => {
      await gitProject();
      await refused(
        /the old kubesmith \(.*kubesmith-9\.9\.9\.tgz\) could not be installed/,
        '--from-cli',
        path.join(path.dirname(dir), 'missing', 'kubesmith-9.9.9.tgz'),
      );
    },
    TIMEOUT,
  );

  it(
    'an --output-branch that exists',
    async () => {
      await gitProject();
      await refused(/the branch main already exists/, '--output-branch', 'main');
    },
    TIMEOUT,
  );

  it(
    'a detached HEAD without --from-branch, and a --from-branch that is no branch',
    async () => {
      await gitProject();
      git('checkout', '--quiet', '--detach');
      await refused(/HEAD is not on a branch/);
      await refused(/--from-branch nope is not a branch/, '--from-branch', 'nope');
    },
    TIMEOUT,
  );
});
