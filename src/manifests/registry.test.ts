/**
 * A new marker is one definition (with its effect), one test (a golden fixture using it) and one docs row:
 * the registry and the marker table of docs/manifests.md must name the same markers, and every marker
 * must do something. (test/manifests/coverage.test.ts checks that the fixtures a row names use it.)
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MarkerDefinition } from '../markers/registry.js';
import { ITEMS_PREFIX } from '../schema/markers.js';
import { DEFINITIONS } from './registry.js';

const DOC = readFileSync(path.resolve(import.meta.dirname, '../../docs/manifests.md'), 'utf8');

/** The first cells of the table under `heading`, without backticks and `+`. */
function markerRows(heading: string): string[] {
  const lines = DOC.slice(DOC.indexOf(heading)).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push((line.split('|')[1] ?? '').trim().replace(/[`+]/g, ''));
  }
  return rows;
}

/** Markers whose meaning is read where they matter, by name, rather than applied. */
const READ_BY_NAME = new Map([
  ['kubebuilder:object:root', 'crd.ts: whether a type is a kind'],
  ['kubebuilder:validation:Optional', "context.ts: a version's fields are optional by default (package)"],
  ['kubebuilder:validation:Required', "context.ts: a version's fields are required by default (package)"],
  ['kubesmith:root:required', 'build.ts: what of apiVersion, kind and metadata the root requires'],
  [
    'kubesmith:root:typeMetaDescriptions',
    'build.ts: apiVersion and kind without their standard descriptions',
  ],
]);

const hasEffect = (d: MarkerDefinition): boolean =>
  Boolean(d.schema || d.field || d.directory || d.crd || d.version || d.rbac || d.webhook);

describe('the marker definitions', () => {
  const documented = markerRows('### DESIGN §3: markers');
  const defined = [
    ...new Set(DEFINITIONS.filter((d) => !d.ignored && !d.name.startsWith(ITEMS_PREFIX)).map((d) => d.name)),
  ];

  it('are the markers of the docs table, one row each', () => {
    expect(documented.length).toBeGreaterThan(50);
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual([...defined].sort());
  });

  it('each have help and do something (or are read by name where they matter, or are ignored)', () => {
    const idle = DEFINITIONS.filter((d) => !d.ignored && !hasEffect(d) && !READ_BY_NAME.has(d.name));
    expect(idle.map((d) => d.name)).toEqual([]);
    expect(DEFINITIONS.filter((d) => d.help.trim() === '').map((d) => d.name)).toEqual([]);
    expect(DEFINITIONS.filter((d) => d.ignored && hasEffect(d)).map((d) => d.name)).toEqual([]);
  });

  it('never define one name twice for the same place', () => {
    const seen = new Set<string>();
    const twice: string[] = [];
    for (const d of DEFINITIONS) {
      for (const target of d.targets) {
        const key = `${target} ${d.name}`;
        if (seen.has(key)) twice.push(key);
        seen.add(key);
      }
    }
    expect(twice).toEqual([]);
  });

  it('have an items: variant for each validation marker on fields and types, applying to the items', () => {
    for (const d of DEFINITIONS.filter((d) => d.name.startsWith(ITEMS_PREFIX))) {
      const base = DEFINITIONS.find(
        (b) => b.name === `kubebuilder:validation:${d.name.slice(ITEMS_PREFIX.length)}`,
      );
      expect(base?.schema?.apply, d.name).toBe(d.schema?.apply);
      expect(d.schema?.items, d.name).toBe(true);
    }
  });
});
