/**
 * The round trip that proves `kubesmith import crd` loses nothing: each CRD of the corpus imported, the
 * TypeScript type-checked under a new project's strict tsconfig, then `kubesmith manifests --paths`
 * makes the CRDs again, which must say what the originals say (compare.ts): 0 differences.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import js from '@eslint/js';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import ts from 'typescript';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTemp, run, tempDir } from '../helpers/run.js';
import { differences, normalizeCrd, type CrdDocument } from './compare.js';
import { corpus, crdDocuments } from './corpus.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const FIXTURES = path.join(REPO, 'test/fixtures');

function strictTypeCheck(dir: string, files: string[]): string[] {
  const config = JSON.parse(readFileSync(path.join(REPO, 'templates/init/tsconfig.json.hbs'), 'utf8')) as {
    compilerOptions: Record<string, unknown>;
  };
  const { options, errors } = ts.convertCompilerOptionsFromJson(
    { ...config.compilerOptions, types: [], lib: ['ES2023'] },
    dir,
  );
  expect(errors).toEqual([]);
  const program = ts.createProgram(files, options);
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file ? path.relative(dir, d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    );
}

/** The problems a new project's ESLint rules (templates/init/eslint.config.js, but the typed ones) find. */
async function lintProblems(cwd: string, files: string[]): Promise<string[]> {
  const eslint = new ESLint({
    cwd,
    overrideConfigFile: true,
    overrideConfig: [
      js.configs.recommended,
      ...(tseslint.configs.recommended as Linter.Config[]),
      { rules: { '@typescript-eslint/consistent-type-imports': 'error' } },
    ],
  });
  const results = await eslint.lintFiles(files);
  return results.flatMap((r) =>
    r.messages.map((m) => `${path.basename(r.filePath)}:${m.line}: ${m.message}`),
  );
}

describe('import crd, then manifests --paths: the round trip', () => {
  let dir: string;
  const files = corpus();

  beforeAll(async () => {
    dir = await tempDir('round-trip');
    // The imported types import @kubesmith/runtime, as in a project.
    await symlink(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  }, 60_000);
  afterAll(async () => {
    await removeTemp(dir);
  });

  it('imports every CRD of the corpus, type-checks strictly, passes the project lint rules, and regenerates each with 0 differences', async () => {
    expect(files.length).toBeGreaterThanOrEqual(8);
    const imported = await run(dir, 'import', 'crd', ...files, '--out', 'types');
    expect(imported.stderr).not.toMatch(/error/);
    expect(imported.code).toBe(0);
    const sources: string[] = [];
    for (const entry of readdirSync(path.join(dir, 'types'), { recursive: true, encoding: 'utf8' }))
      if (entry.endsWith('.ts')) sources.push(path.join(dir, 'types', entry));
    expect(strictTypeCheck(dir, sources)).toEqual([]);
    expect(await lintProblems(dir, sources)).toEqual([]);
    const generated = await run(dir, 'manifests', '--paths', 'types', '--output-dir', 'crds');
    expect(generated.stderr).not.toMatch(/: error: /);
    expect(generated.code).toBe(0);
    const report: Record<string, string[]> = {};
    for (const file of files) {
      for (const original of crdDocuments(readFileSync(file, 'utf8'))) {
        const name = `${original.spec.group}_${String(original.spec.names['plural'])}.yaml`;
        const again = parse(await readFile(path.join(dir, 'crds', name), 'utf8')) as CrdDocument;
        report[`${path.relative(FIXTURES, file)}: ${name}`] = differences(
          normalizeCrd(original),
          normalizeCrd(again),
        );
      }
    }
    expect(Object.keys(report).length).toBeGreaterThanOrEqual(21);
    const failing = Object.fromEntries(Object.entries(report).filter(([, d]) => d.length > 0));
    expect(failing).toEqual({});
  }, 240_000);
});
