/**
 * Golden fixtures: every `test/fixtures/<case>/` is a project (PROJECT + src/) whose generated manifests
 * must equal `expected/` byte for byte and, where a Go twin exists, `controller-gen/` as data.
 * `<case>_error/` fixtures must produce exactly the diagnostics in `expected-diagnostics.txt`.
 *
 * Regenerate the goldens (then review the diff): UPDATE_GOLDEN=1 npx vitest run test/manifests
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { formatDiagnostic, generateManifests, isError } from '../../src/manifests/index.js';
import { GENERATED_HEADER } from '../../src/manifests/yaml.js';
import { crdSchemaProblems, type JSONSchemaProps } from '../../src/schema/index.js';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures');
const UPDATE = process.env['UPDATE_GOLDEN'] === '1';
const TEST_VERSION = '0.0.0-test';

const cases = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(path.join(FIXTURES, d.name, 'PROJECT')))
  .map((d) => d.name)
  .sort();

function listFiles(dir: string, base = dir): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? listFiles(path.join(dir, d.name), base) : [path.relative(base, path.join(dir, d.name))],
  );
}

/** controller-gen's documents with its version annotation replaced by ours. */
function normalizedDocuments(text: string): unknown[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Record<string, unknown> | null)
    .filter((d): d is Record<string, unknown> => d !== null)
    .map((doc) => {
      const metadata = doc['metadata'] as { annotations?: Record<string, string> } | undefined;
      const annotations = metadata?.annotations;
      if (annotations) {
        delete annotations['controller-gen.kubebuilder.io/version'];
        delete annotations['kubesmith.dev/version'];
        if (Object.keys(annotations).length === 0) delete metadata.annotations;
      }
      return doc;
    });
}

/** One generation per fixture, shared by its tests. */
const results = new Map<string, ReturnType<typeof generateManifests>>();
function generate(root: string): ReturnType<typeof generateManifests> {
  let result = results.get(root);
  if (!result) {
    result = generateManifests({ root, version: TEST_VERSION });
    results.set(root, result);
  }
  return result;
}

describe.each(cases.filter((c) => !c.endsWith('_error')))('fixture %s', (name) => {
  const root = path.join(FIXTURES, name);

  it('generates the expected files without diagnostics', async () => {
    const { files, diagnostics } = await generate(root);
    // Warnings (a CRD too large for client-side apply) are allowed; errors are not.
    expect(diagnostics.filter(isError).map(formatDiagnostic)).toEqual([]);
    const expectedDir = path.join(root, 'expected');
    if (UPDATE) {
      for (const file of files) {
        mkdirSync(path.dirname(path.join(expectedDir, file.path)), { recursive: true });
        writeFileSync(path.join(expectedDir, file.path), file.content);
      }
    }
    expect(files.map((f) => f.path).sort()).toEqual(listFiles(expectedDir).sort());
    for (const file of files) {
      expect(file.content, file.path).toBe(readFileSync(path.join(expectedDir, file.path), 'utf8'));
    }
  });

  it('emits CRDs that pass the structural-schema checker', async () => {
    const { files } = await generate(root);
    for (const file of files.filter((f) => f.path.startsWith('config/crd/'))) {
      for (const doc of normalizedDocuments(file.content)) {
        const versions = (
          doc as { spec: { versions: { name: string; schema: { openAPIV3Schema: JSONSchemaProps } }[] } }
        ).spec.versions;
        for (const version of versions) {
          expect(crdSchemaProblems(version.schema.openAPIV3Schema), `${file.path} ${version.name}`).toEqual(
            [],
          );
        }
      }
    }
  });

  const oracle = path.join(root, 'controller-gen');
  it.runIf(existsSync(oracle))('agrees with controller-gen on the Go twin', async () => {
    const { files } = await generate(root);
    for (const rel of listFiles(oracle)) {
      const ours = files.find((f) => f.path === rel.split(path.sep).join('/'));
      expect(ours, `kubesmith generates ${rel}`).toBeDefined();
      const theirs = readFileSync(path.join(oracle, rel), 'utf8');
      expect(normalizedDocuments(ours?.content ?? '')).toEqual(normalizedDocuments(theirs));
      // Byte for byte too, but for our header line and each tool's version annotation.
      const withoutVersions = (text: string) =>
        text
          .split('\n')
          .filter((l) => !/^\s+(kubesmith\.dev|controller-gen\.kubebuilder\.io)\/version: /.test(l))
          .join('\n');
      expect(withoutVersions(ours?.content ?? '')).toBe(`${GENERATED_HEADER}\n${withoutVersions(theirs)}`);
    }
  });
});

describe.each(cases.filter((c) => c.endsWith('_error')))('error fixture %s', (name) => {
  const root = path.join(FIXTURES, name);
  it('reports the expected diagnostics', async () => {
    const { diagnostics } = await generate(root);
    // At least one error, so the CLI writes nothing (test/manifests/cli.test.ts checks that it does not).
    expect(diagnostics.some(isError)).toBe(true);
    const actual = `${diagnostics.map(formatDiagnostic).join('\n')}\n`;
    const file = path.join(root, 'expected-diagnostics.txt');
    if (UPDATE) writeFileSync(file, actual);
    expect(actual).toBe(readFileSync(file, 'utf8'));
  });
});
