/**
 * CRD patterns as the API server reads them: Go's `regexp` (RE2 syntax, matched in linear time), through
 * re2js, a pure-JavaScript port of RE2/J, itself a port of Go's `regexp`. JavaScript's RegExp is no
 * stand-in: it accepts look-arounds and back-references the API server refuses, reads `\s`, `.`,
 * `[[:alpha:]]`, `(?i)` or `\pN` otherwise, and backtracks (`^(a+)+$` against thirty a's and a `!` runs
 * for over a minute). The CLI's src/schema/re2.ts explains refusals; its tests hold these functions to Go's
 * own answers (test/fixtures/re2).
 *
 * re2js is required the first time a pattern is compiled: about 20 ms of CPU, which a schema without
 * patterns does not pay.
 */
import { createRequire } from 'node:module';
import type * as Re2js from 're2js';

let loaded: typeof Re2js | undefined;
/** re2js, loaded on first use. */
export const re2js = (): typeof Re2js => (loaded ??= createRequire(import.meta.url)('re2js') as typeof Re2js);

/** Why RE2 refuses a pattern: its reason (`invalid escape sequence`) and the part it names (`\u`), if any. */
export interface Re2Refusal {
  reason: string;
  fragment?: string;
}

/** Each pattern compiled once per process: a schema's pattern is checked on every value it applies to. */
const compiled = new Map<string, Re2js.RE2JS | Re2Refusal>();

/** `pattern` compiled as Go's regexp.Compile does (RE2 syntax, Perl flags), or why it does not compile. */
export function compileRe2(pattern: string): Re2js.RE2JS | Re2Refusal {
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

/**
 * Whether `value` matches `pattern` as the API server decides it (regexp.MatchString: unanchored, `$` the
 * end of the text), or undefined when the pattern does not compile.
 */
export function re2Matches(pattern: string, value: string): boolean | undefined {
  const result = compileRe2(pattern);
  return 'reason' in result ? undefined : result.test(value);
}
