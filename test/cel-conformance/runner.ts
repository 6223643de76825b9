/**
 * Runs one CEL conformance test (cel.expr.conformance.test.SimpleTest) through kubesmith's CEL engine the
 * way CRD rules go through it: type-checked in the environment `manifests` compiles rules in (RuleTypes,
 * the Kubernetes libraries, homogeneous literals), then parsed and evaluated in the environment
 * `validate` evaluates them in (RuleTypes for evaluation: variables are `dyn`, as `self` is there).
 * The test's type_env declares the variables a rule would get from its schema (as `self` and `oldSelf`), its
 * bindings give their values.
 */
import { Optional } from '@marcbachmann/cel-js';
import { RuleTypes } from '#validation/cel-env.js';
import type { Fields } from './textproto.js';

/** Why a test cannot be expressed for this engine (a type or value CRD rules never see). */
export class Inexpressible extends Error {}

const compileTypes = new RuleTypes(new Set());
const evaluationTypes = new RuleTypes(new Set(), { forEvaluation: true });
const compileBase = compileTypes.environment('dyn', false);
const evaluationBase = evaluationTypes.environment('dyn', false);

// cel-js does not export its uint, duration and type classes: their constructors come from values of them.
const evalNow = (expr: string): unknown => evaluationBase.parse(expr)({});
const UnsignedInt = (evalNow('0u') as object).constructor as new (v: bigint) => { value: bigint };
const Duration = (evalNow('duration("0s")') as object).constructor as new (
  seconds: bigint,
  nanos: number,
) => { seconds: bigint; nanos: number };
const TypeClass = (evalNow('int') as object).constructor;

const PRIMITIVES: Record<string, string> = {
  BOOL: 'bool',
  INT64: 'int',
  UINT64: 'uint',
  DOUBLE: 'double',
  STRING: 'string',
  BYTES: 'bytes',
};
const WELL_KNOWN: Record<string, string> = {
  TIMESTAMP: 'google.protobuf.Timestamp',
  DURATION: 'google.protobuf.Duration',
};

/** A cel.expr.Type as cel-js names it. */
export function typeName(t: Fields): string {
  const primitive = t.token('primitive');
  if (primitive !== undefined) {
    const name = PRIMITIVES[primitive];
    if (!name) throw new Inexpressible(`primitive type ${primitive}`);
    return name;
  }
  const wellKnown = t.token('well_known');
  if (wellKnown !== undefined) {
    const name = WELL_KNOWN[wellKnown];
    if (!name) throw new Inexpressible(`well-known type ${wellKnown}`);
    return name;
  }
  if (t.has('dyn')) return 'dyn';
  if (t.has('null')) return 'null';
  const list = t.message1('list_type');
  if (list) return `list<${typeName(list.message1('elem_type') ?? fail('list_type without elem_type'))}>`;
  const map = t.message1('map_type');
  if (map)
    return `map<${typeName(map.message1('key_type') ?? fail('map_type without key_type'))}, ${typeName(
      map.message1('value_type') ?? fail('map_type without value_type'),
    )}>`;
  const abstract = t.message1('abstract_type');
  if (abstract?.string('name') === 'optional_type') {
    const [param] = abstract.messages('parameter_types');
    return `optional<${param ? typeName(param) : 'dyn'}>`;
  }
  const type = t.message1('type');
  if (type) return type.names().length === 0 ? 'type' : `type<${typeName(type)}>`;
  const message = t.string('message_type');
  if (message === 'google.protobuf.Timestamp' || message === 'google.protobuf.Duration') return message;
  throw new Inexpressible(`type ${t.names().join(', ')}${message ? ` ${message}` : ''}`);
}

function fail(what: string): never {
  throw new Error(what);
}

const checkedInt = (text: string): bigint => {
  if (!/^[-+]?\d+$/.test(text)) throw new Error(`${text} is not an integer`);
  return BigInt(text);
};

function parseDouble(text: string): number {
  const t = text.toLowerCase().replace(/^([-+]?[\d.]+(?:e[-+]?\d+)?)f$/, '$1');
  if (t === 'inf' || t === 'infinity') return Infinity;
  if (t === '-inf' || t === '-infinity') return -Infinity;
  if (t === 'nan') return NaN;
  const n = Number(t);
  if (Number.isNaN(n)) throw new Error(`${text} is not a double`);
  return n;
}

const ANY = 'type.googleapis.com/';

/** A cel.expr.Value as the engine holds it: a binding's value, or the expected result. */
export function celValue(v: Fields): unknown {
  const [kind, ...rest] = v.names();
  if (kind === undefined) throw new Error(`${v.where}: an empty Value`);
  if (rest.length > 0) throw new Error(`${v.where}: a Value with ${v.names().join(', ')}`);
  switch (kind) {
    case 'null_value':
      return null;
    case 'bool_value':
      return v.bool('bool_value');
    case 'int64_value':
      return checkedInt(v.token('int64_value')!);
    case 'uint64_value':
      return new UnsignedInt(checkedInt(v.token('uint64_value')!));
    case 'double_value':
      return parseDouble(v.token('double_value')!);
    case 'string_value':
      return v.string('string_value');
    case 'bytes_value':
      return new Uint8Array(v.bytes('bytes_value')!);
    case 'list_value':
      return v
        .message1('list_value')!
        .messages('values')
        .map((item) => celValue(item));
    case 'map_value': {
      const map = new Map<unknown, unknown>();
      for (const entry of v.message1('map_value')!.messages('entries')) {
        map.set(
          celValue(entry.message1('key') ?? fail('a map entry without key')),
          celValue(entry.message1('value') ?? fail('a map entry without value')),
        );
      }
      return map;
    }
    case 'type_value':
      return { typeName: v.string('type_value') };
    case 'object_value': {
      const any = v.message1('object_value')!;
      const [url] = any.names();
      const body = url ? any.message1(url) : undefined;
      if (url === `${ANY}google.protobuf.Duration` && body)
        return new Duration(checkedInt(body.token('seconds') ?? '0'), Number(body.token('nanos') ?? '0'));
      if (url === `${ANY}google.protobuf.Timestamp` && body) {
        const ms =
          Number(checkedInt(body.token('seconds') ?? '0')) * 1000 + Number(body.token('nanos') ?? '0') / 1e6;
        return new Date(ms);
      }
      throw new Inexpressible(`a protobuf message value (${url ?? 'Any'})`);
    }
    case 'enum_value':
      throw new Inexpressible('an enum value');
    default:
      throw new Error(`${v.where}: Value field ${kind} is not known to this reader`);
  }
}

/** Whether the engine's result `got` is the expected value `want` (as celValue builds it). */
export function sameValue(got: unknown, want: unknown): boolean {
  if (want === null || typeof want !== 'object') {
    if (typeof want === 'number' && typeof got === 'number')
      return Number.isNaN(want) ? Number.isNaN(got) : got === want;
    return got === want;
  }
  if (want instanceof UnsignedInt) return got instanceof UnsignedInt && got.value === want.value;
  if (want instanceof Uint8Array)
    return got instanceof Uint8Array && got.length === want.length && got.every((b, i) => b === want[i]);
  if (want instanceof Duration)
    return got instanceof Duration && got.seconds === want.seconds && got.nanos === want.nanos;
  if (want instanceof Date) return got instanceof Date && got.getTime() === want.getTime();
  if ('typeName' in want) {
    // cel-js names the type of null `null` where cel-go says `null_type` (the same type: `type(null) == null_type`).
    const name = (want as { typeName: string }).typeName.replace(/^null_type$/, 'null');
    return got instanceof TypeClass && (got as { name: string }).name === name;
  }
  if (Array.isArray(want))
    return Array.isArray(got) && got.length === want.length && want.every((w, i) => sameValue(got[i], w));
  if (want instanceof Map) {
    const entries: [unknown, unknown][] =
      got instanceof Map ? [...got] : got && typeof got === 'object' ? Object.entries(got) : [];
    if (entries.length !== want.size) return false;
    return [...want].every(([wk, wv]) => entries.some(([gk, gv]) => sameKey(gk, wk) && sameValue(gv, wv)));
  }
  return false;
}

/** Map keys: a plain object's are strings, whatever the CEL key type was. */
function sameKey(got: unknown, want: unknown): boolean {
  if (sameValue(got, want)) return true;
  if (typeof got !== 'string') return false;
  const w = want instanceof UnsignedInt ? want.value : want;
  return (typeof w === 'bigint' || typeof w === 'boolean') && got === String(w);
}

export const show = (v: unknown): string => {
  if (v instanceof Optional) return v.hasValue() ? `optional.of(${show(v.value())})` : 'optional.none()';
  if (typeof v === 'bigint') return `${v}`;
  if (v instanceof UnsignedInt) return `${v.value}u`;
  if (v instanceof Uint8Array) return `b${JSON.stringify(Buffer.from(v).toString('latin1'))}`;
  if (v instanceof Map) return `{${[...v].map(([k, x]) => `${show(k)}: ${show(x)}`).join(', ')}}`;
  if (Array.isArray(v)) return `[${v.map(show).join(', ')}]`;
  if (v instanceof Date) return `timestamp(${v.toISOString()})`;
  if (v instanceof Duration) return `duration(${v.seconds}s ${v.nanos}ns)`;
  if (v && typeof v === 'object' && 'typeName' in v) return `type ${(v as { typeName: string }).typeName}`;
  if (v instanceof TypeClass) return `type ${(v as { name: string }).name}`;
  if (v && typeof v === 'object' && v.constructor === Object)
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}: ${show(x)}`)
      .join(', ')}}`;
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
};

export type Outcome = { ok: true } | { ok: false; why: string };

type Environment = typeof compileBase;

const firstLine = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0]!;

/** Runs one test; Inexpressible when it needs what CRD rules cannot have. */
export function runTest(test: Fields): Outcome {
  const expr = test.string('expr') ?? fail(`${test.where}: no expr`);
  if (test.bool('disable_macros'))
    throw new Inexpressible('disable_macros (CRD rules always have the macros)');
  if (test.string('container')) throw new Inexpressible(`container ${test.string('container')}`);
  if (test.has('unknown') || test.has('any_unknowns')) throw new Inexpressible('unknown values');
  // Declared variables, as `self` and `oldSelf` are declared for a rule.
  const declared: [string, string][] = [];
  for (const decl of test.messages('type_env')) {
    const name = decl.string('name') ?? fail(`${decl.where}: no name`);
    const ident = decl.message1('ident');
    if (!ident) throw new Inexpressible(`a declared function (${name})`);
    declared.push([name, typeName(ident.message1('type') ?? fail(`${decl.where}: no type`))]);
  }
  const bindings: Record<string, unknown> = {};
  for (const entry of test.messages('bindings')) {
    const key = entry.string('key') ?? fail(`${entry.where}: no key`);
    const value = entry.message1('value')?.message1('value');
    if (!value) throw new Inexpressible(`binding ${key} without a value`);
    bindings[key] = celValue(value);
  }
  for (const name of Object.keys(bindings))
    if (!declared.some(([d]) => d === name)) declared.push([name, 'dyn']);
  const withVariables = (base: Environment, asDyn: boolean): Environment => {
    if (declared.length === 0) return base;
    const env = base.clone();
    for (const [name, type] of declared) env.registerVariable(name, asDyn ? 'dyn' : type);
    return env;
  };

  const typed = test.message1('typed_result');
  const wantsError = test.has('eval_error') || test.has('any_eval_errors');
  const checkOnly = test.bool('check_only');
  if (!test.bool('disable_check')) {
    let checked: { valid: boolean; type?: string; error?: Error };
    try {
      checked = withVariables(compileBase, false).parse(expr).check();
    } catch (error) {
      return { ok: false, why: `does not compile: ${firstLine(error)}` };
    }
    if (!checked.valid) return { ok: false, why: `does not type-check: ${firstLine(checked.error)}` };
    const deduced = typed?.message1('deduced_type');
    if (deduced) {
      const want = typeName(deduced);
      if (checked.type !== want) return { ok: false, why: `type ${checked.type}, expected ${want}` };
    }
  }
  if (checkOnly) return { ok: true };

  let result: unknown;
  try {
    result = (withVariables(evaluationBase, true).parse(expr) as unknown as (v: object) => unknown)(bindings);
  } catch (error) {
    // A function kubesmith declares for the checker only: no verdict, whatever the test expects.
    if (/checked, not evaluated/.test(firstLine(error))) return { ok: false, why: firstLine(error) };
    if (wantsError) return { ok: true };
    return { ok: false, why: `evaluation failed: ${firstLine(error)}` };
  }
  if (wantsError) return { ok: false, why: `evaluated to ${show(result)}, expected an error` };
  const expected = test.message1('value') ?? typed?.message1('result');
  if (!expected) {
    // No result given: true is expected (SimpleTest's default matcher).
    return result === true ? { ok: true } : { ok: false, why: `evaluated to ${show(result)}, expected true` };
  }
  const want = celValue(expected);
  return sameValue(result, want)
    ? { ok: true }
    : { ok: false, why: `evaluated to ${show(result)}, expected ${show(want)}` };
}
