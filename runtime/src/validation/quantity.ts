/**
 * Kubernetes quantities as CRD rules see them (k8s.io/apiserver/pkg/cel/library/quantity.go over
 * k8s.io/apimachinery/pkg/api/resource): ParseQuantity's grammar, suffixes and rounding, and its two
 * representations, which rules can tell apart. A quantity that fits an int64 with a power-of-ten scale
 * (`int64Amount`) is an integer for `isInteger()`/`asInteger()` only when its scale is not negative and
 * the value fits; one kept as an arbitrary-precision decimal (`inf.Dec`: 19 digits or more, a scale
 * under nano, most binary suffixes from Ei, a sum that overflowed) never is, whatever its value.
 */

/** resource.ParseQuantity's errors, word for word. */
const FORMAT_WRONG =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const NUMERIC = 'unable to parse numeric part of quantity';
const SUFFIX = "unable to parse quantity's suffix";

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);
const fitsInt64 = (v: bigint) => v >= INT64_MIN && v <= INT64_MAX;
/** Go's int64 arithmetic wraps. */
const wrap64 = (v: bigint) => BigInt.asIntN(64, v);
/** Decimal exponents past this would need numbers of that many digits; Go would spend minutes on them. */
const MAX_DIGITS = 10_000;

/**
 * A quantity's value: `value × 10^scale` while it is an int64Amount (`dec` false), else `value ×
 * 10^scale` as an inf.Dec (Go keeps the negated scale there; the value is what matters).
 */
export class Quantity {
  constructor(
    readonly value: bigint,
    readonly scale: number,
    readonly dec: boolean,
  ) {}
}

const DECIMAL_SUFFIXES: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

interface Parts {
  positive: boolean;
  value: string;
  num: string;
  denom: string;
  suffix: string;
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/** resource.parseQuantityString: splits sign, digits, fraction and suffix, or refuses the format. */
function split(str: string): Parts | string {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') pos++;
  // Leading zeros.
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  if (i >= end) return { positive, value: str, num: str.slice(pos), denom: '', suffix: '' };
  let num = str.slice(pos, i) || '0';
  pos = i;
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && isDigit(str[i])) i++;
    denom = str.slice(pos, i);
    if (i >= end) return { positive, value: str, num, denom, suffix: '' };
    pos = i;
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  i = pos;
  while (i < end && 'eEinumkKMGTP'.includes(str[i]!)) i++;
  if (i >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  pos = i;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  for (i = pos; i < end; i++) if (!isDigit(str[i])) return FORMAT_WRONG;
  num ||= '0';
  return { positive, value, num, denom, suffix: str.slice(suffixStart) };
}

/** suffixHandler.interpret: base, exponent and whether the suffix is binary. */
function interpret(suffix: string): { base: 2 | 10; exponent: number; binary: boolean } | undefined {
  if (suffix in DECIMAL_SUFFIXES) return { base: 10, exponent: DECIMAL_SUFFIXES[suffix]!, binary: false };
  if (suffix in BINARY_SUFFIXES) return { base: 2, exponent: BINARY_SUFFIXES[suffix]!, binary: true };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    const parsed = goParseInt64(suffix.slice(1));
    // Go keeps the low 32 bits of the exponent.
    return parsed === undefined
      ? undefined
      : { base: 10, exponent: Number(BigInt.asIntN(32, parsed)), binary: false };
  }
  return undefined;
}

/** strconv.ParseInt(s, 10, 64). */
function goParseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  return fitsInt64(v) ? v : undefined;
}

/** Go's int64Multiply: the product, unless it overflows. */
function multiply(a: bigint, b: bigint): bigint | undefined {
  const c = a * b;
  return fitsInt64(c) ? c : undefined;
}

/** resource.ParseQuantity: the quantity, or its error's text. */
export function parseQuantity(str: string): Quantity | string {
  if (str.length === 0) return FORMAT_WRONG;
  if (str === '0') return new Quantity(0n, 0, false);
  const parts = split(str);
  if (typeof parts === 'string') return parts;
  const { positive, value, num, denom, suffix } = parts;
  const sfx = interpret(suffix);
  if (!sfx) return SUFFIX;
  const { base, exponent, binary } = sfx;
  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (!binary) {
    scale = exponent;
    precision = 18 - (num.length + denom.length);
  } else if (exponent >= 0 && denom.length === 0) {
    mantissa = 1n << BigInt(exponent);
    precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
  } else precision = -1;
  // The fast path: an int64 with a decimal scale no finer than nano.
  if (precision >= 0) {
    scale -= denom.length;
    if (scale >= -9) {
      const shifted = goParseInt64(num + denom);
      if (shifted === undefined) return NUMERIC;
      const result = multiply(shifted, mantissa);
      if (result !== undefined) return new Quantity(positive ? result : -result, scale, false);
    }
  }
  return parseDecimal(str, value, base, exponent, binary);
}

/** ParseQuantity's inf.Dec path: exact, rounded up (away from zero) to nano, binary ones capped at int64. */
function parseDecimal(
  str: string,
  value: string,
  base: 2 | 10,
  exponent: number,
  binary: boolean,
): Quantity | string {
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?$/.exec(value);
  if (!m || (m[2] ?? '') + (m[3] ?? '') === '') return NUMERIC;
  const fraction = m[3] ?? '';
  let unscaled = BigInt((m[2] ?? '') + fraction || '0');
  // value = unscaled × 10^-infScale
  let infScale = fraction.length;
  if (base === 10) infScale -= exponent;
  else unscaled *= 1n << BigInt(exponent);
  // Under a nano, a value rounds up to one nano, however small: no need to write out its digits.
  if (unscaled !== 0n && infScale - 9 > digits(unscaled)) {
    unscaled = 1n;
    infScale = 9;
  }
  if (-infScale > MAX_DIGITS) throw new Error(`quantity ${str} is too large to evaluate`);
  // The sign is set aside while rounding (inf.RoundUp rounds the magnitude up).
  const negative = m[1] === '-' && unscaled !== 0n;
  if (unscaled !== 0n) {
    if (infScale > 9) {
      const divisor = 10n ** BigInt(infScale - 9);
      const q = unscaled / divisor;
      unscaled = unscaled % divisor === 0n ? q : q + 1n;
    } else unscaled *= 10n ** BigInt(9 - infScale);
    infScale = 9;
  }
  if (binary && compareValues(unscaled, -infScale, INT64_MAX, 0) > 0) {
    unscaled = INT64_MAX;
    infScale = 0;
  }
  return new Quantity(negative ? -unscaled : unscaled, -infScale, true);
}

/** The number of decimal digits of |v| (0 for 0). */
const digits = (v: bigint) => (v === 0n ? 0 : (v < 0n ? -v : v).toString().length);

/** Compares a × 10^ea with b × 10^eb exactly, without writing out a huge power of ten. */
function compareValues(a: bigint, ea: number, b: bigint, eb: number): number {
  const sa = a === 0n ? 0 : a > 0n ? 1 : -1;
  const sb = b === 0n ? 0 : b > 0n ? 1 : -1;
  if (sa !== sb || sa === 0) return sa < sb ? -1 : sa > sb ? 1 : 0;
  // Same sign: the one with more digits before the point is larger in magnitude.
  const oa = digits(a) + ea;
  const ob = digits(b) + eb;
  if (oa !== ob) return (oa > ob ? 1 : -1) * sa;
  const e = Math.min(ea, eb);
  const x = a * 10n ** BigInt(ea - e);
  const y = b * 10n ** BigInt(eb - e);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Quantity.Cmp: -1, 0 or 1. */
export function compareQuantities(a: Quantity, b: Quantity): number {
  return compareValues(a.value, a.scale, b.value, b.scale);
}

/** positiveScaleInt64: base × 10^scale, unless it overflows. */
function scaleUp(base: bigint, scale: number): bigint | undefined {
  if (scale > 19 && base !== 0n) return undefined;
  return multiply(base, 10n ** BigInt(scale));
}

/** int64Amount.Add: the exact sum as an int64Amount, unless a step overflows. */
function addInt64(a: Quantity, b: Quantity): Quantity | undefined {
  if (b.value === 0n) return a;
  if (a.value === 0n) return b;
  if (a.scale === b.scale) {
    const c = a.value + b.value;
    return fitsInt64(c) ? new Quantity(c, a.scale, false) : undefined;
  }
  const [high, low] = a.scale > b.scale ? [a, b] : [b, a];
  const c = scaleUp(high.value, high.scale - low.scale);
  if (c === undefined || !fitsInt64(c + low.value)) return undefined;
  return new Quantity(c + low.value, low.scale, false);
}

/** Quantity.Add. */
export function addQuantities(a: Quantity, b: Quantity): Quantity {
  if (!a.dec && !b.dec) {
    const sum = addInt64(a, b);
    if (sum) return sum;
  }
  if (Math.abs(a.scale - b.scale) > MAX_DIGITS) throw new Error('quantities too far apart to add');
  const e = Math.min(a.scale, b.scale);
  const value = a.value * 10n ** BigInt(a.scale - e) + b.value * 10n ** BigInt(b.scale - e);
  return new Quantity(value, e, true);
}

/** Quantity.Sub (an int64Amount subtracts by adding the wrapped negation). */
export function subtractQuantities(a: Quantity, b: Quantity): Quantity {
  if (!a.dec && !b.dec) {
    const difference = addInt64(a, new Quantity(wrap64(-b.value), b.scale, false));
    if (difference) return difference;
  }
  return addQuantities(
    a.dec ? a : new Quantity(a.value, a.scale, true),
    new Quantity(-b.value, b.scale, true),
  );
}

/** resource.NewQuantity(i): an int64Amount of scale 0. */
export const quantityOfInt = (i: bigint) => new Quantity(i, 0, false);

/** Quantity.AsInt64: the value, when it is an int64Amount with no fraction that fits an int64. */
export function quantityAsInt64(q: Quantity): bigint | undefined {
  if (q.dec) return undefined;
  if (q.scale === 0) return q.value;
  if (q.scale < 0) return undefined;
  return scaleUp(q.value, q.scale);
}

/** Go's math.Pow10: its float64 products of exact table entries. */
function pow10(n: number): number {
  if (n >= 0 && n <= 308) return Number(`1e${32 * Math.floor(n / 32)}`) * Number(`1e${n % 32}`);
  if (n < 0 && n >= -323) return Number(`1e-${32 * Math.floor(-n / 32)}`) / Number(`1e${-n % 32}`);
  return n > 0 ? Infinity : 0;
}

/** Quantity.AsApproximateFloat64. */
export function quantityAsFloat(q: Quantity): number {
  const base = Number(q.value);
  return q.scale === 0 ? base : base * pow10(q.scale);
}

export const quantitySign = (q: Quantity): bigint => (q.value === 0n ? 0n : q.value > 0n ? 1n : -1n);
