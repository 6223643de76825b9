/**
 * Strings the API server gives CEL rules as values of another type (k8s.io/apiserver/pkg/cel/common's
 * UnstructuredToVal, by the schema's format, as cel-types.ts declares them): `date-time` and `date` as
 * timestamps, `duration` as a duration, `byte` (base64) as bytes. A string that does not parse stays a
 * string: the schema check reports its format, and a rule on it fails, as it would on the API server.
 */
import type { Environment } from '@marcbachmann/cel-js';

/** RFC 3339 and the shorter forms go-openapi's strfmt.ParseDateTime takes (no seconds, no zone: UTC). */
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)([Zz]|[+-]\d{2}:?\d{2})?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** Standard base64 with padding, as Go's base64.StdEncoding decodes it. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function timestamp(text: string): Date | undefined {
  const m = DATE_TIME.exec(text);
  if (!m) return undefined;
  const zone =
    m[3] === undefined || /^[Zz]$/.test(m[3]) ? 'Z' : m[3].replace(/^([+-]\d{2})(\d{2})$/, '$1:$2');
  const t = new Date(`${m[1]}T${m[2]}${zone}`);
  return Number.isNaN(t.getTime()) ? undefined : t;
}

/** `text` as the API server hands it to rules, given its schema format; `duration` parses with cel-js's own. */
export function stringValue(
  text: string,
  format: string | undefined,
  duration: (text: string) => unknown,
): unknown {
  switch (format) {
    case 'date-time':
      return timestamp(text) ?? text;
    case 'date': {
      if (!DATE.test(text)) return text;
      const t = new Date(`${text}T00:00:00Z`);
      return Number.isNaN(t.getTime()) ? text : t;
    }
    case 'duration':
      try {
        return duration(text);
      } catch {
        const days = openAPIDuration(text);
        if (days === undefined) return text;
        try {
          return duration(days);
        } catch {
          return text;
        }
      }
    case 'byte':
      return BASE64.test(text) ? new Uint8Array(Buffer.from(text, 'base64')) : text;
    default:
      return text;
  }
}

/** go-openapi's unit names (strfmt.ParseDuration), each with its length in nanoseconds. */
const UNITS: ReadonlyMap<string, bigint> = new Map(
  (
    [
      [['ns', 'nano'], 1n],
      [['us', 'µs', 'micro'], 1_000n],
      [['ms', 'milli'], 1_000_000n],
      [['s', 'sec'], 1_000_000_000n],
      [['m', 'min'], 60_000_000_000n],
      [['h', 'hr', 'hour'], 3_600_000_000_000n],
      [['d', 'day'], 86_400_000_000_000n],
      [['w', 'wk', 'week'], 604_800_000_000_000n],
    ] as const
  ).flatMap(([names, ns]) => names.map((name) => [name, ns] as const)),
);

/**
 * What go-openapi's strfmt.ParseDuration (the API server's reading of a `duration` string, after Go's
 * time.ParseDuration failed) makes of `1d12h` or `2w`: the sum of each number and unit found, as
 * seconds cel-js parses; undefined when it finds none it knows.
 */
function openAPIDuration(text: string): string | undefined {
  let ns = 0n;
  let found = false;
  for (const [, count, unit] of text.matchAll(/(\d+)\s*([A-Za-zµ]+)/g)) {
    const length = UNITS.get(unit!.trim().toLowerCase());
    if (length === undefined || count!.length > 18) return undefined;
    ns += BigInt(count!) * length;
    found = true;
  }
  if (!found) return undefined;
  const fraction = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${ns / 1_000_000_000n}${fraction ? `.${fraction}` : ''}s`;
}

/** A parser of durations in cel-js's own representation, from an environment of the run. */
export function durationParser(env: Environment): (text: string) => unknown {
  const parse = env.parse('duration(self)') as unknown as (vars: { self: string }) => unknown;
  return (text) => parse({ self: text });
}
