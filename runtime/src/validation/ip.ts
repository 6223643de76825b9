/**
 * IP addresses and CIDRs as CRD rules see them (k8s.io/apiserver/pkg/cel/library/ip.go and cidr.go):
 * Go's net/netip parsing (no leading zeros in an IPv4 octet, one `::`, an embedded IPv4 only at the end)
 * plus what Kubernetes refuses on top (a zone, an IPv4-mapped IPv6 address), and netip's canonical
 * text (RFC 5952), which `ip.isCanonical()` and `string()` give.
 */
import { goQuote } from './urls.js';

/** A netip.Addr: 32 bits for IPv4, 128 for IPv6 (with its zone, which the library refuses later). */
export class IPAddr {
  constructor(
    readonly is4: boolean,
    readonly bits: bigint,
    readonly zone = '',
  ) {}
}

/** A netip.Prefix: its address as written (not masked) and its length. */
export class CIDRPrefix {
  constructor(
    readonly addr: IPAddr,
    readonly length: number,
  ) {}
}

class ParseError extends Error {}

const addrError = (input: string, msg: string, at?: string) =>
  new ParseError(`ParseAddr(${goQuote(input)}): ${msg}${at ? ` (at ${goQuote(at)})` : ''}`);

function parseIPv4(s: string, input = s): bigint {
  const fields: number[] = [];
  let val = 0;
  let digits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c >= '0' && c <= '9') {
      if (digits === 1 && val === 0) throw addrError(input, 'IPv4 field has octet with leading zero');
      val = val * 10 + Number(c);
      digits++;
      if (val > 255) throw addrError(input, 'IPv4 field has value >255');
    } else if (c === '.') {
      if (i === 0 || i === s.length - 1 || s[i - 1] === '.')
        throw addrError(input, 'IPv4 field must have at least one digit', s.slice(i));
      if (fields.length === 3) throw addrError(input, 'IPv4 address too long');
      fields.push(val);
      val = 0;
      digits = 0;
    } else throw addrError(input, 'unexpected character', s.slice(i));
  }
  if (fields.length < 3) throw addrError(input, 'IPv4 address too short');
  fields.push(val);
  return fields.reduce((acc, f) => (acc << 8n) | BigInt(f), 0n);
}

function parseIPv6(input: string): IPAddr {
  let s = input;
  let zone = '';
  const pct = s.indexOf('%');
  if (pct !== -1) {
    [s, zone] = [s.slice(0, pct), s.slice(pct + 1)];
    if (zone === '') throw addrError(input, 'zone must be a non-empty string');
  }
  const ip = new Array<number>(16).fill(0);
  let ellipsis = -1;
  if (s.length >= 2 && s[0] === ':' && s[1] === ':') {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return new IPAddr(false, 0n, zone);
  }
  let i = 0;
  while (i < 16) {
    let off = 0;
    let acc = 0;
    for (; off < s.length; off++) {
      const d = parseInt(s[off]!, 16);
      if (!/[0-9a-fA-F]/.test(s[off]!)) break;
      acc = acc * 16 + d;
      if (acc > 0xffff) throw addrError(input, 'IPv6 field has value >=2^16', s);
    }
    if (off === 0) throw addrError(input, 'each colon-separated field must have at least one digit', s);
    if (off < s.length && s[off] === '.') {
      if (ellipsis < 0 && i !== 12)
        throw addrError(input, 'embedded IPv4 address must replace the final 2 fields of the address', s);
      if (i + 4 > 16)
        throw addrError(input, 'too many hex fields to fit an embedded IPv4 at the end of the address', s);
      let v4: bigint;
      try {
        v4 = parseIPv4(s);
      } catch (error) {
        throw addrError(input, (error as Error).message, s);
      }
      for (let k = 0; k < 4; k++) ip[i + k] = Number((v4 >> BigInt(8 * (3 - k))) & 0xffn);
      s = '';
      i += 4;
      break;
    }
    ip[i] = acc >> 8;
    ip[i + 1] = acc & 0xff;
    i += 2;
    s = s.slice(off);
    if (s.length === 0) break;
    if (s[0] !== ':') throw addrError(input, 'unexpected character, want colon', s);
    if (s.length === 1) throw addrError(input, 'colon must be followed by more characters', s);
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) throw addrError(input, 'multiple :: in address', s);
      ellipsis = i;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }
  if (s.length !== 0) throw addrError(input, 'trailing garbage after address', s);
  if (i < 16) {
    if (ellipsis < 0) throw addrError(input, 'address string too short');
    const n = 16 - i;
    for (let j = i - 1; j >= ellipsis; j--) ip[j + n] = ip[j]!;
    for (let j = ellipsis + n - 1; j >= ellipsis; j--) ip[j] = 0;
  } else if (ellipsis >= 0) throw addrError(input, 'the :: must expand to at least one field of zeros');
  return new IPAddr(
    false,
    ip.reduce((acc, b) => (acc << 8n) | BigInt(b), 0n),
    zone,
  );
}

/** netip.ParseAddr. */
function parseAddr(s: string): IPAddr {
  for (const c of s) {
    if (c === '.') return new IPAddr(true, parseIPv4(s));
    if (c === ':') return parseIPv6(s);
    if (c === '%') throw addrError(s, 'missing IPv6 address');
  }
  throw addrError(s, 'unable to parse IP');
}

const is4In6 = (a: IPAddr) => !a.is4 && a.bits >> 32n === 0xffffn;

/** The library's parseIPAddr: netip's parse, then no zone and no IPv4-mapped IPv6 address. */
export function parseIP(raw: string): IPAddr {
  let addr: IPAddr;
  try {
    addr = parseAddr(raw);
  } catch (error) {
    if (error instanceof ParseError)
      throw new Error(
        `IP Address ${goQuote(raw)} parse error during conversion from string: ${error.message}`,
      );
    throw error;
  }
  if (addr.zone !== '') throw new Error(`IP address ${goQuote(raw)} with zone value is not allowed`);
  if (is4In6(addr)) throw new Error(`IPv4-mapped IPv6 address ${goQuote(raw)} is not allowed`);
  return addr;
}

export function isIP(raw: string): boolean {
  try {
    parseIP(raw);
    return true;
  } catch {
    return false;
  }
}

/** netip.Addr.String(). */
export function ipString(a: IPAddr): string {
  const v4 = (bits: bigint) => [24n, 16n, 8n, 0n].map((s) => String((bits >> s) & 0xffn)).join('.');
  if (a.is4) return v4(a.bits);
  const zone = a.zone ? `%${a.zone}` : '';
  if (is4In6(a)) return `::ffff:${v4(a.bits & 0xffffffffn)}${zone}`;
  const words = Array.from({ length: 8 }, (_, i) => Number((a.bits >> BigInt(16 * (7 - i))) & 0xffffn));
  // The longest run of two or more zero words (the first of equals) becomes "::".
  let start = -1;
  let end = -1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i >= 2 && j - i > end - start) [start, end] = [i, j];
  }
  let out = '';
  for (let i = 0; i < 8; i++) {
    if (i === start) {
      out += '::';
      i = end;
      if (i >= 8) break;
    } else if (i > 0) out += ':';
    out += words[i]!.toString(16);
  }
  return out + zone;
}

/** ip.isCanonical(): whether the text is netip's own rendering of the address. */
export const ipIsCanonical = (raw: string) => ipString(parseIP(raw)) === raw;

export const ipFamily = (a: IPAddr): bigint => (a.is4 ? 4n : 6n);

const octet = (a: IPAddr, i: number) => Number((a.bits >> BigInt(8 * (3 - i))) & 0xffn);
const firstWord = (a: IPAddr) => Number(a.bits >> 112n);

export const ipIsUnspecified = (a: IPAddr) => a.bits === 0n && a.zone === '';
export const ipIsLoopback = (a: IPAddr) => (a.is4 ? octet(a, 0) === 127 : a.bits === 1n);
const isMulticast = (a: IPAddr) => (a.is4 ? (octet(a, 0) & 0xf0) === 0xe0 : firstWord(a) >> 8 === 0xff);
export const ipIsLinkLocalMulticast = (a: IPAddr) =>
  a.is4 ? octet(a, 0) === 224 && octet(a, 1) === 0 && octet(a, 2) === 0 : (firstWord(a) & 0xff0f) === 0xff02;
export const ipIsLinkLocalUnicast = (a: IPAddr) =>
  a.is4 ? octet(a, 0) === 169 && octet(a, 1) === 254 : (firstWord(a) & 0xffc0) === 0xfe80;
export function ipIsGlobalUnicast(a: IPAddr): boolean {
  if (a.is4 && (a.bits === 0n || a.bits === 0xffffffffn)) return false;
  return !(!a.is4 && a.bits === 0n) && !ipIsLoopback(a) && !isMulticast(a) && !ipIsLinkLocalUnicast(a);
}

export const ipEqual = (a: IPAddr, b: IPAddr) => a.is4 === b.is4 && a.bits === b.bits && a.zone === b.zone;

/** netip.ParsePrefix, then no IPv4-mapped IPv6 address; errors as cidr() words them. */
export function parseCIDR(raw: string): CIDRPrefix {
  const fail = (msg: string): never => {
    throw new Error(
      `network address parse error during conversion from string: netip.ParsePrefix(${goQuote(raw)}): ${msg}`,
    );
  };
  const slash = raw.lastIndexOf('/');
  if (slash < 0) fail("no '/'");
  let addr: IPAddr;
  try {
    addr = parseAddr(raw.slice(0, slash));
  } catch (error) {
    if (!(error instanceof ParseError)) throw error;
    return fail(error.message);
  }
  if (!addr.is4 && addr.zone !== '') fail('IPv6 zones cannot be present in a prefix');
  const bitsText = raw.slice(slash + 1);
  // strconv.Atoi's grammar, less the sign and leading zeros netip refuses.
  if (!/^[+-]?[0-9]+$/.test(bitsText) || (bitsText.length > 1 && !/^[1-9]/.test(bitsText)))
    fail(`bad bits after slash: ${goQuote(bitsText)}`);
  const bits = Number(bitsText);
  if (bits < 0 || bits > (addr.is4 ? 32 : 128)) fail('prefix length out of range');
  if (is4In6(addr)) throw new Error(`IPv4-mapped IPv6 address ${goQuote(raw)} is not allowed`);
  return new CIDRPrefix(addr, bits);
}

/** cidr(): the library wraps parseCIDR's error once more. */
export function cidrOf(raw: string): CIDRPrefix {
  try {
    return parseCIDR(raw);
  } catch (error) {
    throw new Error(`network address parse error during conversion from string: ${(error as Error).message}`);
  }
}

export function isCIDR(raw: string): boolean {
  try {
    parseCIDR(raw);
    return true;
  } catch {
    return false;
  }
}

const width = (a: IPAddr) => (a.is4 ? 32 : 128);
const maskBits = (a: IPAddr, length: number): bigint => {
  const w = BigInt(width(a));
  const keep = BigInt(length);
  return (a.bits >> (w - keep)) << (w - keep);
};

export const cidrContainsIP = (c: CIDRPrefix, ip: IPAddr) =>
  ip.zone === '' && c.addr.is4 === ip.is4 && maskBits(ip, c.length) === maskBits(c.addr, c.length);

export function cidrContainsCIDR(c: CIDRPrefix, other: CIDRPrefix): boolean {
  if (c.addr.is4 !== other.addr.is4) return false;
  const min = Math.min(c.length, other.length);
  return maskBits(c.addr, min) === maskBits(other.addr, min) && c.length <= other.length;
}

export const cidrMasked = (c: CIDRPrefix) =>
  new CIDRPrefix(new IPAddr(c.addr.is4, maskBits(c.addr, c.length)), c.length);
export const cidrString = (c: CIDRPrefix) => `${ipString(c.addr)}/${c.length}`;
export const cidrEqual = (a: CIDRPrefix, b: CIDRPrefix) => a.length === b.length && ipEqual(a.addr, b.addr);
