import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { celProblem, re2Problem, valueProblems } from './checks.js';
import { OWN_PATTERNS, re2Matches } from './re2.js';

/** Go's regexp on patterns where JavaScript's RegExp answers otherwise (test/fixtures/re2/go prints it). */
interface GoAnswer {
  pattern: string;
  /** regexp.Compile's error. */
  error?: string;
  /** Each input with regexp.MatchString's verdict. */
  matches?: [string, boolean][];
}
const GO_REGEXP = JSON.parse(
  readFileSync(new URL('../../test/fixtures/re2/go-regexp.json', import.meta.url), 'utf8'),
) as GoAnswer[];
const show = (pattern: string) =>
  JSON.stringify(pattern.length > 40 ? `${pattern.slice(0, 40)}...` : pattern);

describe('re2Problem', () => {
  // Each verdict checked against Go 1.26's regexp.Compile (what the apiserver uses).
  it.each([
    ['^(?=.*[a-z]).+$', /lookahead/],
    ['^(?!a)b$', /lookahead/],
    ['^(?<!x)y$', /lookbehind/],
    ['^(?<=x)y$', /lookbehind/],
    ['^(a)\\1$', /backreferences/],
    ['(?<n>a)\\k<n>', /named backreferences/],
    ['^\\u0041+$', /\\u is not supported.*\\x\{41\}/],
    ['^a++$', /possessive/],
    ['a{2}+', /possessive/],
    ['^(?>ab)$', /atomic/],
    ['\\Z', /\\Z/],
    ['\\8', /\\8/],
    ['[\\b]', /\\b/],
    ['(a', /does not compile/],
  ])('rejects %s', (pattern, message) => {
    expect(re2Problem(pattern)).toMatch(message);
  });

  it.each([
    '^[a-z]\\-x$',
    '\\12',
    '\\0',
    '(?<name>x)',
    '(?P<name>x)',
    '[\\]]',
    '[^]a]',
    'a+?',
    'a*?b??',
    '\\x{41}',
    '\\pL\\p{Greek}',
    '^(\\S+ ){4}\\S+$',
    '\\Qa+(b\\E',
    '[(?=]',
    '(?i)abc(?s:.)',
    '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$',
  ])('accepts %s', (pattern) => {
    expect(re2Problem(pattern)).toBeUndefined();
  });
});

describe('patterns against Go regexp', () => {
  const refused = GO_REGEXP.filter((a) => a.error !== undefined).map((a) => [show(a.pattern), a] as const);
  const compiled = GO_REGEXP.filter((a) => a.error === undefined).map((a) => [show(a.pattern), a] as const);

  it.each(refused)('refuses %s as regexp.Compile does, with its reason', (_, { pattern, error }) => {
    const why = re2Problem(pattern);
    expect(why).toBeDefined();
    // RE2's own words, unless kubesmith names the JavaScript construct (lookahead, backreference...).
    const own = /^the pattern does not compile as RE2: (.*)$/.exec(why!)?.[1];
    if (own !== undefined) expect(error).toContain(`error parsing regexp: ${own}`);
    else expect(why).toMatch(/ (is|are) not supported by RE2/);
  });

  it.each(compiled)('compiles %s and matches as regexp.MatchString does', (_, { pattern, matches }) => {
    expect(re2Problem(pattern)).toBeUndefined();
    const schema = { type: 'string', pattern };
    const answers = matches!.map(([input]) => [input, valueProblems(input, schema).length === 0]);
    expect(answers).toEqual(matches);
  });

  it.each([...OWN_PATTERNS])("compiles kubesmith's own pattern %s (re2Problem trusts it)", (pattern) => {
    // re2Matches compiles what re2Problem takes on trust: undefined would mean RE2 refuses it.
    expect(re2Matches(pattern, '')).toBeTypeOf('boolean');
  });

  it('matches ^(a+)+$ against thirty a and a ! in linear time (JavaScript backtracks for seconds)', () => {
    const schema = { type: 'string', pattern: '^(a+)+$' };
    valueProblems('a', schema); // The engine loads on first use: not what this test times.
    const start = performance.now();
    const problems = valueProblems(`${'a'.repeat(30)}!`, schema);
    expect(performance.now() - start).toBeLessThan(2000);
    expect(problems).toEqual([`"${'a'.repeat(30)}!" does not match the pattern ^(a+)+$`]);
  });
});

describe('celProblem', () => {
  it.each([
    'self.a > 0',
    "self in ['fast', 'slow']",
    '!oldSelf.hasValue() || self >= oldSelf.value()',
    "'unknown mode ' + self",
    '"a)b" == self',
    "r'\\d' == self",
    "'''multi\nline''' == self",
    'self.all(x, x.matches("^[a-z]+$"))',
    '{"a": 1}["a"] == 1',
  ])('accepts %s', (rule) => {
    expect(celProblem(rule)).toBeUndefined();
  });

  it.each([
    ['', /empty/],
    ['  ', /empty/],
    ['self.size() > (1', /leaves \( unclosed/],
    ['self[0]] == 1', /unbalanced \]/],
    ["'was + oldSelf", /unterminated string/],
    ['"a\nb" == self', /unterminated string/],
    ['(self.a]', /unbalanced \]/],
  ])('rejects %j', (rule, message) => {
    expect(celProblem(rule)).toMatch(message);
  });
});

describe('valueProblems', () => {
  it('accepts values that validate', () => {
    expect(valueProblems(3, { type: 'integer', minimum: 1, maximum: 5 })).toEqual([]);
    expect(valueProblems(2, { type: 'number', multipleOf: 0.5 })).toEqual([]);
    expect(valueProblems('80', { 'x-kubernetes-int-or-string': true })).toEqual([]);
    expect(valueProblems(null, { type: 'string', nullable: true })).toEqual([]);
    expect(
      valueProblems(
        { a: 1 },
        {
          type: 'object',
          properties: { a: { type: 'integer' }, b: { type: 'string', default: 'x' } },
          required: ['a', 'b'],
        },
      ),
    ).toEqual([]);
    expect(
      valueProblems({ free: { x: 1 } }, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }),
    ).toEqual([]);
  });

  it('names each problem with its path inside the value', () => {
    expect(valueProblems(0, { type: 'integer', minimum: 0, exclusiveMinimum: true })).toEqual([
      '0 is below the minimum 0 (exclusive)',
    ]);
    expect(valueProblems('ab', { type: 'string', minLength: 3, pattern: '^[0-9]+$' })).toEqual([
      '"ab" is shorter than 3 characters',
      '"ab" does not match the pattern ^[0-9]+$',
    ]);
    expect(valueProblems([1, 'x'], { type: 'array', maxItems: 1, items: { type: 'integer' } })).toEqual([
      '[1,"x"] has more than 1 item',
      '"x" at [1] is a string, but the field is an integer',
    ]);
    expect(
      valueProblems({}, { type: 'object', required: ['name'], properties: { name: { type: 'string' } } }),
    ).toEqual(['{} lacks the required property name']);
    expect(valueProblems('c', { type: 'string', enum: ['a', 'b'] })).toEqual([
      '"c" is not one of the allowed values "a", "b"',
    ]);
    expect(valueProblems(null, { type: 'string' })).toEqual([
      'null is not allowed (the field is not nullable)',
    ]);
    expect(valueProblems(7, { type: 'integer', multipleOf: 5 })).toEqual(['7 is not a multiple of 5']);
  });
});
