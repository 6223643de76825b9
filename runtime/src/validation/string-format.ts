/**
 * `string.format(list)` as Kubernetes gives it to CRD rules (cel-go ext.Strings version 2, its first
 * formatter, locale en_US): the clauses %s %d %f %e %b %o %x %X (with a precision for %f and %e), `%%`,
 * and cel-go's errors, word for word. %f and %e go through golang.org/x/text's printer, which groups
 * thousands and writes the exponent as `× 10` and superscript digits.
 */

/** cel-js's uint and duration values (its package does not export their classes). */
interface Uint {
  value: bigint;
}
interface Duration {
  seconds: bigint;
  nanos: number;
}
const isUint = (v: unknown): v is Uint =>
  typeof v === 'object' && v !== null && v.constructor.name === 'UnsignedInt';
const isDuration = (v: unknown): v is Duration =>
  typeof v === 'object' && v !== null && v.constructor.name === 'Duration';

/** cel-go's type name of a value, as the format errors show it. */
export function celTypeName(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'bigint') return 'int';
  if (isUint(v)) return 'uint';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'boolean') return 'bool';
  if (v === null) return 'null_type';
  if (v instanceof Uint8Array) return 'bytes';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Date) return 'google.protobuf.Timestamp';
  if (isDuration(v)) return 'google.protobuf.Duration';
  if (v instanceof Map || typeof v === 'object') return 'map';
  return typeof v;
}

const DEFAULT_PRECISION = 6;
const MAX_PRECISION = 1_000_000;

/** Go's strconv.Quote (%q) of a string: JSON's escapes, but \x for control bytes and \u for the rest. */
function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\x07') out += '\\a';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\v') out += '\\v';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Go's %g of a float64 (what cel-go's string() of a double is): the shortest digits. */
export function goFloatG(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const [mantissa, exponent] = x.toExponential().split('e') as [string, string];
  const exp = Number(exponent);
  if (exp < -4 || exp >= 6)
    return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(x);
}

/** Go's strconv.FormatFloat(f, 'f', -1, 64): the shortest digits, never an exponent. */
function goFloatF(x: number): string {
  if (Number.isInteger(x) || Math.abs(x) >= 1e-6) {
    const s = String(x);
    if (!s.includes('e')) return s;
  }
  const [mantissa, exponent] = x.toExponential().split('e') as [string, string];
  const exp = Number(exponent);
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace(/^-/, '').replace('.', '');
  const text =
    exp < 0
      ? `0.${'0'.repeat(-exp - 1)}${digits}`
      : digits.length > exp + 1
        ? `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`
        : digits + '0'.repeat(exp + 1 - digits.length);
  return (negative ? '-' : '') + text;
}

/** time.RFC3339Nano of a timestamp (UTC): the fraction without its trailing zeros. */
function rfc3339Nano(d: Date): string {
  return d
    .toISOString()
    .replace(/\.?0+Z$/, 'Z')
    .replace(/\.Z$/, 'Z');
}

const durationText = (d: Duration) => `${goFloatF(Number(d.seconds) + d.nanos / 1e9)}s`;

class FormatError extends Error {}
const clauseError = (what: string, v: unknown) => new FormatError(`${what}, was given ${celTypeName(v)}`);

/** cel-go's FormatString: %s of any value. */
function formatString(v: unknown): string {
  if (Array.isArray(v)) return formatList(v);
  if (v === null) return 'null';
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint') return String(v);
  if (isUint(v)) return String(v.value);
  if (typeof v === 'number') return goFloatG(v);
  if (typeof v === 'boolean') return String(v);
  if (v instanceof Uint8Array) {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(v);
    } catch {
      throw new FormatError('invalid UTF-8 in bytes, cannot convert to string');
    }
  }
  if (v instanceof Date) return rfc3339Nano(v);
  if (isDuration(v)) return durationText(v);
  if (typeof v === 'object') return formatMap(v as object);
  throw clauseError(STRING_CLAUSE, v);
}

const STRING_CLAUSE =
  'string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps';

/** A list or map member, as cel-go writes it inside a list or map: strings quoted, doubles fixed. */
function formatMember(v: unknown): string {
  if (typeof v === 'bigint') return String(v);
  if (isUint(v)) return String(v.value);
  if (typeof v === 'number') {
    const text = Number.isFinite(v) ? v.toFixed(DEFAULT_PRECISION) : goFloatG(v);
    return Number.isFinite(v) ? text : goQuote(text);
  }
  if (v instanceof Date) return `timestamp(${goQuote(rfc3339Nano(v))})`;
  if (isDuration(v)) return `duration(${goQuote(durationText(v))})`;
  const text = formatString(v);
  if (typeof v === 'string') return goQuote(text);
  if (v instanceof Uint8Array) return `b${goQuote(text)}`;
  return text;
}

function formatList(l: unknown[]): string {
  return `[${l.map(formatMember).join(', ')}]`;
}

function formatMap(m: object): string {
  const entries: [unknown, unknown][] = m instanceof Map ? [...m] : Object.entries(m);
  const pairs = entries.map(([k, v]) => {
    if (typeof k !== 'string' && typeof k !== 'boolean' && typeof k !== 'bigint' && !isUint(k))
      throw new FormatError(`no formatting function for map key of type ${celTypeName(k)}`);
    return [formatMember(k), formatMember(v)] as const;
  });
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return `{${pairs.map(([k, v]) => `${k}:${v}`).join(', ')}}`;
}

function integer(v: unknown, what: string): bigint {
  if (typeof v === 'bigint') return v;
  if (isUint(v)) return v.value;
  throw clauseError(what, v);
}

/** A double for %f and %e: a double, or the strings NaN, Infinity and -Infinity. */
function double(v: unknown, what: string): number {
  if (typeof v === 'number') return v;
  if (v === 'NaN' || v === 'Infinity' || v === '-Infinity') return Number(v);
  throw clauseError(what, v);
}

/** x/text's en_US grouping of the integer digits. */
const grouped = (digits: string) => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** The exact decimal digits of a finite |x| (a double is a binary fraction, so they end): whole and fraction. */
function exactDigits(x: number): { whole: string; fraction: string } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fractionBits = bits & ((1n << 52n) - 1n);
  const mantissa = biased === 0 ? fractionBits : fractionBits | (1n << 52n);
  const exponent = biased === 0 ? -1074 : biased - 1075;
  if (exponent >= 0) return { whole: (mantissa << BigInt(exponent)).toString(), fraction: '' };
  // mantissa / 2^k is mantissa × 5^k / 10^k.
  const k = -exponent;
  const digits = (mantissa * 5n ** BigInt(k)).toString().padStart(k + 1, '0');
  return { whole: digits.slice(0, digits.length - k), fraction: digits.slice(digits.length - k) };
}

/** The first `keep` digits of `digits`, rounded half to even on the rest (as Go's %f and %e). */
function roundDigits(digits: string, keep: number): string {
  if (digits.length <= keep) return digits.padEnd(keep, '0');
  const kept = digits.slice(0, keep);
  const rest = digits.slice(keep);
  const up =
    rest[0]! > '5' ||
    (rest[0] === '5' && (/[1-9]/.test(rest.slice(1)) || Number(kept[kept.length - 1] ?? '0') % 2 === 1));
  if (!up) return kept;
  // Adds one to the kept digits (a carry through nines can add a digit in front).
  const nines = /9*$/.exec(kept)![0].length;
  const head = kept.slice(0, kept.length - nines);
  const bumped = head === '' ? '1' : head.slice(0, -1) + String(Number(head[head.length - 1]) + 1);
  return bumped + '0'.repeat(nines);
}

/** %f: Go's digits (exact, half to even), then x/text's en_US grouping of thousands. */
function fixed(x: number, precision: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '∞' : '-∞';
  const { whole, fraction } = exactDigits(x);
  const rounded = roundDigits(whole + fraction, whole.length + precision);
  const wholeDigits = rounded.slice(0, rounded.length - precision).replace(/^0+(?=\d)/, '') || '0';
  const fractionDigits = rounded.slice(rounded.length - precision);
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  return `${sign}${grouped(wholeDigits)}${precision > 0 ? `.${fractionDigits}` : ''}`;
}

const SUPERSCRIPT = '⁰¹²³⁴⁵⁶⁷⁸⁹';

/**
 * %e: six digits after the point, whatever the precision (cel-go writes the precision as a width, `%6e`),
 * the exponent as x/text writes it: `×10` and at least two superscript digits. x/text pads NaN and the
 * infinities to the width, not the numbers.
 */
function scientific(x: number, width: number): string {
  const padded = (text: string) => {
    const length = [...text].length;
    return length < width ? ' '.repeat(width - length) + text : text;
  };
  if (Number.isNaN(x)) return padded('NaN');
  if (!Number.isFinite(x)) return padded(x > 0 ? '∞' : '-∞');
  const { whole, fraction } = exactDigits(x);
  const all = whole + fraction;
  const first = all.search(/[1-9]/);
  let mantissa = '0000000';
  let exp = 0;
  if (first >= 0) {
    exp = whole.length - 1 - first;
    mantissa = roundDigits(all.slice(first), 7);
    if (mantissa.length > 7) {
      mantissa = mantissa.slice(0, 7);
      exp++;
    }
  }
  const digits = String(Math.abs(exp))
    .padStart(2, '0')
    .replace(/\d/g, (d) => SUPERSCRIPT[Number(d)]!);
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  return `${sign}${mantissa[0]}.${mantissa.slice(1)}×10${exp < 0 ? '⁻' : ''}${digits}`;
}

const hexOf = (bytes: Uint8Array, upper: boolean) => {
  const text = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  return upper ? text.toUpperCase() : text;
};

type Clause = (v: unknown) => string;

/** parseFormattingClause: the clause after a '%' (its precision too), and how many characters it took. */
function clause(format: string): [number, Clause] {
  let i = 0;
  let precision: number | undefined;
  if (format[0] === '.') {
    i = 1;
    let digits = '';
    for (;;) {
      if (i >= format.length)
        throw new FormatError(
          'could not parse formatting clause: error while parsing precision: could not find end of precision specifier',
        );
      if (!/[0-9]/.test(format[i]!)) break;
      digits += format[i];
      i++;
    }
    if (digits === '')
      throw new FormatError(
        'could not parse formatting clause: error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing "": invalid syntax',
      );
    if (BigInt(digits) > (1n << 63n) - 1n)
      throw new FormatError(
        `could not parse formatting clause: error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing ${goQuote(digits)}: value out of range`,
      );
    precision = Number(digits);
  }
  const c = format[i]!;
  i++;
  const p = precision ?? DEFAULT_PRECISION;
  // Go's fmt takes no precision or width above a million (it writes %!(BADPREC)); kubesmith refuses them.
  const bounded =
    (run: Clause): Clause =>
    (v) => {
      if (p > MAX_PRECISION) throw new FormatError(`precision ${p} is over ${MAX_PRECISION}`);
      return run(v);
    };
  switch (c) {
    case 's':
      return [i, formatString];
    case 'd':
      return [i, (v) => String(integer(v, 'decimal clause can only be used on integers'))];
    case 'f':
      return [i, bounded((v) => fixed(double(v, 'fixed-point clause can only be used on doubles'), p))];
    case 'e':
      return [i, bounded((v) => scientific(double(v, 'scientific clause can only be used on doubles'), p))];
    case 'b':
      return [
        i,
        (v) =>
          typeof v === 'boolean'
            ? v
              ? '1'
              : '0'
            : integer(v, 'only integers and bools can be formatted as binary').toString(2),
      ];
    case 'o':
      return [i, (v) => integer(v, 'octal clause can only be used on integers').toString(8)];
    case 'x':
    case 'X': {
      const upper = c === 'X';
      return [
        i,
        (v) => {
          let text: string;
          if (typeof v === 'string') text = hexOf(new TextEncoder().encode(v), upper);
          else if (v instanceof Uint8Array) text = hexOf(v, upper);
          else
            text = integer(v, 'only integers, byte buffers, and strings can be formatted as hex').toString(
              16,
            );
          return upper ? text.toUpperCase() : text;
        },
      ];
    }
    default:
      throw new FormatError(`could not parse formatting clause: unrecognized formatting clause "${c}"`);
  }
}

/** `format.format(args)`, or cel-go's error. */
export function formatString_(format: string, args: unknown[]): string {
  let out = '';
  let argIndex = 0;
  for (let i = 0; i < format.length;) {
    if (format[i] !== '%') {
      out += format[i];
      i++;
      continue;
    }
    if (format[i + 1] === '%') {
      out += '%';
      i += 2;
      continue;
    }
    if (argIndex >= args.length) throw new FormatError(`index ${argIndex} out of range`);
    if (i + 1 >= format.length) throw new FormatError('unexpected end of string');
    const [read, format_] = clause(format.slice(i + 1));
    let text: string;
    try {
      text = format_(args[argIndex]);
    } catch (error) {
      if (error instanceof FormatError) throw new FormatError(`error during formatting: ${error.message}`);
      throw error;
    }
    out += text;
    i += 1 + read;
    argIndex++;
  }
  return out;
}

export { formatString_ as format };

/** A type as the compile-time check sees it: its cel-go name, and the types of a list or map literal's parts. */
export interface StaticArg {
  /** cel-go's name of the type (`int`, `list`, `map`, `dyn`...). */
  type: string;
  /** The parts, where the argument is a list or map literal (keys and values alike). */
  parts?: StaticArg[];
}

const STRING_TYPES = new Set([
  'list',
  'map',
  'int',
  'uint',
  'double',
  'bool',
  'string',
  'google.protobuf.Timestamp',
  'bytes',
  'google.protobuf.Duration',
  'type',
  'null_type',
]);

/** The first part (depth first) %s cannot format, as cel-go's stringFormatChecker looks. */
function unformattable(arg: StaticArg): StaticArg | undefined {
  if (arg.type !== 'dyn' && !STRING_TYPES.has(arg.type)) return arg;
  for (const part of arg.parts ?? []) {
    const bad = unformattable(part);
    if (bad) return bad;
  }
  return undefined;
}

/**
 * cel-go's string.format validator, run at compile time on a constant format string with a list literal:
 * the error the API server gives the rule, if any (a clause that does not parse, too few or too many
 * arguments, an argument whose type the clause cannot take).
 */
export function formatCheckError(format: string, args: StaticArg[]): string | undefined {
  let requested = 0;
  let argIndex = 0;
  const oneOf = (arg: StaticArg, what: string, ...types: string[]) =>
    arg.type === 'dyn' || types.includes(arg.type)
      ? undefined
      : `error during formatting: ${what}, was given ${arg.type}`;
  for (let i = 0; i < format.length;) {
    if (format[i] !== '%') {
      i++;
      continue;
    }
    if (format[i + 1] === '%') {
      i += 2;
      continue;
    }
    requested++;
    if (i + 1 >= format.length) return 'unexpected end of string';
    if (argIndex >= args.length) return `index ${argIndex} out of range`;
    let read: number;
    let kind: string;
    try {
      const rest = format.slice(i + 1);
      [read] = clause(rest);
      kind = rest[read - 1]!;
    } catch (error) {
      return (error as Error).message;
    }
    const arg = args[argIndex]!;
    let problem: string | undefined;
    switch (kind) {
      case 's': {
        const bad = unformattable(arg);
        problem = bad && `error during formatting: ${STRING_CLAUSE}, was given ${bad.type}`;
        break;
      }
      case 'd':
        problem = oneOf(arg, 'decimal clause can only be used on integers', 'int', 'uint');
        break;
      case 'f':
        problem = oneOf(arg, 'fixed-point clause can only be used on doubles', 'double', 'string');
        break;
      case 'e':
        problem = oneOf(arg, 'scientific clause can only be used on doubles', 'double', 'string');
        break;
      case 'b':
        problem = oneOf(arg, 'only integers and bools can be formatted as binary', 'int', 'uint', 'bool');
        break;
      case 'o':
        problem = oneOf(arg, 'octal clause can only be used on integers', 'int', 'uint');
        break;
      default:
        problem = oneOf(
          arg,
          'only integers, byte buffers, and strings can be formatted as hex',
          'int',
          'uint',
          'string',
          'bytes',
        );
    }
    if (problem) return problem;
    i += 1 + read;
    argIndex++;
  }
  if (args.length > requested)
    return `too many arguments supplied to string.format (expected ${requested}, got ${args.length})`;
  return undefined;
}
