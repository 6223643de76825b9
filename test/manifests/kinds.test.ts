/**
 * Which declarations of an API directory are kinds: interfaces with apiVersion, kind and metadata (or
 * `+kubebuilder:object:root=true`), not lists. An interface's own members are read from its syntax;
 * members that come from elsewhere (`extends`, a second declaration merged into it, a type alias) are the
 * checker's.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createContext } from '../../src/manifests/context.js';
import { generateCrds } from '../../src/manifests/crd.js';
import { removeTemp, run, tempDir } from '../helpers/run.js';

const temps: string[] = [];
afterEach(async () => {
  for (const dir of temps.splice(0)) await removeTemp(dir);
});

/** A directory holding src/api/ships/v1/types.ts with `types`, and its group-version.ts. */
async function apiDirectory(types: string): Promise<string> {
  const root = await tempDir();
  temps.push(root);
  const dir = path.join(root, 'src/api/ships/v1');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'group-version.ts'), '// +groupName=ships.example.com\nexport {};\n');
  await writeFile(path.join(dir, 'types.ts'), types);
  return root;
}

/** The CRD file names and diagnostics generated for `types`, the content of src/api/ships/v1/types.ts. */
async function generated(types: string) {
  const ctx = createContext(await apiDirectory(types));
  const files = [...generateCrds(ctx, { version: 'test' })].map((f) => path.basename(f.path));
  return { files: files.sort(), diagnostics: ctx.report.diagnostics };
}

/** The CRD file names generated for `types`, which must raise no diagnostic. */
async function crdsOf(types: string): Promise<string[]> {
  const { files, diagnostics } = await generated(types);
  expect(diagnostics).toEqual([]);
  return files;
}

const META = 'export interface Meta {\n  name?: string;\n}\n';

describe('finding the kinds of an API directory', () => {
  it('takes interfaces with apiVersion, kind and metadata, named by identifiers or strings', async () => {
    expect(
      await crdsOf(
        META +
          'export interface Frigate {\n  apiVersion: string;\n  kind: string;\n  metadata?: Meta;\n  spec?: { speed?: number };\n}\n' +
          'export interface Sloop {\n  \'apiVersion\': string;\n  "kind": string;\n  metadata?: Meta;\n}\n' +
          'export interface Mast {\n  kind: string;\n  metadata?: Meta;\n}\n',
      ),
    ).toEqual(['ships.example.com_frigates.yaml', 'ships.example.com_sloops.yaml']);
  });

  it('leaves out lists, and takes a list-shaped interface with a spec', async () => {
    expect(
      await crdsOf(
        META +
          'export interface Frigate {\n  apiVersion: string;\n  kind: string;\n  metadata?: Meta;\n}\n' +
          'export interface FrigateList {\n  apiVersion: string;\n  kind: string;\n  metadata?: Meta;\n  items: Frigate[];\n}\n' +
          'export interface Convoy {\n  apiVersion: string;\n  kind: string;\n  metadata?: Meta;\n  items?: string[];\n  spec?: { size?: number };\n}\n',
      ),
    ).toEqual(['ships.example.com_convoys.yaml', 'ships.example.com_frigates.yaml']);
  });

  it('sees members that come through extends, and those of a second declaration merged into a list', async () => {
    expect(
      await crdsOf(
        META +
          'interface TypeMeta {\n  apiVersion: string;\n  kind: string;\n}\n' +
          'export interface Frigate extends TypeMeta {\n  metadata?: Meta;\n}\n' +
          'export interface SloopList {\n  apiVersion: string;\n  kind: string;\n  metadata?: Meta;\n}\n' +
          'export interface SloopList {\n  items: Frigate[];\n}\n',
      ),
    ).toEqual(['ships.example.com_frigates.yaml']);
  });

  it('reports a type declared twice, whose second declaration would be left out, and counts a kind once', async () => {
    const { diagnostics } = await generated(
      META +
        'export interface FrigateSpec {\n  speed?: number;\n}\n' +
        'export interface FrigateSpec {\n  crew?: number;\n}\n' +
        'export interface Frigate {\n  apiVersion: string;\n  kind: string;\n  metadata?: Meta;\n  spec?: FrigateSpec;\n}\n' +
        'export interface Sloop {\n  apiVersion: string;\n  kind: string;\n}\n' +
        'export interface Sloop {\n  metadata?: Meta;\n}\n',
    );
    expect(diagnostics.map((d) => `${d.line}: ${d.code}: ${d.message}`)).toEqual([
      "4: unsupported-type: FrigateSpec is declared 2 times (also at line 7), which TypeScript merges into one type; kubesmith reads a type's schema, description and markers from one declaration",
      "16: unsupported-type: Sloop is declared 2 times (also at line 20), which TypeScript merges into one type; kubesmith reads a type's schema, description and markers from one declaration",
    ]);
  });

  it('writes nothing from the command line when a type is declared twice, and says where and what to do', async () => {
    const root = await apiDirectory(
      META +
        'export interface FrigateSpec {\n  speed?: number;\n}\n' +
        'export interface FrigateSpec {\n  crew?: number;\n}\n' +
        'export interface Frigate {\n  apiVersion: string;\n  kind: string;\n  metadata?: Meta;\n  spec?: FrigateSpec;\n}\n',
    );
    const result = await run(root, 'manifests', '--paths', 'src/api', '--output-dir', 'crds');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'src/api/ships/v1/types.ts:4:1: error: FrigateSpec is declared 2 times (also at line 7)',
    );
    expect(result.stderr).toContain('hint: write the members of all of them in one declaration');
    expect(await readdir(root)).toEqual(['src']);
  });
});
