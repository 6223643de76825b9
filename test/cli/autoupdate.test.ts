/**
 * `--plugins autoupdate` on `init` and `edit`: the weekly `alpha update` workflow, recorded in PROJECT. An
 * existing project that adds it gets what `init --plugins autoupdate` and the same commands make, byte for
 * byte; a workflow of the user's at that path is not overwritten without --force; a bad plugin name or a
 * PROJECT record with options is one line, a hint, and nothing written. (generated-workflows.test.ts checks
 * the workflow's pins and permissions; alpha-generate.test.ts that the record is replayed.)
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTemp, run, snapshot, tempDir } from '../helpers/run.js';

const WORKFLOW = '.github/workflows/auto-update.yml';
const TIMEOUT = 120_000;
const RECORD = 'plugins:\n  autoupdate.kubesmith.dev/v1-alpha: {}\n';
let dir: string;
beforeEach(async () => {
  dir = await tempDir('guestbook');
});
afterEach(async () => {
  await removeTemp(dir);
});

async function kubesmith(cwd: string, ...args: string[]): Promise<void> {
  const result = await run(cwd, ...args);
  expect(result.stderr).not.toMatch(/^error:/m);
  expect(result.code).toBe(0);
}

const api = ['create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook'];

/** Runs kubesmith in `dir` and expects a refusal: exit 1, one error line, a hint, nothing written. */
async function expectRefused(args: string[], message: RegExp, code = 1): Promise<void> {
  const before = await snapshot(dir);
  const result = await run(dir, ...args);
  const lines = result.stderr.trim().split('\n');
  expect(lines[0]).toMatch(message);
  expect(lines).toHaveLength(2);
  expect(lines[1]).toMatch(/^hint: /);
  expect(result.code).toBe(code);
  expect(await snapshot(dir)).toEqual(before);
}

describe('init --plugins autoupdate', () => {
  it(
    'writes the workflow and records the plugin in PROJECT; init without it writes neither',
    async () => {
      await kubesmith(dir, 'init', '--domain', 'example.com', '--skip-install', '--plugins', 'autoupdate');
      expect(await readFile(path.join(dir, WORKFLOW), 'utf8')).toMatch(
        /npx kubesmith alpha update .*--force/,
      );
      expect(await readFile(path.join(dir, 'PROJECT'), 'utf8')).toContain(RECORD);

      const plain = path.join(path.dirname(dir), 'plain');
      await mkdir(plain);
      await kubesmith(plain, 'init', '--domain', 'example.com', '--skip-install');
      expect(existsSync(path.join(plain, WORKFLOW))).toBe(false);
      expect(await readFile(path.join(plain, 'PROJECT'), 'utf8')).not.toContain('autoupdate');
    },
    TIMEOUT,
  );

  it(
    "accepts kubebuilder's names of the plugin, and refuses another plugin: one line, a hint, nothing written",
    async () => {
      await expectRefused(
        ['init', '--domain', 'example.com', '--skip-install', '--plugins', 'autoupdate,helm'],
        /^error: unknown plugin "helm" for init$/,
        2,
      );
      expect(await snapshot(dir)).toEqual({});
      await kubesmith(
        dir,
        'init',
        '--domain',
        'example.com',
        '--skip-install',
        '--plugins',
        'autoupdate.kubebuilder.io/v1-alpha',
      );
      expect(existsSync(path.join(dir, WORKFLOW))).toBe(true);
    },
    TIMEOUT,
  );
});

describe('edit --plugins autoupdate', () => {
  it(
    'adds to an existing project what init --plugins autoupdate and the same commands make, byte for byte',
    async () => {
      await kubesmith(dir, 'init', '--domain', 'example.com', '--skip-install');
      await kubesmith(dir, ...api);
      const before = await snapshot(dir);
      await kubesmith(dir, 'edit', '--plugins', 'autoupdate', '--dry-run');
      expect(await snapshot(dir)).toEqual(before);
      await kubesmith(dir, 'edit', '--plugins', 'autoupdate');

      const fresh = path.join(path.dirname(dir), 'fresh', 'guestbook');
      await mkdir(fresh, { recursive: true });
      await kubesmith(fresh, 'init', '--domain', 'example.com', '--skip-install', '--plugins', 'autoupdate');
      await kubesmith(fresh, ...api);
      expect(await snapshot(dir)).toEqual(await snapshot(fresh));

      // Once more: nothing changes.
      const after = await snapshot(dir);
      await kubesmith(dir, 'edit', '--plugins', 'autoupdate/v1-alpha');
      expect(await snapshot(dir)).toEqual(after);
    },
    TIMEOUT,
  );

  it(
    'does not overwrite a workflow of the same name without --force',
    async () => {
      await kubesmith(dir, 'init', '--domain', 'example.com', '--skip-install');
      await mkdir(path.join(dir, '.github/workflows'), { recursive: true });
      await writeFile(path.join(dir, WORKFLOW), 'name: mine\n');
      await expectRefused(
        ['edit', '--plugins', 'autoupdate'],
        /^error: \.github\/workflows\/auto-update\.yml already exists$/,
      );
      await kubesmith(dir, 'edit', '--plugins', 'autoupdate', '--force');
      expect(await readFile(path.join(dir, WORKFLOW), 'utf8')).toContain('alpha update');
      expect(await readFile(path.join(dir, 'PROJECT'), 'utf8')).toContain(RECORD);
    },
    TIMEOUT,
  );

  it(
    'refuses an unknown plugin, and a PROJECT whose record carries options',
    async () => {
      await kubesmith(dir, 'init', '--domain', 'example.com', '--skip-install');
      await expectRefused(
        ['edit', '--plugins', 'autoupdate,go/v4'],
        /^error: unknown plugin "go\/v4" for edit$/,
        2,
      );
      const file = path.join(dir, 'PROJECT');
      await writeFile(
        file,
        `${await readFile(file, 'utf8')}plugins:\n  autoupdate.kubesmith.dev/v1-alpha: {schedule: "* * * * *"}\n`,
      );
      await expectRefused(
        ['edit', '--plugins', 'autoupdate'],
        /plugins\.autoupdate\.kubesmith\.dev\/v1-alpha: takes no options/,
      );
    },
    TIMEOUT,
  );
});
