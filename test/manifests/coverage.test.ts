/**
 * The coverage table of docs/manifests.md ("DESIGN §3: markers") against the marker registry and the
 * golden fixtures: every marker kubesmith defines has a row, and every fixture a row names uses it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFINITIONS } from '../../src/manifests/registry.js';
import { ITEMS_PREFIX } from '../../src/schema/markers.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FIXTURES = path.join(ROOT, 'test/fixtures');
const DOC = readFileSync(path.join(ROOT, 'docs/manifests.md'), 'utf8');
const fixtureNames = new Set(
  readdirSync(FIXTURES).filter((n) => existsSync(path.join(FIXTURES, n, 'PROJECT'))),
);

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}
const sources = new Map(
  [...fixtureNames].map((n) => [
    n,
    files(path.join(FIXTURES, n, 'src'))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n'),
  ]),
);

/** The rows of the markdown table under `heading`, as cells. */
function tableRows(heading: string): string[][] {
  const start = DOC.indexOf(heading);
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const lines = DOC.slice(start).split('\n').slice(1);
  const first = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  }
  return rows;
}

const fixturesIn = (cell: string): string[] =>
  (cell.match(/[a-z0-9-]+(?:_error)?/g) ?? []).filter((w) => fixtureNames.has(w));
const uses = (fixture: string, marker: string): boolean =>
  new RegExp(`\\+${marker.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z-])`).test(
    sources.get(fixture) ?? '',
  );

describe('the coverage table of docs/manifests.md', () => {
  const rows = tableRows('### DESIGN §3: markers');
  const byMarker = new Map(rows.map((cells) => [(cells[0] ?? '').replace(/[`+]/g, ''), cells]));

  it('has a row for every marker kubesmith defines, naming a fixture', () => {
    const defined = [
      ...new Set(
        DEFINITIONS.filter((d) => !d.ignored && !d.name.startsWith(ITEMS_PREFIX)).map((d) => d.name),
      ),
    ];
    const missing = defined.filter((name) => fixturesIn(byMarker.get(name)?.[1] ?? '').length === 0);
    expect(missing).toEqual([]);
  });

  it('names fixtures that use the marker (and its items: variant) in their sources', () => {
    const wrong: string[] = [];
    for (const [name, cells] of byMarker) {
      for (const fixture of fixturesIn(cells[1] ?? ''))
        if (!uses(fixture, name)) wrong.push(`${fixture} lacks +${name}`);
      const itemsName = ITEMS_PREFIX + name.slice('kubebuilder:validation:'.length);
      const hasItems = DEFINITIONS.some((d) => d.name === itemsName);
      const itemsFixtures = fixturesIn(cells[2] ?? '');
      if (hasItems && itemsFixtures.length === 0) wrong.push(`no fixture for +${itemsName}`);
      for (const fixture of itemsFixtures)
        if (!uses(fixture, itemsName)) wrong.push(`${fixture} lacks +${itemsName}`);
    }
    expect(wrong).toEqual([]);
  });

  it('names existing fixtures for every DESIGN §4 row', () => {
    const rows4 = tableRows('### DESIGN §4: TypeScript to schema');
    expect(rows4.length).toBeGreaterThanOrEqual(18);
    for (const cells of rows4) {
      const cell = cells[1] ?? '';
      expect(fixturesIn(cell).length > 0 || cell.includes('every CRD fixture'), cells[0]).toBe(true);
    }
  });
});
