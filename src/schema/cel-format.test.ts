/**
 * `kubesmith manifests` compiles string.format() and the Kubernetes library functions as kube-apiserver
 * does (cel-go's ext.Strings exempts format's arguments from the homogeneous-literal rule and checks a
 * constant format string against a list literal at compile time). The API server's verdicts on these
 * rules are recorded in test/fixtures/validate (cases `strings format ...`).
 */
import { describe, expect, it } from 'vitest';
import { compileRules } from './cel-compile.js';
import type { JSONSchemaProps } from './types.js';

const text: JSONSchemaProps = { type: 'string', maxLength: 64 };
/** The compile problems of one rule on a spec with a string `v`. */
const problems = (rule: string): string[] =>
  compileRules({
    type: 'object',
    properties: { spec: { type: 'object', properties: { v: text }, 'x-kubernetes-validations': [{ rule }] } },
  }).map((p) => p.message);

describe('compileRules: string.format', () => {
  it('accepts a list literal of mixed types as its arguments, as the API server does', () => {
    expect(problems("'%s-%d'.format([self.v, 1]) == 'a-1'")).toEqual([]);
    expect(problems("'%s %s'.format([[self.v, 1], {'a': 1, 'b': 'c'}]) != ''")).toEqual([]);
  });

  it('still refuses a mixed list literal outside format()', () => {
    expect(problems('[self.v, 1].size() == 2')[0]).toMatch(/does not compile/);
  });

  it('refuses what cel-go checks at compile time: clause types, the argument count, the clauses', () => {
    expect(problems("'%d'.format([self.v]) != ''")[0]).toContain(
      'error during formatting: decimal clause can only be used on integers, was given string',
    );
    expect(problems("'%s'.format([self.v, self.v]) != ''")[0]).toContain(
      'too many arguments supplied to string.format (expected 1, got 2)',
    );
    expect(problems("'%s %s'.format([self.v]) != ''")[0]).toContain('index 1 out of range');
    expect(problems("'%z'.format([self.v]) != ''")[0]).toContain(
      'could not parse formatting clause: unrecognized formatting clause "z"',
    );
    // A list that is not a literal is checked when the rule runs.
    expect(problems("'%d'.format([self.v].map(x, x)) != ''")).toEqual([]);
  });
});

describe('compileRules: quantity sign()', () => {
  it('is a function, as the library declares it, not a method', () => {
    expect(problems('sign(quantity(self.v)) >= 0')).toEqual([]);
    expect(problems('quantity(self.v).sign() >= 0')[0]).toMatch(/does not compile/);
  });
});
