/** The shortcut of `kubesmith manifests` when neither its inputs nor its outputs changed. */
import { cp, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTemp, run, tempDir } from '../helpers/run.js';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures');
const CRD = 'config/crd/bases/webapp.example.com_guestbooks.yaml';
let dir: string;

/** A copy of the crd-basic fixture with a node_modules directory, where the stamp is kept. */
async function project(): Promise<string> {
  dir = await tempDir();
  await cp(path.join(FIXTURES, 'crd-basic/PROJECT'), path.join(dir, 'PROJECT'));
  await cp(path.join(FIXTURES, 'crd-basic/src'), path.join(dir, 'src'), { recursive: true });
  await mkdir(path.join(dir, 'node_modules'));
  return dir;
}

async function cachedRun(...args: string[]): Promise<{ code: number; cached: boolean; stdout: string }> {
  const result = await run(dir, 'manifests', ...args, '--json');
  const json = JSON.parse(result.stdout) as { cached?: boolean };
  return { code: result.code, cached: json.cached === true, stdout: result.stdout };
}

afterEach(async () => {
  if (dir) await removeTemp(dir);
});

describe('kubesmith manifests, run again', () => {
  it('skips generation when nothing changed, for writes and for --check', async () => {
    await project();
    expect(await cachedRun()).toMatchObject({ code: 0, cached: false });
    expect(await cachedRun()).toMatchObject({ code: 0, cached: true });
    expect(await cachedRun('--check')).toMatchObject({ code: 0, cached: true });
  });

  it('generates again after a source changes', async () => {
    await project();
    await cachedRun();
    const types = path.join(dir, 'src/api/webapp/v1/guestbook.types.ts');
    await writeFile(
      types,
      (await readFile(types, 'utf8')).replace('Replicas is the number of pods.', 'How many pods.'),
    );
    expect(await cachedRun()).toMatchObject({ code: 0, cached: false });
    expect(await readFile(path.join(dir, CRD), 'utf8')).toContain('How many pods.');
  });

  it('notices a hand edit of an output: --check fails and a run restores the file', async () => {
    await project();
    await cachedRun();
    const crd = path.join(dir, CRD);
    const original = await readFile(crd, 'utf8');
    await writeFile(crd, original.replace('type: object', 'type: string'));
    expect(await cachedRun('--check')).toMatchObject({ code: 3, cached: false });
    expect(await cachedRun()).toMatchObject({ code: 0, cached: false });
    expect(await readFile(crd, 'utf8')).toBe(original);
  });

  it('does not reuse a run with other flags', async () => {
    await project();
    await cachedRun('--crd');
    expect(await cachedRun('--crd', '--max-desc-len', '0')).toMatchObject({ cached: false });
  });

  it('node_modules linked out of the project: no stamp is read or written there', async () => {
    await project();
    const outside = path.join(path.dirname(dir), 'outside');
    await mkdir(outside);
    await rm(path.join(dir, 'node_modules'), { recursive: true });
    await symlink(outside, path.join(dir, 'node_modules'));
    expect(await cachedRun()).toMatchObject({ code: 0, cached: false });
    expect(await cachedRun()).toMatchObject({ code: 0, cached: false });
    expect(await readdir(outside)).toEqual([]);
  });
});
