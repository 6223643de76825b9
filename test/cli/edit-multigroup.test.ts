/**
 * `kubesmith edit --multigroup`: a single-group project takes APIs of other groups afterwards, their
 * controllers in src/controllers/<group>/; the existing controllers stay, and the command says so.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { read, removeTemp, run, snapshot, tempDir } from '../helpers/run.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir('fleet');
  expect((await run(dir, 'init', '--domain', 'example.com', '--skip-install')).code).toBe(0);
  expect(
    (await run(dir, 'create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook')).code,
  ).toBe(0);
});
afterEach(async () => {
  await removeTemp(dir);
});

const frigate = ['create', 'api', '--group', 'ship', '--version', 'v1', '--kind', 'Frigate'];

describe('kubesmith edit --multigroup', () => {
  it('lets create api add a second group, in the multigroup layout, and says the existing controller stays', async () => {
    expect((await run(dir, ...frigate)).stderr).toMatch(/multiple groups are not allowed/);

    const before = await snapshot(dir);
    const dry = await run(dir, 'edit', '--multigroup', '--dry-run');
    expect(dry.code).toBe(0);
    expect(await snapshot(dir)).toEqual(before);

    const result = await run(dir, 'edit', '--multigroup');
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /warning.*does not move existing controllers: src\/controllers\/guestbook\.controller\.ts stays in the single-group layout/,
    );
    expect(await read(dir, 'PROJECT')).toContain('\nmultigroup: true\n');
    expect(existsSync(path.join(dir, 'src/controllers/guestbook.controller.ts'))).toBe(true);

    const created = await run(dir, ...frigate);
    expect(created.stderr).not.toMatch(/error:/);
    expect(created.code).toBe(0);
    expect(existsSync(path.join(dir, 'src/controllers/ship/frigate.controller.ts'))).toBe(true);
    expect(existsSync(path.join(dir, 'config/rbac/ship_frigate_admin_role.yaml'))).toBe(true);

    expect((await run(dir, 'edit', '--multigroup')).stderr).toMatch(/multigroup already: nothing to do/);
  }, 120_000);

  it('without a setting is a usage error', async () => {
    const result = await run(dir, 'edit');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'error: kubesmith edit needs --plugins helm or --multigroup\nhint: e.g. kubesmith edit --multigroup, or kubesmith edit --plugins helm\n',
    );
  });
});
