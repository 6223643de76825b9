/**
 * Checks of what the apiserver parses inside a schema: patterns (RE2, Go's `regexp`, not JavaScript's: see
 * re2.ts), CEL rules, and default values against their own schema. Each returns problems as text; the caller
 * says where. These are deliberately small: a lexical check of CEL (non-empty, closed string literals,
 * balanced brackets) where the marker stands, before the CRD-wide compilation (cel-compile.ts), and a
 * validator for the keywords CRD schemas use.
 */
import { re2Matches } from './re2.js';
import type { JSONSchemaProps } from './types.js';

export { re2Problem } from './re2.js';

/**
 * Why a CEL expression cannot parse, judged lexically: it must be non-empty, close its string literals
 * ('...', "...", '''...''', """...""", with r/b prefixes) and balance (), [] and {}. Cheap, and said
 * where the marker stands; the rest (operators, types, fields, cost) is cel-compile.ts's, once the CRD's
 * schema is whole.
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
    // A pattern that does not compile is reported by itself (re2Problem), not once per value.
    if (schema.pattern !== undefined && re2Matches(schema.pattern, value) === false) {
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
