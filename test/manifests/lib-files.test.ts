/**
 * The lib files the build ships (scripts/lib-files.mjs) are those @ts-morph/common serves, and the built
 * generator reads them instead of loading @ts-morph/common's module.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { getLibFiles, ts } from '@ts-morph/common';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../helpers/build.js';
import { SUBSET_LIB, subsetLibText } from '../../src/typescript/lib-subset.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const temp: string[] = [];
afterAll(async () => {
  for (const dir of temp) await rm(dir, { recursive: true, force: true });
});

beforeAll(async () => {
  await buildCli();
  await execa('node', ['scripts/lib-files.mjs'], { cwd: repo });
}, 120_000);

describe('the lib files shipped with the CLI', () => {
  it('are the texts ts-morph serves, with their TypeScript version', async () => {
    const out = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-libs-'));
    temp.push(out);
    await writeFile(path.join(out, 'stale.d.ts'), 'left from an earlier build');
    await execa('node', ['scripts/lib-files.mjs', out], { cwd: repo });
    const files = getLibFiles();
    expect((await readdir(out)).sort()).toEqual(
      [...files.map((f) => f.fileName), 'subset', 'typescript-version'].sort(),
    );
    for (const { fileName, text } of files)
      expect(await readFile(path.join(out, fileName), 'utf8')).toBe(text);
    expect(await readFile(path.join(out, 'typescript-version'), 'utf8')).toBe(`${ts.version}\n`);
    // The generator knows a library file by this directive (isLibFile in src/schema/resolve.ts).
    for (const { fileName, text } of files)
      expect(text.startsWith('/// <reference no-default-lib="true"/>'), fileName).toBe(true);
    // The smaller lib.es5.d.ts, as the generator would make it from the full one (lib-subset.ts).
    expect(await readdir(path.join(out, 'subset'))).toEqual([SUBSET_LIB]);
    const es5 = files.find((f) => f.fileName === SUBSET_LIB)!.text;
    expect(await readFile(path.join(out, 'subset', SUBSET_LIB), 'utf8')).toBe(subsetLibText(es5));
  });

  it('are read by the built generator, which then never loads @ts-morph/common', async () => {
    const hook = path.join(await mkdtemp(path.join(os.tmpdir(), 'kubesmith-libs-')), 'hook.cjs');
    temp.push(path.dirname(hook));
    await writeFile(
      hook,
      `process.on('exit', () => { for (const f of Object.keys(require.cache)) if (/ts-morph-common|lib[\\\\/]lib\\./.test(f)) process.stderr.write('LOADED ' + f + '\\n'); });`,
    );
    const fixture = path.join(repo, 'test/fixtures/crd-basic');
    const result = await execa(
      'node',
      [path.join(repo, 'bin/kubesmith.js'), 'manifests', '--crd', '--stdout'],
      {
        cwd: fixture,
        env: { NODE_OPTIONS: `--require ${hook}` },
        reject: false,
      },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/LOADED .*ts-morph-common/);
    const expected = await readFile(
      path.join(fixture, 'expected/config/crd/bases/webapp.example.com_guestbooks.yaml'),
      'utf8',
    );
    // The CRD as the golden file has it, but for the version annotation (execa drops the last newline).
    const strip = (text: string) => text.replace(/kubesmith\.dev\/version: .*/g, '').trimEnd();
    expect(strip(result.stdout)).toBe(strip(expected));
  });
});
