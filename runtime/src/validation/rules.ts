/**
 * Evaluates a schema's CEL rules (x-kubernetes-validations) on an object, as the API server does once the
 * structural schema found no error: each rule with `self` the node's value (and `oldSelf` the stored one's
 * where it can be correlated; a rule that uses `oldSelf` runs only then), its message, evaluated
 * messageExpression, reason and fieldPath. With a stored object, a node whose value did not change is not
 * checked (ratcheting). The rules were type-checked by `manifests`; here they are parsed against `dyn` and
 * run on the object's JSON (integers as CEL ints).
 */
import { Optional } from '@marcbachmann/cel-js';
import { RuleTypes } from './cel-env.js';
import { escapeName } from './cel-types.js';
import { rewritePresence } from './presence.js';
import type { JSONSchemaProps, ValidationRule } from './schema.js';
import { durationParser, stringValue } from './string-values.js';
import {
  deepEqual,
  goQuote,
  isObject,
  pathText,
  setOwn,
  type FieldProblem,
  type PathStep,
} from './values.js';

let types: RuleTypes | undefined;
const programs = new Map<string, ((vars: Record<string, unknown>) => unknown) | Error>();

function program(expression: string, optionalOldSelf: boolean) {
  const key = `${optionalOldSelf}|${expression}`;
  let p = programs.get(key);
  if (!p) {
    try {
      types ??= new RuleTypes(new Set(), { forEvaluation: true });
      const env = types.environment('dyn', optionalOldSelf);
      // has() of a field of an index or a literal: cel-go takes it, cel-js does not (presence.ts).
      const text = expression.includes('has') ? rewritePresence(expression) : expression;
      p = env.parse(text) as unknown as (vars: Record<string, unknown>) => unknown;
    } catch (error) {
      p = error instanceof Error ? error : new Error(String(error));
    }
    programs.set(key, p);
  }
  return p;
}

/** A property name as rules spell it, once per name: every object has the same few. */
const celNames = new Map<string, string>();
function celName(key: string): string {
  let name = celNames.get(key);
  if (name === undefined) {
    name = escapeName(key) ?? key;
    if (celNames.size < 10_000) celNames.set(key, name);
  }
  return name;
}

let parseDuration: ((text: string) => unknown) | undefined;

/**
 * The value as CEL sees it: integers as ints (bigint) where the schema says integer, strings of the
 * formats the API server types (date-time, date, duration, byte) as those types, names escaped.
 */
function celValue(v: unknown, s: JSONSchemaProps | undefined): unknown {
  if (typeof v === 'number' && Number.isInteger(v) && s?.type !== 'number') return BigInt(v);
  if (typeof v === 'string' && s?.format !== undefined && s.type === 'string') {
    types ??= new RuleTypes(new Set(), { forEvaluation: true });
    parseDuration ??= durationParser(types.environment('dyn', false));
    return stringValue(v, s.format, parseDuration);
  }
  if (Array.isArray(v)) return v.map((item) => celValue(item, s?.items));
  if (isObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(v)) {
      const child =
        s?.properties?.[key] ??
        (typeof s?.additionalProperties === 'object' ? s.additionalProperties : undefined);
      const name = s?.properties?.[key] ? celName(key) : key;
      setOwn(out, name, celValue(value, child));
    }
    return out;
  }
  return v;
}

interface CompiledRule {
  /** The rule names oldSelf: a transition rule, which runs only on an update (unless optionalOldSelf). */
  transition: boolean;
  program: ((vars: Record<string, unknown>) => unknown) | Error;
}

/** Each rule of a schema, looked up once per rule object rather than by its text on every object. */
const compiledRules = new WeakMap<ValidationRule, CompiledRule>();
function compiled(rule: ValidationRule): CompiledRule {
  let c = compiledRules.get(rule);
  if (c === undefined) {
    c = {
      transition: /\boldSelf\b/.test(rule.rule),
      program: program(rule.rule, rule.optionalOldSelf === true),
    };
    compiledRules.set(rule, c);
  }
  return c;
}

/** A failing rule's value as the API server shows it: a scalar as itself; an object or a list not at all. */
function shownValue(v: unknown): string | undefined {
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

function message(rule: ValidationRule, vars: Record<string, unknown>): string {
  if (rule.messageExpression) {
    const p = program(rule.messageExpression, rule.optionalOldSelf === true);
    if (!(p instanceof Error)) {
      try {
        const text = p(vars);
        if (typeof text === 'string' && text.trim() !== '' && !text.includes('\n')) return text;
      } catch {
        // Falls back to the message, as the API server does when a messageExpression fails.
      }
    }
  }
  if (rule.message) return rule.message;
  return `failed rule: ${rule.rule}`;
}

function errorFor(rule: ValidationRule, v: unknown, steps: PathStep[], text: string): FieldProblem {
  const fieldSteps = [...steps];
  for (const m of (rule.fieldPath ?? '').matchAll(/\.([^.[\]]+)|\['((?:[^'\\]|\\.)*)'\]|\[(\d+)\]/g))
    fieldSteps.push(m[3] !== undefined ? Number(m[3]) : (m[1] ?? m[2]!));
  const path = pathText(fieldSteps) || '<nil>';
  const value = shownValue(v);
  switch (rule.reason) {
    case 'FieldValueForbidden':
      return { path, steps: fieldSteps, message: `Forbidden: ${text}` };
    case 'FieldValueRequired':
      return { path, steps: fieldSteps, message: `Required value: ${text}` };
    case 'FieldValueDuplicate':
      return { path, steps: fieldSteps, message: 'Duplicate value' };
    default:
      return {
        path,
        steps: fieldSteps,
        message: value === undefined ? `Invalid value: ${text}` : `Invalid value: ${value}: ${text}`,
      };
  }
}

/**
 * A rule that fails to evaluate, as the API server words it: the node's schema type as the value, the
 * error, and the rule's message (or the rule); a call no overload takes gets its own sentence.
 */
function evaluationError(rule: ValidationRule, s: JSONSchemaProps, why: string): string {
  const ruleText = (rule.message || rule.rule).trim();
  const detail = why.startsWith('no such overload')
    ? `'${why}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText}`
    : `${why} evaluating rule: ${ruleText}`;
  return `Invalid value: ${JSON.stringify(s.type ?? '')}: ${detail}`;
}

/** Every rule of the schema on the object; the errors in the API server's words. */
export function evaluateRules(
  obj: Record<string, unknown>,
  root: JSONSchemaProps,
  old: Record<string, unknown> | undefined,
): { errors: FieldProblem[]; warnings: FieldProblem[] } {
  const out: FieldProblem[] = [];
  const warnings: FieldProblem[] = [];
  const visit = (
    v: unknown,
    s: JSONSchemaProps,
    steps: PathStep[],
    o: unknown,
    hasOld: boolean,
    isRoot: boolean,
  ) => {
    if (v === undefined) return;
    const rules = s['x-kubernetes-validations'] ?? [];
    // Ratcheting: a rule that fails on an unchanged value is a warning, not an error.
    const unchanged = hasOld && deepEqual(v, o);
    const sink = unchanged
      ? {
          push: (p: FieldProblem) =>
            warnings.push({ ...p, message: `${p.path}: ${p.message}`, warning: true }),
        }
      : out;
    if (rules.length > 0) {
      const self = celValue(v, s);
      const oldSelf = hasOld ? celValue(o, s) : undefined;
      for (const rule of rules) {
        const { transition, program: p } = compiled(rule);
        if (transition && !hasOld && !rule.optionalOldSelf) continue;
        if (p instanceof Error) {
          sink.push({
            path: pathText(steps),
            steps,
            message: `rule does not compile: ${p.message.split('\n')[0]}`,
          });
          continue;
        }
        const vars: Record<string, unknown> = { self };
        if (rule.optionalOldSelf) vars.oldSelf = hasOld ? Optional.of(oldSelf) : Optional.none();
        else if (hasOld) vars.oldSelf = oldSelf;
        let result: unknown;
        try {
          result = p(vars);
        } catch (error) {
          const why = error instanceof Error ? error.message.split('\n')[0] : String(error);
          if (/checked, not evaluated/.test(why ?? '')) continue;
          // At the rule's node, whatever its fieldPath and reason, and never ratcheted.
          out.push({ path: pathText(steps) || '<nil>', steps, message: evaluationError(rule, s, why ?? '') });
          continue;
        }
        if (result !== true) sink.push(errorFor(rule, v, steps, message(rule, vars)));
      }
    }
    if (Array.isArray(v) && s.items) {
      const keys = s['x-kubernetes-list-map-keys'] ?? [];
      v.forEach((item, i) => {
        const oldItem =
          s['x-kubernetes-list-type'] === 'map' && Array.isArray(o) && isObject(item)
            ? o.find((x) => isObject(x) && keys.every((k) => deepEqual(x[k], item[k])))
            : undefined;
        visit(item, s.items!, [...steps, i], oldItem, oldItem !== undefined, false);
      });
    } else if (isObject(v)) {
      for (const [key, value] of Object.entries(v)) {
        if (isRoot && key === 'metadata') continue;
        const child =
          s.properties?.[key] ??
          (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
        if (!child) continue;
        const has = hasOld && isObject(o) && key in o;
        visit(
          value,
          child,
          [...steps, key],
          has ? (o as Record<string, unknown>)[key] : undefined,
          has,
          false,
        );
      }
    }
  };
  visit(obj, root, [], old, old !== undefined, true);
  return { errors: out, warnings };
}
