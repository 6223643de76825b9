/**
 * `kubesmith edit --multigroup`: a single-group project moved to the multigroup layout is the project a
 * multigroup `init` and the same commands make, byte for byte; the user's edits move with their files; a
 * second group can then be added.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { read, removeTemp, run, snapshot, tempDir } from '../helpers/run.js';

let single: string;
let multi: string;
beforeEach(async () => {
  single = await tempDir('fleet');
  multi = path.join(path.dirname(single), 'multi', 'fleet');
});
afterEach(async () => {
  await removeTemp(single);
  await removeTemp(path.dirname(multi));
});

const commands = [
  ['create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook'],
  ['create', 'webhook', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook', '--defaulting'],
  [
    'create',
    'api',
    '--group',
    'webapp',
    '--version',
    'v1',
    '--kind',
    'Memcached',
    '--image',
    'memcached:1.6',
  ],
  ['create', 'api', '--group', 'core', '--version', 'v1', '--kind', 'Pod', '--resource=false'],
];

async function make(dir: string, init: string[]): Promise<void> {
  expect((await run(dir, 'init', '--domain', 'example.com', '--skip-install', ...init)).code).toBe(0);
  for (const command of commands) expect((await run(dir, ...command)).code).toBe(0);
}

const frigate = ['create', 'api', '--group', 'ship', '--version', 'v1', '--kind', 'Frigate'];

describe('kubesmith edit --multigroup', () => {
  it('moves controllers, their tests and roles to the multigroup layout, as a multigroup init makes them, keeping edits', async () => {
    await make(single, []);
    const { mkdir } = await import('node:fs/promises');
    await mkdir(multi, { recursive: true });
    await make(multi, ['--multigroup']);
    expect((await run(single, ...frigate)).stderr).toMatch(/multiple groups are not allowed/);

    const before = await snapshot(single);
    expect((await run(single, 'edit', '--multigroup', '--dry-run')).code).toBe(0);
    expect(await snapshot(single)).toEqual(before);

    const result = await run(single, 'edit', '--multigroup');
    expect(result.stderr).not.toMatch(/error:|warning:/);
    expect(result.code).toBe(0);
    expect(await snapshot(single)).toEqual(await snapshot(multi));
    expect((await run(single, 'edit', '--multigroup')).stderr).toMatch(/multigroup already: nothing to do/);

    const created = await run(single, ...frigate);
    expect(created.stderr).not.toMatch(/error:/);
    expect(existsSync(path.join(single, 'src/controllers/ship/frigate.controller.ts'))).toBe(true);
  }, 240_000);

  it("keeps the user's edits in a moved controller, and stops without writing when a target exists", async () => {
    expect((await run(single, 'init', '--domain', 'example.com', '--skip-install')).code).toBe(0);
    expect((await run(single, ...commands[0]!)).code).toBe(0);
    const controller = path.join(single, 'src/controllers/guestbook.controller.ts');
    await writeFile(controller, `${await readFile(controller, 'utf8')}// my reconcile logic\n`);
    const blocker = path.join(single, 'src/controllers/webapp/guestbook.controller.ts');
    await mkdir(path.dirname(blocker));
    await writeFile(blocker, 'mine\n');

    const before = await snapshot(single);
    const refused = await run(single, 'edit', '--multigroup');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^error: cannot move src\/controllers\/guestbook\.controller\.ts to .* exists\nhint: /,
    );
    expect(await snapshot(single)).toEqual(before);

    await rm(path.dirname(blocker), { recursive: true });
    expect((await run(single, 'edit', '--multigroup')).code).toBe(0);
    expect(await read(single, 'src/controllers/webapp/guestbook.controller.ts')).toMatch(
      /\/\/ my reconcile logic\n$/,
    );
    expect(existsSync(controller)).toBe(false);
  }, 120_000);

  it('without a setting is a usage error', async () => {
    const result = await run(single, 'edit');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'error: kubesmith edit needs --plugins helm, --plugins autoupdate, --multigroup or --cert-provider\nhint: e.g. kubesmith edit --multigroup, kubesmith edit --cert-provider self, or kubesmith edit --plugins helm\n',
    );
  });
});
