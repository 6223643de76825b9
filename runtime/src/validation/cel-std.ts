/**
 * What cel-go's standard and optional libraries give CRD rules and @marcbachmann/cel-js lacks, found by
 * running the CEL conformance data (test/cel-conformance): conversions (`int(uint)`, `int(timestamp)`,
 * `string()` of a timestamp or a duration, the identity `timestamp(timestamp)` and `duration(duration)`),
 * the ordering of bytes, equality of optionals, `optional.ofNonZeroValue()` and
 * the `optMap`/`optFlatMap` macros. Without them a rule the API server accepts would not compile here.
 */
import { Optional, type Environment } from '@marcbachmann/cel-js';

const MAX_INT = 9223372036854775807n;
const DURATION = 'google.protobuf.Duration';
const TIMESTAMP = 'google.protobuf.Timestamp';

/** cel-js's duration (not exported): what these functions read of it. */
interface Duration {
  seconds: bigint;
  nanos: number;
}

/** Go's RFC 3339 with nanoseconds (time.RFC3339Nano, in UTC as the API server sets): no trailing zeros. */
function timestampText(t: Date): string {
  return t.toISOString().replace(/\.?0*Z$/, (m) => (m.startsWith('.') && m !== '.000Z' ? m : 'Z'));
}

/** cel-go's string(duration): the seconds, with the fraction they have, and "s". */
function durationText(d: Duration): string {
  const negative = d.seconds < 0n || d.nanos < 0;
  const seconds = d.seconds < 0n ? -d.seconds : d.seconds;
  const nanos = Math.abs(d.nanos);
  const fraction = nanos === 0 ? '' : `.${String(nanos).padStart(9, '0').replace(/0+$/, '')}`;
  return `${negative ? '-' : ''}${seconds}${fraction}s`;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** The zero value of the value's type, as optional.ofNonZeroValue() tells it. */
function isZero(v: unknown): boolean {
  if (v === null || v === false || v === '' || v === 0 || v === 0n) return true;
  if (Array.isArray(v) || v instanceof Uint8Array) return v.length === 0;
  if (v instanceof Map) return v.size === 0;
  if (v instanceof Date) return v.getTime() === 0;
  if (v instanceof Optional) return false;
  if (typeof v === 'object') {
    const d = v as Partial<Duration> & { value?: unknown };
    if (typeof d.seconds === 'bigint' && typeof d.nanos === 'number')
      return d.seconds === 0n && d.nanos === 0;
    if (typeof d.value === 'bigint') return d.value === 0n;
    return v.constructor === Object && Object.keys(v).length === 0;
  }
  return false;
}

function equalOptionals(a: Optional, b: Optional, equal: (x: unknown, y: unknown) => boolean): boolean {
  if (!a.hasValue() || !b.hasValue()) return a.hasValue() === b.hasValue();
  return equal(a.value(), b.value());
}

/** What cel-js hands an `ast` function (a macro), as cel-env.ts's sortBy reads it. */
interface CelType {
  kind: string;
  valueType?: CelType;
}
interface Checker {
  check(node: unknown, ctx: Scope): CelType;
  getType(name: string): CelType;
  registry: { getOptionalType(t: CelType): CelType };
}
interface Scope {
  forkWithVariable(name: string, type: CelType): Scope;
}
interface Evaluator {
  run(node: unknown, ctx: RunScope): unknown;
}
interface RunScope {
  forkWithVariable(name: string, type: CelType): RunScope;
  setIterValue(value: unknown, ev: Evaluator): RunScope;
}
interface MacroCall {
  args: { op: string; args: unknown }[];
  receiver: unknown;
}

/**
 * optMap(x, e) (optional.of(e) with x the value, or none) and optFlatMap(x, e) (e, an optional, with x
 * the value, or none): cel-go's optional library macros.
 */
function optionalMacro(flat: boolean) {
  return (call: MacroCall) => {
    const [variable, body] = call.args;
    if (variable?.op !== 'id' || !body)
      throw new Error('optMap(x, e) needs a variable name and an expression');
    const name = variable.args as string;
    let valueType: CelType | undefined;
    return {
      typeCheck(checker: Checker, _m: unknown, ctx: Scope) {
        const receiver = checker.check(call.receiver, ctx);
        valueType =
          receiver.kind === 'optional'
            ? (receiver.valueType ?? checker.getType('dyn'))
            : checker.getType('dyn');
        const result = checker.check(body, ctx.forkWithVariable(name, valueType));
        if (flat) {
          if (result.kind !== 'optional' && result.kind !== 'dyn')
            throw new Error('optFlatMap() needs an expression that yields an optional');
          return result;
        }
        return checker.registry.getOptionalType(result);
      },
      evaluate(ev: Evaluator, _m: unknown, ctx: RunScope) {
        const receiver = ev.run(call.receiver, ctx);
        if (!(receiver instanceof Optional)) throw new Error('optMap() needs an optional');
        if (!receiver.hasValue()) return Optional.none();
        const inner = ctx
          .forkWithVariable(name, valueType ?? ({ kind: 'dyn' } as CelType))
          .setIterValue(receiver.value(), ev);
        const out = ev.run(body, inner);
        if (!flat) return Optional.of(out);
        if (!(out instanceof Optional))
          throw new Error('optFlatMap() needs an expression that yields an optional');
        return out;
      },
    };
  };
}

export function defineStandardGaps(env: Environment, equal: (a: unknown, b: unknown) => boolean): void {
  const fn = (signature: string, handler: (...args: never[]) => unknown) =>
    env.registerFunction(signature, handler as never);
  fn('int(uint): int', (u: { value: bigint }) => {
    if (u.value > MAX_INT) throw new Error('integer overflow');
    return u.value;
  });
  fn(`int(${TIMESTAMP}): int`, (t: Date) => BigInt(Math.floor(t.getTime() / 1000)));
  fn(`string(${TIMESTAMP}): string`, timestampText);
  fn(`string(${DURATION}): string`, durationText);
  fn(`timestamp(${TIMESTAMP}): ${TIMESTAMP}`, (t: Date) => t);
  fn(`duration(${DURATION}): ${DURATION}`, (d: Duration) => d);
  for (const [op, holds] of [
    ['<', (c: number) => c < 0],
    ['<=', (c: number) => c <= 0],
    ['>', (c: number) => c > 0],
    ['>=', (c: number) => c >= 0],
  ] as const)
    env.registerOperator(`bytes ${op} bytes`, ((a: Uint8Array, b: Uint8Array) =>
      holds(compareBytes(a, b))) as never);
  env.registerOperator('optional<A> == optional<A>', ((a: Optional, b: Optional) =>
    equalOptionals(a, b, equal)) as never);
  fn('OptionalNamespace.ofNonZeroValue(A): optional<A>', (_: unknown, v: unknown) =>
    isZero(v) ? Optional.none() : Optional.of(v),
  );
  env.registerFunction('optional.optMap(ast, ast): optional<dyn>', optionalMacro(false) as never);
  env.registerFunction('optional.optFlatMap(ast, ast): optional<dyn>', optionalMacro(true) as never);
}
