import { describe, expect, it } from 'vitest';
import { compileRules } from './cel-compile.js';
import { RuleTypes } from '#validation/cel-env.js';
import { declType } from '#validation/cel-types.js';
import type { JSONSchemaProps, ValidationRule } from './types.js';

const str: JSONSchemaProps = { type: 'string' };
const root = (spec: JSONSchemaProps): JSONSchemaProps => ({ type: 'object', properties: { spec } });
const messages = (spec: JSONSchemaProps) => compileRules(root(spec)).map((p) => p.message);
const onSpec = (
  properties: Record<string, JSONSchemaProps>,
  ...rules: ValidationRule[]
): JSONSchemaProps => ({
  type: 'object',
  properties,
  'x-kubernetes-validations': rules,
});

describe('compileRules: the declared type of self', () => {
  it('spells property names as the API server escapes them', () => {
    expect(
      messages(
        onSpec(
          { 'max-size': str, namespace: str },
          { rule: "self.max__dash__size != '' && self.__namespace__ != ''" },
        ),
      ),
    ).toEqual([]);
    expect(messages(onSpec({ 'max-size': str }, { rule: "self.max-size != ''" }))[0]).toMatch(
      /does not compile/,
    );
  });

  it('declares apiVersion, kind and metadata.name at the root and in embedded resources', () => {
    const embedded: JSONSchemaProps = {
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      'x-kubernetes-preserve-unknown-fields': true,
      'x-kubernetes-validations': [{ rule: "self.kind != '' && self.metadata.name != ''" }],
    };
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: { spec: { type: 'object', properties: { template: embedded } } },
      'x-kubernetes-validations': [{ rule: "self.metadata.generateName == '' || self.apiVersion != ''" }],
    };
    expect(compileRules(schema)).toEqual([]);
  });

  it('types int-or-string as dyn, so both readings type-check', () => {
    const port: JSONSchemaProps = { 'x-kubernetes-int-or-string': true };
    expect(
      messages(
        onSpec({ port }, { rule: "type(self.port) == int ? self.port > 0 : self.port.endsWith('%')" }),
      ),
    ).toEqual([]);
  });

  it('accepts has() of a field of a list item, which cel-go takes and cel-js cannot check', () => {
    // Gateway API's HTTPRoute: `!has(self.matches[0].path)`. The API server accepts it.
    const matches: JSONSchemaProps = {
      type: 'array',
      maxItems: 8,
      items: { type: 'object', properties: { path: { type: 'string', maxLength: 10 } } },
    };
    expect(
      messages(onSpec({ matches }, { rule: 'size(self.matches) != 1 || !has(self.matches[0].path)' })),
    ).toEqual([]);
  });

  it('refuses rules on a node the API server exposes no type of', () => {
    const free: JSONSchemaProps = {
      'x-kubernetes-preserve-unknown-fields': true,
      'x-kubernetes-validations': [{ rule: 'true' }],
    };
    expect(messages(onSpec({ free }))).toEqual([
      '.spec.free has no type CEL rules can see (it has none, or preserves unknown fields without one), so the API server refuses rules on it',
    ]);
  });

  it('refuses a field the object lacks, in has() and in an optional selection too', () => {
    for (const rule of ['self.nope == 1', 'has(self.nope)', "self.?nope.orValue('') == ''"])
      expect(messages(onSpec({ name: str }, { rule }))).toEqual([
        "rule on .spec does not compile: undefined field 'nope'",
      ]);
  });

  it('type-checks two-variable comprehensions: an index or key, and the item or value', () => {
    const labels: JSONSchemaProps = { type: 'object', additionalProperties: str };
    const ports: JSONSchemaProps = { type: 'array', items: { type: 'integer' } };
    expect(
      messages(
        onSpec(
          { labels, ports },
          { rule: 'self.labels.all(k, v, k != v) && self.ports.exists(i, p, i + p > 0)' },
        ),
      ),
    ).toEqual([]);
    expect(messages(onSpec({ labels }, { rule: 'self.labels.all(k, v, v > 1)' }))[0]).toMatch(
      /does not compile/,
    );
    expect(
      messages(onSpec({ ports }, { rule: 'self.ports.transformList(i, p, p * 2).all(x, x > 0)' })),
    ).toEqual([]);
  });

  it('refuses a fieldPath that names no field under the node', () => {
    const props = { name: str, labels: { type: 'object', additionalProperties: str } as JSONSchemaProps };
    expect(
      messages(
        onSpec(props, { rule: 'true', fieldPath: '.name' }, { rule: 'true', fieldPath: ".labels['x']" }),
      ),
    ).toEqual([]);
    expect(messages(onSpec(props, { rule: 'true', fieldPath: '.nope' }))).toEqual([
      'rule on .spec: fieldPath .nope does not refer to a valid field (no nope)',
    ]);
  });

  it('types oldSelf as an optional where the rule sets optionalOldSelf', () => {
    expect(messages(onSpec({ name: str }, { rule: 'oldSelf.hasValue()', optionalOldSelf: true }))).toEqual(
      [],
    );
    expect(messages(onSpec({ name: str }, { rule: 'oldSelf.hasValue()' }))[0]).toMatch(/does not compile/);
  });
});

describe('compileRules: what cel-go gives rules and cel-js lacks (found by the CEL conformance data)', () => {
  const at: JSONSchemaProps = { type: 'string', format: 'date-time' };
  const timeout: JSONSchemaProps = { type: 'string', format: 'duration' };
  const data: JSONSchemaProps = { type: 'string', format: 'byte' };
  it.each([
    "int(self.at) > 0 && string(self.at) != ''",
    "string(self.timeout) != '0s' && duration(self.timeout) == self.timeout",
    'timestamp(self.at) == self.at',
    "self.data < b'z'",
    'optional.ofNonZeroValue(self.name).optMap(n, n.size()).orValue(0) < 64',
    'self.?name.optFlatMap(n, optional.ofNonZeroValue(n)).hasValue()',
    "self.?name == optional.of('x') || self.?name != optional.none()",
    'int(1u) == 1',
  ])('accepts %s, as the API server does', (rule) => {
    expect(messages(onSpec({ at, timeout, data, name: str }, { rule }))).toEqual([]);
  });
});

describe('compileRules: cost', () => {
  const hosts: JSONSchemaProps = { type: 'array', items: str };
  const rule = { rule: "self.hosts.all(h, h.matches('^[a-z]+$'))" };

  it('names the unbounded list and string and the markers that bound them', () => {
    const [problem] = compileRules(root(onSpec({ hosts }, rule)));
    expect(problem?.message).toMatch(/estimated cost of the rule on \.spec exceeds the API server's budget/);
    expect(problem?.hint).toBe(
      'bound .spec.hosts (+kubebuilder:validation:MaxItems), .spec.hosts[] (+kubebuilder:validation:MaxLength)',
    );
  });

  it('accepts the same rule once the list and its strings are bounded', () => {
    const bounded: JSONSchemaProps = {
      type: 'array',
      maxItems: 100,
      items: { type: 'string', maxLength: 63 },
    };
    expect(messages(onSpec({ hosts: bounded }, rule))).toEqual([]);
  });

  // kube-apiserver 1.37.2 refuses each of these CRDs (its cost estimate of string()'s result is unbounded),
  // and accepts string(self) alone or compared.
  it.each([
    [{ type: 'integer' }, "'x' + string(self)"],
    [{ type: 'number' }, "'x' + string(self)"],
    [{ type: 'string', maxLength: 10 }, "'x' + string(self)"],
    [{ type: 'string', format: 'date-time' }, "'x' + string(self)"],
    [{ type: 'string', format: 'duration' }, "string(self) + 's'"],
  ] as [JSONSchemaProps, string][])(
    'refuses %j with the messageExpression %s, as the API server does',
    (field, me) => {
      const problems = compileRules(
        root(
          onSpec({ v: { ...field, 'x-kubernetes-validations': [{ rule: 'true', messageExpression: me }] } }),
        ),
      );
      expect(problems.map((p) => [p.part, p.message, p.hint])).toEqual([
        [
          'messageExpression',
          expect.stringMatching(
            /estimated cost of the messageExpression on \.spec\.v exceeds the API server's budget by a factor of more than 100x/,
          ),
          expect.stringMatching(/cannot bound the size of string\(\)'s result/),
        ],
      ]);
    },
  );

  it('accepts string() alone, or compared, as the API server does', () => {
    const at: JSONSchemaProps = { type: 'string', format: 'date-time' };
    expect(
      messages(onSpec({ at }, { rule: "string(self.at) != 'x'", messageExpression: 'string(self.at)' })),
    ).toEqual([]);
  });

  it('adds up the rules of a schema against the per-CRD budget', () => {
    // Each rule is within its own budget; together they are over the CRD's.
    const bounded: JSONSchemaProps = {
      type: 'array',
      maxItems: 100_000,
      items: { type: 'string', maxLength: 63 },
    };
    const rules = Array.from({ length: 20 }, (_, i) => ({
      rule: `self.hosts.all(h, h.matches('^[a-z]{${i}}$'))`,
    }));
    const problems = compileRules(root(onSpec({ hosts: bounded }, ...rules)));
    expect(problems.map((p) => p.message)).toEqual([
      expect.stringMatching(
        /estimated cost of all the rules of the schema exceeds the API server's budget .* per CRD version/,
      ),
    ]);
  });
});

describe('the Kubernetes library, evaluated', () => {
  const types = new RuleTypes(new Set(['name', 'ints']));
  const self = declType({ type: 'object', properties: { name: str } }, false)!;
  const env = types.environment(types.nameOf(self), false);
  it.each([
    ["'abc'.charAt(1)", 'b'],
    ["'a-b-c'.replace('-', '+')", 'a+b+c'],
    ["'a-b-c'.replace('-', '+', 1)", 'a+b-c'],
    ["['a', 'b'].reverse()", ['b', 'a']],
    ['[[1], [2, 3]].flatten()', [1n, 2n, 3n]],
    ["['b', 'a', 'b'].sort()", ['a', 'b', 'b']],
    ["['b', 'a', 'b'].distinct()", ['b', 'a']],
    ['[1, 2, 3].slice(1, 2)', [2n]],
    ['lists.range(3)', [0n, 1n, 2n]],
    ["'x123y45'.find('[0-9]+')", '123'],
    ["'x123y45'.findAll('[0-9]+')", ['123', '45']],
    ['[1, 2, 3].isSorted()', true],
    ['[3, 1, 2].sum()', 6n],
    ['[3, 1, 2].min()', 1n],
    ["['a', 'b', 'a'].lastIndexOf('a')", 2n],
    ["sets.contains(['a', 'b'], ['a'])", true],
    ["sets.equivalent(['a', 'b'], ['b', 'a', 'a'])", true],
    ["sets.intersects(['a'], ['b'])", false],
    ["strings.quote('a\"b')", '"a\\"b"'],
    // cel-go's escapes, not JSON's (\u0007, \u000b).
    ["strings.quote('bell\\a tab\\v é')", '"bell\\a tab\\v é"'],
    ["'abc'.charAt(3)", ''],
  ])('%s', (expression, expected) => {
    expect(env.evaluate(expression, {})).toEqual(expected);
  });
  it('fails charAt() beyond the end of the string, as cel-go does', () => {
    expect(() => env.evaluate("'abc'.charAt(4)", {})).toThrow(/index out of range/);
  });
});
