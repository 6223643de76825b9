/**
 * The fast block-YAML reader of `kubesmith import crd` (src/importer/block-yaml.ts) against the yaml package
 * it stands in for: on every YAML file of the repository (the import corpus, controller-gen's CRDs of the
 * fixtures, the golden project, the examples) and on a generated corpus of tricky documents, it either
 * gives exactly the values `parseAllDocuments(text).map(d => d.toJS())` gives, or leaves the text to the
 * yaml package; it never accepts a text the yaml package refuses. What it leaves to the yaml package keeps
 * its values and its positioned errors.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { KubesmithError } from '../../src/errors.js';
import { readBlockYaml, resolvePlain } from '../../src/importer/block-yaml.js';
import { parseDocuments } from '../../src/importer/read.js';

const REPO = path.resolve(import.meta.dirname, '../..');

/** What the yaml package gives for `text`, as the importer reads it, or 'error'. */
function yamlValues(text: string): unknown[] | 'error' {
  const documents = parseAllDocuments(text);
  const list = Array.isArray(documents) ? documents : [documents];
  if (list.some((d) => d.errors.length > 0)) return 'error';
  try {
    return list.map((d) => d.toJS({ maxAliasCount: 100 }) as unknown);
  } catch {
    return 'error';
  }
}

/** Why the fast reader's answer for `text` is wrong, or undefined when it is right (or leaves the text). */
function disagreement(text: string): string | undefined {
  const fast = readBlockYaml(text);
  if (fast === undefined) return undefined;
  const full = yamlValues(text);
  if (full === 'error') return 'the fast reader accepts a text the yaml package refuses';
  if (!isDeepStrictEqual(fast, full))
    return `values differ:\nfast: ${JSON.stringify(fast)}\nyaml: ${JSON.stringify(full)}`;
  return undefined;
}

function yamlFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) yamlFiles(full, out);
    else if (/\.ya?ml$/.test(entry)) out.push(full);
  }
  return out;
}

describe('the block-YAML reader on the repository', () => {
  const files = ['test', 'testdata', 'examples'].flatMap((dir) => yamlFiles(path.join(REPO, dir)));

  it('gives the yaml package values for every YAML file, and reads the controller-gen CRDs itself', () => {
    expect(files.length).toBeGreaterThan(100);
    const wrong = files.flatMap((file) => {
      const problem = disagreement(readFileSync(file, 'utf8'));
      return problem ? [`${path.relative(REPO, file)}: ${problem}`] : [];
    });
    expect(wrong).toEqual([]);
    // The shapes the bench imports (controller-gen's CRDs, old and new styles, the 640 kB Gadget with its
    // multi-line plain descriptions) are read without the yaml package.
    const controllerGen = files.filter((f) =>
      /import[/\\](controller-gen|real)[/\\]|controller-gen[/\\]config[/\\]crd/.test(f),
    );
    expect(controllerGen.length).toBeGreaterThan(10);
    const leftOver = controllerGen.filter((f) => readBlockYaml(readFileSync(f, 'utf8')) === undefined);
    expect(leftOver.map((f) => path.relative(REPO, f))).toEqual([]);
  });
});

/** A deterministic pseudo-random generator (mulberry32). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TRICKY_SCALARS = [
  'yes',
  'no',
  'on',
  'off',
  'y',
  '0b1',
  '0o7',
  '0o8',
  '07',
  '08',
  '0x1F',
  '0xG',
  '1e3',
  '1E-3',
  '.5',
  '5.',
  '-.inf',
  '+.Inf',
  '.NaN',
  '.nan',
  '~',
  'null',
  'Null',
  'NULL',
  'nULL',
  'true',
  'True',
  'TRUE',
  'tRUE',
  'False',
  '-0',
  '+12',
  '1.50',
  '1_000',
  '12:30',
  'a:b',
  'a: b',
  'a #b',
  'a#b',
  '#x',
  '-',
  '--',
  '---',
  '...',
  '-x',
  '- x',
  ':x',
  '?x',
  '? x',
  'http://x/y#z',
  '',
  ' lead',
  'trail ',
  "it's",
  'say "hi"',
  'back\\slash',
  'tab\there',
  'ünï €',
  '[x]',
  '{y}',
  '[]',
  '{}',
  'a, b',
  '*star',
  '&amp',
  '!bang',
  '%pct',
  '@at',
  '`tick',
  '|',
  '>',
  "'",
  '"',
  'line\nbreak',
  'two\n\nbreaks',
  'end\n',
  '\nstart',
  ' ',
  'a  b',
  '<<',
  '__proto__',
  'x'.repeat(90),
  'word '.repeat(30).trim(),
];
const KEYS = [
  'a',
  'b',
  'name',
  'x-kubernetes-int-or-string',
  'app.kubernetes.io/name',
  'a b',
  '"q"',
  "'s'",
  '"a:b"',
  '"x\\ty"',
  '1',
  'true',
  '~',
  '<<',
  '__proto__',
  'k=v',
  'dup',
  'dup',
  '"dup"',
  '$ref',
  '-a',
  '.5',
];
const DOUBLE_QUOTED_SOURCES = [
  '"\\x41\\u00e9\\U0001F600"',
  '"\\/ \\N\\_\\L\\P\\e\\0"',
  '"\\q"',
  '"\\x4"',
  '"\\uD83D\\uDE00"',
  '"a\\\n    b"',
  '"a  \n    b\n\n    c"',
  '"tab\\tend"',
  '"unterminated',
  '"\\U00110000"',
];

const VALID_DOUBLE_QUOTED_SOURCES = DOUBLE_QUOTED_SOURCES.filter(
  (source) => !source.includes('\n') && parseAllDocuments(`v: ${source}`)[0]?.errors.length === 0,
);

interface Writer {
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
  /** Keys unique and plain, so that most texts are valid YAML the fast reader takes. */
  tame: boolean;
  serial: number;
}

/** Scalars a tame text's plain style may hold as they are (they still exercise the core schema). */
const PLAIN_SAFE = TRICKY_SCALARS.filter(
  (s) => /^[-+.~0-9A-Za-z<_hüw]/.test(s) && !/: | #|^- |\n|^-$|^---|^\.\.\.|[ :]$|^ |\t/.test(s),
);

function scalarSource(value: string, indent: number, w: Writer): string {
  const pad = ' '.repeat(indent + 2);
  const style = w.pick(['plain', 'plain', 'single', 'double', 'block', 'folded-plain', 'raw-double']);
  if (w.tame && (style === 'plain' || style === 'folded-plain') && !PLAIN_SAFE.includes(value))
    value = w.pick(PLAIN_SAFE);
  if (w.tame) value = value.trim() === '' ? 'x' : value.replace(/\t/g, ' ');
  switch (style) {
    case 'single':
      return `'${value.replace(/'/g, "''").replace(/\n/g, `\n${pad}`)}'`;
    case 'double':
      return JSON.stringify(value);
    case 'raw-double':
      return w.pick(w.tame ? VALID_DOUBLE_QUOTED_SOURCES : DOUBLE_QUOTED_SOURCES);
    case 'block': {
      const header = w.tame
        ? w.pick(['|', '|-', '>', '>-'])
        : w.pick(['|', '|-', '|+', '>', '>-', '>+', '|2', '>1-', '|+2']);
      const lines: string[] = value
        .split('\n')
        .map((line) => (line === '' ? (!w.tame && w.chance(0.2) ? pad : '') : pad + line));
      if (!lines.some((line) => line !== '')) lines.push(pad + 'text');
      if ((!w.tame || header.startsWith('|')) && w.chance(0.2)) lines.push(pad + '  more indented');
      if (!w.tame && w.chance(0.2)) lines.push('');
      return `${header}${w.chance(0.2) ? ' # header comment' : ''}\n${lines.join('\n')}`;
    }
    case 'folded-plain':
      return value.split(' ').join(w.chance(0.5) ? `\n${pad}` : `\n\n${pad}`);
    default:
      return value;
  }
}

function nodeSource(depth: number, indent: number, w: Writer, inMapping: boolean): string {
  const kind =
    depth > 3
      ? 'scalar'
      : depth === 0 && w.tame
        ? w.pick(['map', 'seq'])
        : w.pick(['map', 'map', 'seq', 'scalar', 'empty']);
  if (kind === 'empty') return w.pick(['', ' []', ' {}', ' ~', ' # nothing']);
  if (kind === 'scalar') return ' ' + scalarSource(w.pick(TRICKY_SCALARS), indent, w);
  // A sequence that is a mapping's value may stand at the key's indentation.
  const childIndent = kind === 'seq' && inMapping && w.chance(0.5) ? indent : indent + 2;
  const pad = ' '.repeat(childIndent);
  const lines: string[] = [];
  const count = 1 + Math.floor(w.chance(0.5) ? 3 : 1);
  for (let i = 0; i < count; i++) {
    if (w.chance(0.1)) lines.push(w.pick(['', `${pad}# a comment`, '#col 0', w.tame ? '' : `${pad}  `]));
    const child = nodeSource(depth + 1, childIndent, w, kind === 'map');
    const comment = w.chance(0.1) ? ' # trailing' : '';
    const key = w.tame ? `k${w.serial++}` : w.pick(KEYS);
    if (kind === 'map') lines.push(`${pad}${key}:${child}${child.includes('\n') ? '' : comment}`);
    else lines.push(`${pad}-${child}${child.includes('\n') ? '' : comment}`);
  }
  return '\n' + lines.join('\n');
}

function documentSource(w: Writer): string {
  const body = nodeSource(0, -2, w, false).replace(/^\n/, '');
  const parts: string[] = [];
  if (w.chance(0.3))
    parts.push(
      w.tame ? w.pick(['---', '--- # start']) : w.pick(['---', '--- # start', '--- !tag', '%YAML 1.2\n---']),
    );
  parts.push(body);
  if (w.chance(0.2)) parts.push('...');
  return parts.join('\n');
}

function corpusText(w: Writer): string {
  const documents = [documentSource(w)];
  while (w.chance(0.3)) documents.push(w.chance(0.2) ? '' : documentSource(w));
  const separator = w.tame ? '\n---\n' : w.pick(['\n---\n', '\n', '\n...\n---\n']);
  let text = documents.join(separator) + (w.chance(0.8) ? '\n' : '');
  if (w.tame) return text;
  if (w.chance(0.05)) text = text.replace(/\n/g, '\r\n');
  if (w.chance(0.05)) text = '\ufeff' + text;
  if (w.chance(0.05)) text = text.replace(/\n {2}/, '\n\t');
  if (w.chance(0.05)) text = text + '&anchor: 1\nref: *anchor\n';
  return text;
}

/** Texts on the edges of what the fast reader takes, each compared with the yaml package. */
const EDGE_CASES = [
  // A comment ends a plain scalar: a more-indented line after it is not its continuation.
  '- False\n- a #b\n ~\n',
  'k: a # c\n  more\n',
  'k: a\n  # c\n  more\n',
  'x: 1\n  # c\n',
  // Continuation lines may start with what starts other nodes elsewhere.
  'k: a\n  - b\n  "c\n  [d]\n',
  'k: a\n\n\n  b\n',
  'k: a\n  : b\n',
  'k: a\n  b: c\n',
  // Quoted scalars over several lines, escapes, and what may follow them.
  'k: "a\\\n    b"\n',
  'k: "a  \n    b\n\n    c"\n',
  "k: 'a''b\n\n  c '\n",
  'k: "a" # c\n',
  'k: "a"# c\n',
  'k: "a": b\n',
  'k: "\\x41\\u00e9\\U0001F600\\N\\_"\n',
  'k: "\\q"\n',
  '"k": 1\n"k": 2\n',
  'k: 1\n"k": 2\n',
  // Block scalars: chomping, leading and trailing empty lines, more-indented lines, what ends them.
  'a: |+\n  x\n\n\nb: 1\n',
  'a: |-\n\n  x\n   y\n\n  z\nb: 1\n',
  'a: >\n  x\n  y\n\n  z\n',
  'a: >\n  x\n    y\n  z\n',
  'a: |\n  # not a comment\n  ---\nb: 1\n',
  'a: |\n   \n  x\n',
  'a: |2\n   x\n',
  '- |\n x\n- >-\n y\n',
  // Keys: numbers, booleans, nulls, merge keys, __proto__, long ones.
  '1: a\n',
  'true: a\n',
  '~: a\n',
  '<<: a\n',
  '__proto__: a\n',
  `${'k'.repeat(1100)}: a\n`,
  // Documents: markers, empty documents, `...` without a document, directives.
  '---\n---\na: 1\n...\n---\n',
  '...\n',
  'a: 1\n...\n...\n',
  '--- a: 1\n',
  '%YAML 1.2\n---\na: 1\n',
  'a: 1\n---\nb\n',
  // Collections: sequences at a key's indentation, compact ones, empty entries, wrong indentation.
  'a:\n- 1\n- - 2\n  - 3\n-\nb: 2\n',
  '- a: 1\n  b:\n  - 2\n- c\n',
  'a: 1\n b: 2\n',
  'a:\n  b: 1\n c: 2\n',
  '- a\n  - b\n',
  'a: []\nb: {}\nc: [ ]\nd: [1]\n',
];

describe('the block-YAML reader on edge cases', () => {
  it.each(EDGE_CASES)('%j: the yaml package values, or left to it', (text) => {
    expect(disagreement(text)).toBeUndefined();
  });
});

describe('the block-YAML reader on generated documents', () => {
  it('agrees with the yaml package on 4000 generated texts, reading many of them itself', () => {
    const next = random(25);
    const w: Writer = {
      pick: (items) => items[Math.floor(next() * items.length)] as (typeof items)[number],
      chance: (p) => next() < p,
      tame: false,
      serial: 0,
    };
    let readFast = 0;
    const wrong: string[] = [];
    for (let i = 0; i < 4000; i++) {
      w.tame = i % 2 === 0;
      const text = corpusText(w);
      const problem = disagreement(text);
      if (problem) wrong.push(`${JSON.stringify(text)}\n${problem}`);
      if (readBlockYaml(text) !== undefined) readFast++;
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    // The corpus is meant to exercise the fast reader, not only its fallback.
    expect(readFast).toBeGreaterThan(1000);
  });

  it('resolves plain scalars as the core schema does', () => {
    expect(PLAIN_SAFE.length).toBeGreaterThan(40);
    for (const scalar of PLAIN_SAFE) {
      const [document] = parseAllDocuments(`v: ${scalar}`);
      expect(document?.errors).toEqual([]);
      expect(resolvePlain(scalar), scalar).toStrictEqual((document?.toJS() as { v: unknown }).v);
    }
  });
});

describe('what the block-YAML reader leaves to the yaml package', () => {
  const read = (text: string) => parseDocuments([{ name: 'in.yaml', text }]).map((d) => d.value);
  const failure = (text: string) => {
    try {
      read(text);
    } catch (error) {
      expect(error).toBeInstanceOf(KubesmithError);
      return (error as Error).message;
    }
    throw new Error('no error');
  };

  it('still reads aliases, tags and flow collections with the yaml package', () => {
    const text = 'base: &b {x: [1, 2]}\ncopy: *b\ntagged: !!str 12\n';
    expect(readBlockYaml(text)).toBeUndefined();
    expect(read(text)).toEqual([{ base: { x: [1, 2] }, copy: { x: [1, 2] }, tagged: '12' }]);
  });

  it('still gives malformed YAML its positioned error, with the document number', () => {
    expect(readBlockYaml('a: 1\n---\nb: [\n')).toBeUndefined();
    expect(failure('a: 1\n---\nb: [\n')).toMatch(/^in\.yaml:4:1: document 2: malformed YAML: /);
    expect(failure('a: 1\na: 2\n')).toBe('in.yaml:2:1: document 1: malformed YAML: Map keys must be unique');
    expect(failure('a: 1\n  b: 2\n')).toBe(
      'in.yaml:1:4: document 1: malformed YAML: Nested mappings are not allowed in compact mappings',
    );
  });

  it('still bounds aliases', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 6; i++)
      bomb.push(
        `${'abcdef'[i]}: &${'abcdef'[i]} [${Array(10)
          .fill(`*${'abcdef'[i - 1]}`)
          .join(', ')}]`,
      );
    expect(failure(bomb.join('\n') + '\n')).toMatch(/^in\.yaml: document 1: .*alias/i);
  });

  it('numbers documents as the yaml package does, empty ones included', () => {
    const text = '---\n---\nkind: A\n...\n---\n# only a comment\n---\nkind: B\n';
    expect(readBlockYaml(text)).toEqual([null, { kind: 'A' }, null, { kind: 'B' }]);
    expect(parseDocuments([{ name: 'in.yaml', text }]).map((d) => d.origin.document)).toEqual([2, 4]);
  });
});
