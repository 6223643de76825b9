/** The corpus of the import round trip (test/fixtures/import/README.md). */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { CrdDocument } from './compare.js';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures');

/** The corpus (real: public CRDs from Go modules, see test/fixtures/import/README.md): controller-gen's CRDs of the golden fixtures and of the import corpus, and hand-written ones. */
export function corpus(): string[] {
  const files: string[] = [];
  for (const fixture of readdirSync(FIXTURES)) {
    const dir = path.join(FIXTURES, fixture, 'controller-gen/config/crd/bases');
    try {
      for (const file of readdirSync(dir)) if (file.endsWith('.yaml')) files.push(path.join(dir, file));
    } catch {
      // a fixture without controller-gen's output
    }
  }
  for (const sub of ['import/controller-gen', 'import/hand', 'import/real']) {
    const dir = path.join(FIXTURES, sub);
    try {
      for (const file of readdirSync(dir)) if (file.endsWith('.yaml')) files.push(path.join(dir, file));
    } catch {
      // not there
    }
  }
  return files.sort();
}

/** The CRD documents of a corpus file. */
export function crdDocuments(text: string): CrdDocument[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as (CrdDocument & { kind?: string }) | null)
    .filter((d): d is CrdDocument & { kind?: string } => d?.kind === 'CustomResourceDefinition');
}
