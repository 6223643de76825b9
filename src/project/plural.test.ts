import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { crdDefaultPlural, kubebuilderPlural } from './plural.js';

/** flect v1.0.3's answers (test/fixtures/plurals/go prints them): kind, kubebuilder's, controller-gen's. */
const TABLE = readFileSync(
  path.resolve(import.meta.dirname, '../../test/fixtures/plurals/plurals.tsv'),
  'utf8',
)
  .split('\n')
  .filter((line) => line !== '' && !line.startsWith('#'))
  .map((line) => line.split('\t') as [string, string, string]);

describe('plurals', () => {
  it('the table is large enough to mean something', () => {
    expect(TABLE.length).toBeGreaterThan(1700);
  });

  it("agree with kubebuilder's (flect.Pluralize of the lower-cased kind) on every row", () => {
    const wrong = TABLE.filter(([kind, plural]) => kubebuilderPlural(kind) !== plural).map(
      ([kind, plural]) => `${kind}: ${kubebuilderPlural(kind)}, flect says ${plural}`,
    );
    expect(wrong).toEqual([]);
  });

  it("agree with controller-gen's (flect.Pluralize of the kind, lower-cased) on every row", () => {
    const wrong = TABLE.filter(([kind, , plural]) => crdDefaultPlural(kind) !== plural).map(
      ([kind, , plural]) => `${kind}: ${crdDefaultPlural(kind)}, flect says ${plural}`,
    );
    expect(wrong).toEqual([]);
  });

  it('differ between the two where flect does', () => {
    expect(kubebuilderPlural('ClusterDNS')).toBe('clusterdns');
    expect(crdDefaultPlural('ClusterDNS')).toBe('clusterdnses');
    expect(kubebuilderPlural('Video')).toBe('videoes');
    expect(kubebuilderPlural('Schema')).toBe('schemas');
    expect(kubebuilderPlural('Quorum')).toBe('quorums');
  });
});
