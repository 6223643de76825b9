/**
 * The imported files are formatted without Prettier where the emitter's own layout is Prettier's
 * (src/importer/format.ts): these tests hold the emitter to Prettier's output on the whole import corpus,
 * and check that a project with other settings still gets files its `prettier --check` passes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as prettier from 'prettier';
import { afterEach, describe, expect, it } from 'vitest';
import { emitVersion } from '../../src/importer/emit.js';
import { emitterLayoutHolds, fitsLayout } from '../../src/importer/format.js';
import { readCrds } from '../../src/importer/index.js';
import { removeTemp, run, tempDir } from '../helpers/run.js';
import { corpus } from './corpus.js';

const REPO = path.resolve(import.meta.dirname, '../..');
/** A new project's settings, as `init` writes them. */
const PROJECT_SETTINGS = JSON.parse(
  readFileSync(path.join(REPO, 'templates/init/dot-prettierrc.json.hbs'), 'utf8'),
) as prettier.Options;

const corpusCrds = () => readCrds({ inputs: corpus(), cwd: REPO, stdin: process.stdin, outDir: REPO });

/** The files under `dir`, relative to it, with their text. */
function filesUnder(dir: string): [string, string][] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .map((f) => [f, readFileSync(path.join(dir, f), 'utf8')]);
}

describe("the emitter's layout is Prettier's", () => {
  it('new projects use the settings the emitter assumes', () => {
    expect(emitterLayoutHolds(PROJECT_SETTINGS)).toBe(true);
    expect(emitterLayoutHolds({ ...PROJECT_SETTINGS, printWidth: 80 })).toBe(true);
    expect(emitterLayoutHolds({ ...PROJECT_SETTINGS, singleQuote: false })).toBe(false);
    expect(emitterLayoutHolds({ ...PROJECT_SETTINGS, semi: false })).toBe(false);
    expect(emitterLayoutHolds({ ...PROJECT_SETTINGS, plugins: ['prettier-plugin-x'] })).toBe(false);
  });

  for (const printWidth of [110, 80]) {
    it(`every kind of the import corpus is, byte for byte, what Prettier makes of it (printWidth ${printWidth})`, async () => {
      const options = { ...PROJECT_SETTINGS, printWidth, parser: 'typescript' };
      const leftToPrettier: string[] = [];
      let checked = 0;
      for (const crd of await corpusCrds()) {
        for (const version of crd.versions) {
          const emitted = emitVersion(crd, version, '', printWidth);
          if (!fitsLayout(emitted, printWidth)) {
            leftToPrettier.push(`${crd.kind} ${version.name}`);
            continue;
          }
          checked++;
          const formatted = await prettier.format(emitted, options);
          if (formatted !== emitted) {
            // The first line that differs, for a readable failure.
            const a = emitted.split('\n');
            const b = formatted.split('\n');
            const at = a.findIndex((line, i) => line !== b[i]);
            expect(`${crd.kind} ${version.name}:${at + 1}: ${a[at]}`).toBe(
              `${crd.kind} ${version.name}:${at + 1}: ${b[at]}`,
            );
          }
        }
      }
      if (printWidth === 110) {
        // A new project's width: the emitter lays out every kind but what it leaves to Prettier on
        // purpose: a map of a long union, a named type and null that cannot fit, and text other than
        // ASCII (hand/layouts.hand.example.com.yaml).
        expect(leftToPrettier).toEqual(['LayoutFallback v1']);
        expect(checked).toBeGreaterThanOrEqual(35);
      } else {
        // Narrower: lines the emitter cannot lay out (long names, maps) make Prettier run on more.
        expect(checked).toBeGreaterThanOrEqual(10);
      }
    }, 120_000);
  }
});

describe('import crd formats with the settings of the directory it writes to', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await removeTemp(dir);
    dir = undefined;
  });

  const cases: [string, prettier.Options][] = [
    ["a new project's", PROJECT_SETTINGS],
    ['printWidth 80 and double quotes', { printWidth: 80, singleQuote: false }],
    ['no semicolons and tabs', { semi: false, useTabs: true }],
  ];
  for (const [name, settings] of cases) {
    it(`${name} settings: every file is what Prettier makes of it, so prettier --check passes`, async () => {
      dir = await tempDir('format');
      await writeFile(path.join(dir, '.prettierrc'), JSON.stringify(settings));
      const imported = await run(dir, 'import', 'crd', ...corpus(), '--out', 'types');
      expect(imported.stderr).not.toMatch(/error/);
      expect(imported.code).toBe(0);
      const files = filesUnder(path.join(dir, 'types'));
      expect(files.length).toBeGreaterThanOrEqual(40);
      for (const [file, text] of files) {
        const filepath = path.join(dir, 'types', file);
        expect(await prettier.format(text, { ...settings, filepath }), file).toBe(text);
      }
    }, 120_000);
  }

  it("no settings file in any directory above: a new project's settings, as Prettier would find none", async () => {
    dir = await tempDir('format');
    // Prettier's own answer for the directory is no settings: the import then does without loading it.
    expect(await prettier.resolveConfig(path.join(dir, 'types/x.ts'))).toBeNull();
    const imported = await run(dir, 'import', 'crd', ...corpus(), '--out', 'types');
    expect(imported.code).toBe(0);
    const files = filesUnder(path.join(dir, 'types'));
    expect(files.length).toBeGreaterThanOrEqual(40);
    for (const [file, text] of files) {
      const filepath = path.join(dir, 'types', file);
      expect(await prettier.format(text, { ...PROJECT_SETTINGS, filepath }), file).toBe(text);
    }
  }, 120_000);
});
