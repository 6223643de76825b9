/**
 * `create api` and `create webhook` regenerate the manifests in the same plan as the scaffold: --dry-run
 * lists the CRD, role and webhook configuration files a real run writes (and writes nothing), and a write
 * that fails half way leaves the project byte for byte as it was, manifests included.
 */
import type * as Fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { removeTemp, run, snapshot, tempDir } from '../helpers/run.js';

/** The rename that fails, when set: the disk failing half way through the write. */
const failing = vi.hoisted(() => ({ rename: undefined as RegExp | undefined }));
vi.mock('node:fs', async (importOriginal) => {
  const original = await importOriginal<typeof Fs>();
  const renameSync: typeof original.renameSync = (from, to) => {
    if (failing.rename?.test(String(to))) {
      throw Object.assign(new Error(`EIO: i/o error, rename '${String(to)}'`), { code: 'EIO', path: to });
    }
    original.renameSync(from, to);
  };
  return { ...original, default: { ...original, renameSync }, renameSync };
});

let dir: string;
beforeEach(async () => {
  dir = await tempDir('guestbook');
  expect((await run(dir, 'init', '--domain', 'example.com', '--skip-install')).code).toBe(0);
});
afterEach(async () => {
  failing.rename = undefined;
  await removeTemp(dir);
});

const guestbook = ['create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook'];
const webhook = [
  'create',
  'webhook',
  '--group',
  'webapp',
  '--version',
  'v1',
  '--kind',
  'Guestbook',
  '--defaulting',
  '--programmatic-validation',
];

describe('create api and create webhook: one plan with the manifests', () => {
  it('--dry-run lists the CRD and the role a real run writes, and writes nothing', async () => {
    const before = await snapshot(dir);
    const dry = await run(dir, ...guestbook, '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toMatch(/^create +config\/crd\/bases\/webapp\.example\.com_guestbooks\.yaml$/m);
    expect(dry.stderr).toMatch(/^update +config\/rbac\/role\.yaml$/m);
    expect(await snapshot(dir)).toEqual(before);

    // The real run writes exactly the files the dry run listed.
    const real = await run(dir, ...guestbook);
    expect(real.code, real.stderr).toBe(0);
    expect(real.stderr).toContain(dry.stderr.trim());
    const after = await snapshot(dir);
    const changed = Object.keys(after).filter((file) => after[file] !== before[file]);
    const listed = [...dry.stderr.matchAll(/^(?:create|update|overwrite) +(\S+)$/gm)].map((m) => m[1]);
    expect(changed.sort()).toEqual(listed.sort());

    const dryWebhook = await run(dir, ...webhook, '--dry-run');
    expect(dryWebhook.code, dryWebhook.stderr).toBe(0);
    expect(dryWebhook.stderr).toMatch(/^create +config\/webhook\/manifests\.yaml$/m);
    expect(await snapshot(dir)).toEqual(after);
  });

  it('a write failing half way leaves the project byte for byte as it was, the manifests included', async () => {
    expect((await run(dir, ...guestbook)).code).toBe(0);
    const before = await snapshot(dir);
    // Files are renamed into place in path order: config/crd/..., PROJECT and config/default/... are in place
    // when config/webhook/manifests.yaml fails; src/main.ts and the webhook sources are not yet.
    failing.rename = /config\/webhook\/manifests\.yaml$/;
    const result = await run(dir, ...webhook);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: cannot write config\/webhook\/manifests\.yaml: EIO: i\/o error/m);
    expect(result.stderr).toMatch(/^hint: nothing was changed/m);
    expect(await snapshot(dir)).toEqual(before);

    // The same command then succeeds, and writes the manifests with the scaffold.
    failing.rename = undefined;
    const again = await run(dir, ...webhook);
    expect(again.code, again.stderr).toBe(0);
    expect(Object.keys(await snapshot(dir))).toContain('config/webhook/manifests.yaml');
  });
});
