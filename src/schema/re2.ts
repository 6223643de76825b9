/**
 * CRD patterns as the apiserver reads them: Go's `regexp` (RE2 syntax, matched in linear time), through
 * re2js, a pure-JavaScript port of RE2/J, itself a port of Go's `regexp`. JavaScript's RegExp is no
 * stand-in: it accepts look-arounds and back-references the apiserver refuses, reads `\s`, `.`,
 * `[[:alpha:]]`, `(?i)` or `\pN` otherwise, and backtracks: `^(a+)+$` against thirty a's and a `!` kept
 * `kubesmith manifests` busy for over a minute. test/fixtures/re2 holds Go's own answers to a table of
 * patterns where the two part, which checks.test.ts holds these functions to.
 *
 * re2js is required the first time a pattern is compiled: about 20 ms of CPU, which a project without
 * patterns of its own does not pay.
 */
import { createRequire } from 'node:module';
import type * as Re2js from 're2js';
import { CONDITION_SCHEMA, QUANTITY_PATTERN } from './k8s-data.js';

let loaded: typeof Re2js | undefined;
const re2js = () => (loaded ??= createRequire(import.meta.url)('re2js') as typeof Re2js);

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

/** Why RE2 refuses a pattern: its reason (`invalid escape sequence`) and the part it names (`\u`), if any. */
interface Refusal {
  reason: string;
  fragment?: string;
}

/** Each pattern compiled once per run: its marker, the defaults it checks and the whole-CRD check all ask. */
const compiled = new Map<string, Re2js.RE2JS | Refusal>();

/** `pattern` compiled as Go's regexp.Compile does (RE2 syntax, Perl flags), or why it does not compile. */
function compile(pattern: string): Re2js.RE2JS | Refusal {
  let result = compiled.get(pattern);
  if (result === undefined) {
    const { RE2JS, RE2JSSyntaxException } = re2js();
    try {
      // No flags: RE2JS.LOOKBEHINDS, re2js's own extension, stays off as Go has no lookbehind.
      result = RE2JS.compile(pattern);
    } catch (error) {
      result =
        error instanceof RE2JSSyntaxException
          ? { reason: error.getDescription(), fragment: error.getPattern() ?? undefined }
          : { reason: (error as Error).message };
    }
    compiled.set(pattern, result);
  }
  return result;
}

/** What to write instead of a JavaScript escape RE2 lacks. */
const ESCAPE_HINTS: Record<string, string> = {
  '\\u': ' (write \\x{41} for a code point)',
  '\\Z': ' (use \\z or $)',
};

/** RE2's refusal in its own words, unless a JavaScript habit is behind it: then that habit, named. */
function explain({ reason, fragment = '' }: Refusal): string {
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
  const result = compile(pattern);
  return 'reason' in result ? explain(result) : undefined;
}

/**
 * Whether `value` matches `pattern` as the apiserver decides it (regexp.MatchString: unanchored, `$` the end
 * of the text), or undefined when the pattern does not compile (re2Problem says why).
 */
export function re2Matches(pattern: string, value: string): boolean | undefined {
  const result = compile(pattern);
  return 'reason' in result ? undefined : result.test(value);
}
