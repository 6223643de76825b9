import { describe, expect, it } from 'vitest';
import { Project, ts } from 'ts-morph';
import { Cursor, parseValue, T, type ArgType } from './grammar.js';
import { defaultRegistry } from '../manifests/registry.js';
import { collectFileMarkers } from './collect.js';
import { splitMarker, type Marker } from './registry.js';
import { Report, type Diagnostic } from './diagnostics.js';
import { toYaml } from '../manifests/yaml.js';

const where = { file: 'f.ts', line: 1, col: 1 };
const registry = defaultRegistry();

function value(text: string, type: ArgType = T.any): unknown {
  return parseValue(new Cursor(text), type);
}

function parse(raw: string, target: 'package' | 'type' | 'field' = 'field') {
  return registry.parse(raw, target, where);
}

function parsedValue(raw: string, target: 'package' | 'type' | 'field' = 'field'): unknown {
  const result = parse(raw, target);
  if (!result?.ok) throw new Error(`not parsed: ${JSON.stringify(result)}`);
  return result.marker.value;
}

describe('grammar', () => {
  it('guesses scalars as controller-gen does', () => {
    expect(value('5')).toBe(5);
    expect(value('-5')).toBe(-5);
    expect(value('1.5')).toBe(1.5);
    expect(value('true')).toBe(true);
    expect(value('false')).toBe(false);
    expect(value('trueish')).toBe('trueish');
    expect(value('5m')).toBe('5m');
    expect(value('hello world')).toBe('hello world');
  });

  it('reads the three quotings', () => {
    expect(value('"a,b;c"')).toBe('a,b;c');
    expect(value("'it is'")).toBe('it is');
    expect(value('`^[a-z]{1,3}$`')).toBe('^[a-z]{1,3}$');
    expect(value('"tab\\tquote\\""')).toBe('tab\tquote"');
  });

  it('reads lists in both forms and maps', () => {
    expect(value('a;b;c')).toEqual(['a', 'b', 'c']);
    expect(value('1;2')).toEqual([1, 2]);
    expect(value('{a,b}', T.list(T.string))).toEqual(['a', 'b']);
    expect(value('{a: 1, b: "x"}')).toEqual({ a: 1, b: 'x' });
    expect(value('{}')).toEqual({});
    expect(value('{1,2}')).toEqual([1, 2]);
  });

  it('checks typed values', () => {
    expect(() => value('1.5', T.int)).toThrow(/expected an integer/);
    expect(() => value('abc', T.number)).toThrow(/expected a number/);
    expect(() => value('yes', T.bool)).toThrow(/expected true or false/);
    expect(value('{"a": [1]}', T.json)).toEqual({ a: [1] });
  });

  it('splits names as controller-gen does', () => {
    expect(splitMarker('+kubebuilder:rbac:groups=apps,verbs=get')).toMatchObject({
      name: 'kubebuilder:rbac',
      anonName: 'kubebuilder:rbac:groups',
      rest: 'apps,verbs=get',
    });
    expect(splitMarker('+optional')).toMatchObject({ name: 'optional', anonName: 'optional', rest: '' });
  });
});

describe('registry', () => {
  it('parses anonymous values, flags and named arguments', () => {
    expect(parsedValue('+kubebuilder:validation:Minimum=1')).toBe(1);
    expect(parsedValue('+kubebuilder:validation:Minimum=-1.5')).toBe(-1.5);
    expect(parsedValue('+kubebuilder:validation:Enum=a;b;c')).toEqual(['a', 'b', 'c']);
    expect(parsedValue('+kubebuilder:validation:items:MaxLength=3')).toBe(3);
    expect(parsedValue('+optional')).toBe(true);
    expect(parsedValue('+kubebuilder:default={a: 1}')).toEqual({ a: 1 });
    expect(parsedValue('+default="x"')).toBe('x');
    expect(parsedValue('+k8s:minimum=3 # a comment')).toBe(3);
    expect(
      parsedValue('+kubebuilder:rbac:groups=apps;"",resources=deployments,verbs=get;list', 'package'),
    ).toEqual({ groups: ['apps', ''], resources: ['deployments'], verbs: ['get', 'list'] });
    expect(
      parsedValue(
        '+kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`',
        'type',
      ),
    ).toEqual({ name: 'Ready', type: 'string', JSONPath: '.status.conditions[?(@.type=="Ready")].status' });
    expect(
      parsedValue('+kubebuilder:validation:XValidation:rule="self.a > 0",message="a, positive"', 'type'),
    ).toEqual({ rule: 'self.a > 0', message: 'a, positive' });
    expect(parsedValue('+kubebuilder:resource:path=mice,shortName={m,mi},scope=Cluster', 'type')).toEqual({
      path: 'mice',
      shortName: ['m', 'mi'],
      scope: 'Cluster',
    });
  });

  it('suggests the nearest marker for a misspelling', () => {
    const result = parse('+kubebuilder:validation:Minimun=1');
    expect(result).toMatchObject({
      ok: false,
      code: 'unknown-marker',
      message: 'unknown marker +kubebuilder:validation:Minimun',
      hint: 'did you mean +kubebuilder:validation:Minimum?',
    });
    expect(parse('+optionall')).toMatchObject({ hint: 'did you mean +optional?' });
    expect(parse('+kubebuilder:rbak:groups=apps,verbs=get', 'package')).toMatchObject({
      hint: 'did you mean +kubebuilder:rbac?',
    });
  });

  it('reports misplaced markers', () => {
    expect(parse('+kubebuilder:resource:path=foos', 'field')).toMatchObject({
      ok: false,
      code: 'misplaced-marker',
      message: 'marker +kubebuilder:resource cannot stand on a property',
    });
    expect(parse('+kubebuilder:validation:Minimum=1', 'package')).toMatchObject({
      code: 'misplaced-marker',
    });
  });

  it('reports ill-typed markers with the offset of the bad value', () => {
    const raw = '+kubebuilder:validation:MaxLength=abc';
    const result = parse(raw);
    expect(result).toMatchObject({ ok: false, code: 'invalid-marker', offset: raw.indexOf('abc') });
    expect(result?.ok === false && result.hint).toBe('usage: +kubebuilder:validation:MaxLength=<int>');
    expect(parse('+kubebuilder:rbac:groups=apps', 'package')).toMatchObject({
      message: 'invalid marker +kubebuilder:rbac: missing argument verbs',
    });
    expect(parse('+kubebuilder:rbac:group=apps,verbs=get', 'package')).toMatchObject({
      message: expect.stringContaining('unknown argument "group" (did you mean "groups"?)'),
    });
    expect(parse('+optional=true')).toMatchObject({ code: 'invalid-marker' });
  });

  it('leaves markers of other tools alone', () => {
    expect(parse('+genclient', 'type')).toBeUndefined();
    expect(parse('+kubesmith:scaffold:imports', 'package')).toBeUndefined();
  });
});

describe('collectFileMarkers', () => {
  const source = [
    '// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get',
    '/**',
    ' * Spec of a widget.',
    ' * +kubebuilder:validation:MinProperties=1',
    ' */',
    'export interface WidgetSpec {',
    '  /**',
    '   * Replicas.',
    '   * +kubebuilder:validation:Minimum=1',
    '   * +optional',
    '   */',
    '  replicas?: number;',
    '  // +kubebuilder:validation:MaxLength=10',
    '  name: string;',
    '  /** +kubebuilder:validation:Minimun=1 */',
    '  other: number;',
    '}',
    '// +kubebuilder:validation:Minimum=1',
    '',
  ].join('\n');

  function collect(text: string) {
    const project = new Project({ useInMemoryFileSystem: true });
    const sf = project.createSourceFile('/a.ts', text).compilerNode;
    const diagnostics: Diagnostic[] = [];
    const result = collectFileMarkers(sf, registry, new Report(() => 'src/a.ts', diagnostics));
    return { sf, result, diagnostics };
  }

  const names = (markers: Marker[] | undefined) => (markers ?? []).map((m) => `${m.name}@${m.line}:${m.col}`);

  it('attaches markers to declarations with exact positions', () => {
    const { sf, result } = collect(source);
    const iface = sf.statements.find(ts.isInterfaceDeclaration);
    expect(iface).toBeDefined();
    if (!iface) return;
    expect(names(result.byNode.get(iface))).toEqual(['kubebuilder:validation:MinProperties@4:4']);
    const [replicas, name] = iface.members;
    expect(names(result.byNode.get(replicas!))).toEqual([
      'kubebuilder:validation:Minimum@9:6',
      'optional@10:6',
    ]);
    expect(names(result.byNode.get(name!))).toEqual(['kubebuilder:validation:MaxLength@13:6']);
    expect(names(result.package)).toEqual(['kubebuilder:rbac@1:4']);
    expect(result.docs.get(replicas!)).toBeDefined();
  });

  it('reads a marker text repeated on several declarations at each place, and reports each problem there', () => {
    const { sf, result, diagnostics } = collect(
      [
        'export interface A {',
        '  /** +kubebuilder:validation:Enum=a;b */',
        '  x: string;',
        '  /**',
        '   * +kubebuilder:validation:Enum=a;b',
        '   * +kubebuilder:validation:MaxLength=x',
        '   */',
        '  y: string;',
        '  /** +kubebuilder:validation:MaxLength=x */',
        '  z: string;',
        '}',
        '',
      ].join('\n'),
    );
    const [x, y] = sf.statements.find(ts.isInterfaceDeclaration)!.members;
    expect(names(result.byNode.get(x!))).toEqual(['kubebuilder:validation:Enum@2:7']);
    expect(names(result.byNode.get(y!))).toEqual(['kubebuilder:validation:Enum@5:6']);
    const [first] = result.byNode.get(x!)!;
    const [second] = result.byNode.get(y!)!;
    expect(second!.value).toEqual(['a', 'b']);
    expect(second!.raw).toBe(first!.raw);
    // Every use shares the parsed value: nothing may change it for the others.
    expect(Object.isFrozen(first!.value)).toBe(true);
    expect(diagnostics.map((d) => `${d.line}:${d.col}: ${d.message}`)).toEqual([
      '6:40: invalid marker +kubebuilder:validation:MaxLength on A.y: expected an integer, got "x"',
      '9:41: invalid marker +kubebuilder:validation:MaxLength on A.z: expected an integer, got "x"',
    ]);
  });

  it('reports a misspelled marker and a misplaced one at file:line:col', () => {
    const { diagnostics } = collect(source);
    expect(diagnostics.map((d) => `${d.file}:${d.line}:${d.col}: ${d.message}`)).toEqual([
      'src/a.ts:15:7: unknown marker +kubebuilder:validation:Minimun on WidgetSpec.other',
      'src/a.ts:18:4: marker +kubebuilder:validation:Minimum cannot stand apart from a declaration',
    ]);
  });

  it('finds a file-level marker that only a closing token leads, with no other `+` in the file', () => {
    // The first walk reads the comments of nodes only; a comment above `}` is found by listing tokens.
    const { result, diagnostics } = collect(
      [
        'export interface Outer {',
        '  // +kubebuilder:validation:MaxLength=3',
        '  name: string;',
        '  // +kubebuilder:rbac:groups=apps,resources=before-brace,verbs=get',
        '}',
        '',
      ].join('\n'),
    );
    expect(diagnostics).toEqual([]);
    expect(names(result.package)).toEqual(['kubebuilder:rbac@4:6']);
  });

  it('finds markers before any token and docs below marker-free nodes', () => {
    // The walk lists tokens only under nodes whose text holds a `+`; the rest must not change what it finds.
    const { sf, result, diagnostics } = collect(
      [
        '/** Outer. */',
        'export interface Outer {',
        '  /** Plain doc. */',
        '  nested: {',
        '    /** Deep doc. */',
        '    deep: { /** Deepest. */ leaf: string };',
        '  };',
        "  text: 'not // +kubebuilder:rbac:groups=a,resources=b,verbs=get';",
        '  tpl: `x ${1} // +kubebuilder:rbac:groups=a,resources=c,verbs=get`;',
        '  // +kubebuilder:rbac:groups=apps,resources=before-brace,verbs=get',
        '}',
        'export const f = (a: number /* +kubebuilder:rbac:groups=a,resources=d,verbs=get */) => {',
        '  return a; // +kubebuilder:rbac:groups=a,resources=same-line,verbs=get',
        '  // +kubebuilder:rbac:groups=apps,resources=in-body,verbs=get',
        '};',
        'export enum E {',
        '  /** A doc. */',
        "  A = 'a',",
        '}',
        '/** Widget. */',
        'export class W {',
        '  /** Size. */',
        '  size = 1;',
        '}',
        '// +kubebuilder:rbac:groups=apps,resources=at-end,verbs=get',
        '',
      ].join('\n'),
    );
    expect(diagnostics).toEqual([]);
    expect(
      result.package.map(
        (m) => `${(m.value as { resources: string[] }).resources.join()}@${m.line}:${m.col}`,
      ),
    ).toEqual(['before-brace@10:6', 'in-body@14:6', 'at-end@25:4']);
    const docs = [...result.docs].map(([node, range]) => [
      (node as ts.NamedDeclaration).name?.getText(sf),
      sf.text.slice(range.pos, range.end),
    ]);
    // No doc for leaf (its comment follows `{` on the same line) nor for the enum member (not a target).
    expect(docs).toEqual([
      ['Outer', '/** Outer. */'],
      ['nested', '/** Plain doc. */'],
      ['deep', '/** Deep doc. */'],
      ['W', '/** Widget. */'],
      ['size', '/** Size. */'],
    ]);
    expect([...result.byNode.keys()].map((node) => (node as ts.NamedDeclaration).name?.getText(sf))).toEqual([
      'Outer',
      'nested',
      'deep',
      'leaf',
      'text',
      'tpl',
      'E',
      'W',
      'size',
    ]);
  });

  it('refuses integers out of the int64 range, or beyond what a number keeps exactly, at their position', () => {
    for (const big of ['100000000000000000000000000', '9223372036854775808', '-0x8000000000000001']) {
      const line = `  // +kubebuilder:validation:MaxLength=${big}`;
      const { diagnostics } = collect(`export interface A {\n${line}\n  a: string;\n}\n`);
      expect(diagnostics, big).toMatchObject([
        {
          line: 2,
          col: line.indexOf(big) + 1,
          code: 'invalid-marker',
          message: expect.stringContaining(big),
        },
      ]);
    }
    expect(parse('+kubebuilder:validation:MaxLength=9007199254740993')).toMatchObject({
      ok: false,
      message: expect.stringContaining('beyond ±9007199254740991'),
    });
    expect(parse('+kubebuilder:validation:MaxLength=1e26')).toMatchObject({
      ok: false,
      code: 'invalid-marker',
    });
    expect(parse('+kubebuilder:default=100000000000000000000000')).toMatchObject({ ok: false });
    expect(parsedValue('+kubebuilder:validation:MaxLength=9007199254740991')).toBe(9007199254740991);
    expect(parsedValue('+kubebuilder:validation:MaxLength=0x10')).toBe(16);
    expect(parsedValue('+kubebuilder:validation:MaxLength=007')).toBe(7);
    expect(value('-9007199254740991', T.int)).toBe(-9007199254740991);
    // So an integer is written in digits, never in exponent form.
    expect(toYaml({ maxLength: parsedValue('+kubebuilder:validation:MaxLength=9007199254740991') })).toBe(
      'maxLength: 9007199254740991\n',
    );
  });

  it('points at the bad value inside a marker', () => {
    const { diagnostics } = collect(
      'export interface A {\n  // +kubebuilder:validation:MaxLength=abc\n  a: string;\n}\n',
    );
    expect(diagnostics).toMatchObject([{ line: 2, col: 40, code: 'invalid-marker' }]);
  });
});
