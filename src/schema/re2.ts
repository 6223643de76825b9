/**
 * CRD patterns as the apiserver reads them: Go's `regexp` (RE2 syntax, matched in linear time), through
 * re2js, a pure-JavaScript port of RE2/J, itself a port of Go's `regexp`. JavaScript's RegExp is no
 * stand-in: it accepts look-arounds and back-references the apiserver refuses, reads `\s`, `.`,
 * `[[:alpha:]]`, `(?i)` or `\pN` otherwise, and backtracks: `^(a+)+$` against thirty a's and a `!` kept
 * `kubesmith manifests` busy for over a minute. test/fixtures/re2 holds Go's own answers to a table of
 * patterns where the two part, which checks.test.ts holds these functions to.
 *
 * Compiling and matching live with the validator in the runtime (runtime/src/validation/re2.ts, which
 * loads re2js on first use); here: why a pattern is refused, in words that name the JavaScript habit behind
 * it, and kubesmith's own patterns, which alone never load re2js.
 */
import { compileRe2, type Re2Refusal } from '#validation/re2.js';
import { CONDITION_SCHEMA, QUANTITY_PATTERN } from './k8s-data.js';

export { re2Matches } from '#validation/re2.js';

/**
 * The patterns of kubesmith's own schema data (Quantity's, also in the k8s.io/api types, and Condition's),
 * which compile (checks.test.ts compiles them): found in every CRD with conditions, they alone do not load
 * re2js.
 */
export const OWN_PATTERNS: ReadonlySet<string> = new Set([
  QUANTITY_PATTERN,
  CONDITION_SCHEMA.properties!['reason']!.pattern!,
  CONDITION_SCHEMA.properties!['type']!.pattern!,
]);

/** What to write instead of a JavaScript escape RE2 lacks. */
const ESCAPE_HINTS: Record<string, string> = {
  '\\u': ' (write \\x{41} for a code point)',
  '\\Z': ' (use \\z or $)',
};

/** RE2's refusal in its own words, unless a JavaScript habit is behind it: then that habit, named. */
function explain({ reason, fragment = '' }: Re2Refusal): string {
  if (reason === 'invalid or unsupported Perl syntax') {
    if (fragment === '(?=' || fragment === '(?!')
      return 'lookahead ((?=...), (?!...)) is not supported by RE2';
    if (fragment === '(?>') return 'atomic groups ((?>...)) are not supported by RE2';
  }
  if (reason === 'invalid named capture' && /^\(\?<[=!]/.test(fragment)) {
    return 'lookbehind ((?<=...), (?<!...)) is not supported by RE2';
  }
  if (reason === 'invalid escape sequence') {
    if (/^\\[1-9]$/.test(fragment)) return `backreferences (${fragment}) are not supported by RE2`;
    if (fragment === '\\k') return 'named backreferences (\\k<name>) are not supported by RE2';
    if (/^\\[A-Za-z]$/.test(fragment)) {
      return `the escape ${fragment} is not supported by RE2${ESCAPE_HINTS[fragment] ?? ''}`;
    }
  }
  if (reason === 'invalid nested repetition operator' && /^(?:[*+?]|\{[\d,]*\})\+$/.test(fragment)) {
    return `possessive quantifiers (${fragment}) are not supported by RE2`;
  }
  return `the pattern does not compile as RE2: ${reason}${fragment === '' ? '' : `: \`${fragment}\``}`;
}

/** Why `pattern` would not compile as RE2 (Go's regexp, as the apiserver compiles it), or undefined. */
export function re2Problem(pattern: string): string | undefined {
  if (OWN_PATTERNS.has(pattern)) return undefined;
  const result = compileRe2(pattern);
  return 'reason' in result ? explain(result) : undefined;
}
