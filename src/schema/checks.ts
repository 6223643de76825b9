/**
 * Checks of what the apiserver parses inside a schema: patterns (RE2, Go's `regexp`, not JavaScript's),
 * CEL rules, and default values against their own schema. Each returns problems as text; the caller says
 * where. These are deliberately small: a pattern scanner for the JavaScript-only constructs RE2 rejects, a
 * lexical check of CEL (non-empty, closed string literals, balanced brackets) rather than a CEL parser, and
 * a validator for the keywords CRD schemas use.
 */
import type { JSONSchemaProps } from './types.js';

/** RE2 syntax JavaScript lacks, rewritten to what JavaScript reads the same way: \Q..\E, (?P<n>, (?i). */
function toJavaScript(pattern: string): string {
  return pattern
    .replace(/\\Q([\s\S]*?)(?:\\E|$)/g, (_, text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
    .replace(/\(\?P</g, '(?<')
    .replace(/\(\?[imsU-]+\)/g, '')
    .replace(/\(\?[imsU-]+:/g, '(?:');
}

/**
 * A JavaScript RegExp matching as the RE2 `pattern` does, or undefined when the two could differ (Unicode
 * classes, \x{..}, \z, POSIX classes, flags) or it does not compile.
 */
export function jsRegExpFor(pattern: string): RegExp | undefined {
  if (/\\[pPzQ]|\\x\{|\[:|\(\?[imsU-]/.test(pattern)) return undefined;
  try {
    return new RegExp(pattern);
  } catch {
    return undefined;
  }
}

const RE2_ESCAPES = 'afnrtvxdDsSwWpPAzbBQE';

/** Why `pattern` would not compile as RE2 (Go's regexp), or undefined when it would. */
export function re2Problem(pattern: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    const next = pattern[i + 1] ?? '';
    if (c === '\\') {
      if (next === 'Q') {
        // \Q...\E quotes literally.
        const end = pattern.indexOf('\\E', i + 2);
        i = end < 0 ? pattern.length : end + 1;
        continue;
      }
      // `\1` alone is a backreference; `\12` is an octal escape, which RE2 has.
      if (/[1-7]/.test(next) && !/[0-7]/.test(pattern[i + 2] ?? '')) {
        return `backreferences (\\${next}) are not supported by RE2`;
      }
      if (next === 'k' && pattern[i + 2] === '<')
        return 'named backreferences (\\k<name>) are not supported by RE2';
      // RE2 knows these letter escapes only; any other letter (\u, \Z, \c, \h...) is an error there.
      if (/[A-Za-z89]/.test(next) && (!RE2_ESCAPES.includes(next) || (inClass && 'bBAz'.includes(next)))) {
        const hint =
          next === 'u' ? ' (write \\x{41} for a code point)' : next === 'Z' ? ' (use \\z or $)' : '';
        return `the escape \\${next} is not supported by RE2${hint}`;
      }
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      // A `]` right after `[` or `[^` is a literal.
      if (next === ']') i++;
      else if (next === '^' && pattern[i + 2] === ']') i += 2;
      continue;
    }
    if (c === '(' && next === '?') {
      const rest = pattern.slice(i + 2, i + 4);
      if (rest.startsWith('=') || rest.startsWith('!'))
        return 'lookahead ((?=...), (?!...)) is not supported by RE2';
      if (rest === '<=' || rest === '<!') return 'lookbehind ((?<=...), (?<!...)) is not supported by RE2';
      if (rest.startsWith('>')) return 'atomic groups ((?>...)) are not supported by RE2';
    }
    if ((c === '*' || c === '+' || c === '?' || c === '}') && next === '+') {
      // `a++`, `a*+`, `a?+`, `a{2}+`: possessive quantifiers. (`a+?` is lazy, which RE2 has.)
      const prev = pattern[i - 1];
      if (c !== '?' || (prev !== '*' && prev !== '+' && prev !== '?' && prev !== '}')) {
        return `possessive quantifiers (${c}+) are not supported by RE2`;
      }
    }
  }
  try {
    // Then plain syntax errors (unbalanced parentheses, a dangling quantifier...). Not with the `u` flag,
    // which rejects identity escapes such as `\-` that RE2 accepts.
    new RegExp(toJavaScript(pattern));
  } catch (error) {
    return `the pattern does not compile: ${(error as Error).message}`;
  }
  return undefined;
}

/**
 * Why a CEL expression cannot parse, judged lexically: it must be non-empty, close its string literals
 * ('...', "...", '''...''', """...""", with r/b prefixes) and balance (), [] and {}. A real CEL parser
 * would also reject bad operators; the apiserver reports those when the CRD is applied.
 */
export function celProblem(expression: string): string | undefined {
  if (expression.trim() === '') return 'the CEL expression is empty';
  const stack: string[] = [];
  const closing: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  for (let i = 0; i < expression.length; i++) {
    const c = expression[i]!;
    if (c === '"' || c === "'") {
      const raw =
        /[rR]/.test(expression[i - 1] ?? '') || /[rR][bB]|[bB][rR]/.test(expression.slice(i - 2, i));
      const triple = expression.startsWith(c.repeat(3), i);
      const quote = triple ? c.repeat(3) : c;
      let j = i + quote.length;
      for (; j < expression.length; j++) {
        if (expression[j] === '\\' && !raw) {
          j++;
          continue;
        }
        if (!triple && expression[j] === '\n') break;
        if (expression.startsWith(quote, j)) break;
      }
      if (j >= expression.length || !expression.startsWith(quote, j)) {
        return `the CEL expression has an unterminated string starting at character ${i + 1}`;
      }
      i = j + quote.length - 1;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') stack.push(c);
    else if (c in closing) {
      if (stack.pop() !== closing[c])
        return `the CEL expression has an unbalanced ${c} at character ${i + 1}`;
    }
  }
  if (stack.length > 0) return `the CEL expression leaves ${stack.join('')} unclosed`;
  return undefined;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function jsonType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/**
 * Why `value` does not validate against `schema` (type, enum, bounds, lengths, pattern, item and property
 * counts, required properties, recursively), each with the path inside the value. Empty when it does.
 */
export function valueProblems(value: unknown, schema: JSONSchemaProps, at = ''): string[] {
  const out: string[] = [];
  const where = at === '' ? '' : ` at ${at}`;
  const show = (v: unknown) => JSON.stringify(v);
  if (value === null) {
    if (!schema.nullable && schema.type !== undefined)
      out.push(`null${where} is not allowed (the field is not nullable)`);
    return out;
  }
  const actual = jsonType(value);
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  if (intOrString) {
    if (actual !== 'integer' && actual !== 'string')
      out.push(`${show(value)}${where} is a ${actual}, not an integer or a string`);
  } else if (
    schema.type !== undefined &&
    actual !== schema.type &&
    !(schema.type === 'number' && actual === 'integer')
  ) {
    out.push(
      `${show(value)}${where} is a${/^[aeiou]/.test(actual) ? 'n' : ''} ${actual}, but the field is a${/^[aeiou]/.test(schema.type) ? 'n' : ''} ${schema.type}`,
    );
    return out;
  }
  if (schema.enum && !schema.enum.some((e) => show(e) === show(value))) {
    out.push(`${show(value)}${where} is not one of the allowed values ${schema.enum.map(show).join(', ')}`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined) {
      if (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum)
        out.push(
          `${value}${where} is below the minimum ${schema.minimum}${schema.exclusiveMinimum ? ' (exclusive)' : ''}`,
        );
    }
    if (schema.maximum !== undefined) {
      if (schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum)
        out.push(
          `${value}${where} is above the maximum ${schema.maximum}${schema.exclusiveMaximum ? ' (exclusive)' : ''}`,
        );
    }
    if (schema.multipleOf !== undefined && schema.multipleOf > 0) {
      const q = value / schema.multipleOf;
      if (Math.abs(q - Math.round(q)) > 1e-9)
        out.push(`${value}${where} is not a multiple of ${schema.multipleOf}`);
    }
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength)
      out.push(`${show(value)}${where} is shorter than ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && length > schema.maxLength)
      out.push(`${show(value)}${where} is longer than ${schema.maxLength} characters`);
    if (schema.pattern !== undefined) {
      const re = jsRegExpFor(schema.pattern);
      if (re && !re.test(value))
        out.push(`${show(value)}${where} does not match the pattern ${schema.pattern}`);
    }
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      out.push(`${show(value)}${where} has fewer than ${plural(schema.minItems, 'item')}`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      out.push(`${show(value)}${where} has more than ${plural(schema.maxItems, 'item')}`);
    if (schema.items) value.forEach((v, i) => out.push(...valueProblems(v, schema.items!, `${at}[${i}]`)));
  }
  if (actual === 'object') {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object);
    if (schema.minProperties !== undefined && keys.length < schema.minProperties)
      out.push(
        `${show(value)}${where} has fewer than ${plural(schema.minProperties, 'property', 'properties')}`,
      );
    if (schema.maxProperties !== undefined && keys.length > schema.maxProperties)
      out.push(
        `${show(value)}${where} has more than ${plural(schema.maxProperties, 'property', 'properties')}`,
      );
    for (const r of schema.required ?? []) {
      if (!(r in object) && schema.properties?.[r]?.default === undefined)
        out.push(`${show(value)}${where} lacks the required property ${r}`);
    }
    for (const key of keys) {
      const child =
        schema.properties?.[key] ??
        (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      if (child) out.push(...valueProblems(object[key], child, at === '' ? key : `${at}.${key}`));
    }
  }
  return out;
}
