/** `kubesmith manifests --paths DIR --output-dir DIR`: CRDs from types outside a project's src/api. */
import { cp, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTemp, run, snapshot, tempDir } from '../helpers/run.js';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures');
const temps: string[] = [];

afterEach(async () => {
  for (const dir of temps.splice(0)) await removeTemp(dir);
});

async function typesDir(fixture: string): Promise<string> {
  const dir = await tempDir('types');
  temps.push(dir);
  await cp(path.join(FIXTURES, fixture, 'src/api'), dir, { recursive: true });
  return dir;
}

/** The generated CRD without its header and version annotation (the fixture's are kubesmith's own). */
const body = (yaml: string) =>
  yaml
    .split('\n')
    .filter((l) => !l.includes('kubesmith.dev/version'))
    .slice(1);

describe('kubesmith manifests --paths --output-dir', () => {
  it('generates the CRDs of a directory of types without a project, named <group>_<plural>.yaml', async () => {
    const dir = await typesDir('crd-markers');
    const out = path.join(path.dirname(dir), 'crds');
    const result = await run(path.dirname(dir), 'manifests', '--paths', 'types', '--output-dir', 'crds');
    expect(result.stderr).toContain('created   fleet.example.com_frigatae.yaml');
    expect(result.code).toBe(0);
    expect(Object.keys(await snapshot(out))).toEqual(['fleet.example.com_frigatae.yaml']);
    const expected = await readFile(
      path.join(FIXTURES, 'crd-markers/expected/config/crd/bases/fleet.example.com_frigatae.yaml'),
      'utf8',
    );
    expect(body(await readFile(path.join(out, 'fleet.example.com_frigatae.yaml'), 'utf8'))).toEqual(
      body(expected),
    );
    const check = await run(
      path.dirname(dir),
      'manifests',
      '--paths',
      'types',
      '--output-dir',
      'crds',
      '--check',
    );
    expect(check.code).toBe(0);
  });

  it('refuses --rbac with --paths, and a --paths that is not a directory', async () => {
    const dir = await typesDir('crd-markers');
    const rbac = await run(dir, 'manifests', '--paths', '.', '--rbac');
    expect(rbac.code).toBe(2);
    expect(rbac.stderr).toMatch(/error: --paths and --output-dir generate CRDs only/);
    const missing = await run(dir, 'manifests', '--paths', 'nowhere');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/error: --paths nowhere: no such directory\nhint: /);
  });
});
