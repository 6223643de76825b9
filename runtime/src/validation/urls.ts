/**
 * URLs as CRD rules see them (k8s.io/apiserver/pkg/cel/library/urls.go): `url()` and `isURL()` take what
 * Go's url.ParseRequestURI takes (an absolute URI or an absolute path, no fragment check), and the
 * getters read the url.Parse of it. Go's net/url works on bytes, so this module does too: a "byte
 * string" here holds one UTF-8 byte per character, and text turns back into a string at the edges.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const toBytes = (s: string) => String.fromCharCode(...encoder.encode(s));
const fromBytes = (b: string) => decoder.decode(Uint8Array.from(b, (c) => c.charCodeAt(0)));

type Mode = 'path' | 'pathSegment' | 'host' | 'zone' | 'userPassword' | 'queryComponent' | 'fragment';

const isAlnum = (c: string) => /^[A-Za-z0-9]$/.test(c);
const isHex = (c: string | undefined) => c !== undefined && /^[0-9A-Fa-f]$/.test(c);

/** net/url's shouldEscape. */
function shouldEscape(c: string, mode: Mode): boolean {
  if (isAlnum(c)) return false;
  if ((mode === 'host' || mode === 'zone') && `!$&'()*+,;=:[]<>"`.includes(c)) return false;
  if ('-_.~'.includes(c)) return false;
  if ('$&+,/:;=?@'.includes(c)) {
    switch (mode) {
      case 'path':
        return c === '?';
      case 'pathSegment':
        return '/;,?'.includes(c);
      case 'userPassword':
        return '@/?:'.includes(c);
      case 'queryComponent':
        return true;
      case 'fragment':
        return false;
      default:
        break;
    }
  }
  if (mode === 'fragment' && '!()*'.includes(c)) return false;
  return true;
}

/** strconv.Quote of a byte string (ASCII printable kept, the rest escaped as Go does). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (c >= 0x20 && c < 0x7f) out += ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x80) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

class UrlError extends Error {}

/** net/url's unescape, on a byte string. */
function unescape(s: string, mode: Mode): string {
  let n = 0;
  let hasPlus = false;
  for (let i = 0; i < s.length;) {
    const c = s[i]!;
    if (c === '%') {
      n++;
      if (i + 2 >= s.length || !isHex(s[i + 1]) || !isHex(s[i + 2])) {
        throw new UrlError(`invalid URL escape ${goQuote(fromBytes(s.slice(i, i + 3)))}`);
      }
      const escaped = s.slice(i, i + 3);
      const v = parseInt(s.slice(i + 1, i + 3), 16);
      if (mode === 'host' && v >> 4 < 8 && escaped !== '%25')
        throw new UrlError(`invalid URL escape ${goQuote(escaped)}`);
      if (mode === 'zone' && escaped !== '%25' && v !== 0x20 && shouldEscape(String.fromCharCode(v), 'host'))
        throw new UrlError(`invalid URL escape ${goQuote(escaped)}`);
      i += 3;
    } else {
      if (c === '+') hasPlus = mode === 'queryComponent';
      else if ((mode === 'host' || mode === 'zone') && c.charCodeAt(0) < 0x80 && shouldEscape(c, mode))
        throw new UrlError(`invalid character ${goQuote(c)} in host name`);
      i++;
    }
  }
  if (n === 0 && !hasPlus) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '%') {
      out += String.fromCharCode(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (c === '+') out += mode === 'queryComponent' ? ' ' : '+';
    else out += c;
  }
  return out;
}

/** net/url's escape, on a byte string. */
function escape(s: string, mode: Mode): string {
  let out = '';
  for (const c of s) {
    if (c === ' ' && mode === 'queryComponent') out += '+';
    else if (shouldEscape(c, mode)) out += `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
    else out += c;
  }
  return out;
}

/** A parsed URL's fields, as byte strings (what Go's url.URL holds). */
export class ParsedURL {
  scheme = '';
  opaque = '';
  user: { username: string; password?: string } | undefined;
  host = '';
  path = '';
  rawPath = '';
  forceQuery = false;
  rawQuery = '';
  fragment = '';
  rawFragment = '';
}

function getScheme(raw: string): [string, string] {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+.-]/.test(c)) {
      if (i === 0) return ['', raw];
      continue;
    }
    if (c === ':') {
      if (i === 0) throw new UrlError('missing protocol scheme');
      return [raw.slice(0, i), raw.slice(i + 1)];
    }
    return ['', raw];
  }
  return ['', raw];
}

const validOptionalPort = (port: string) => port === '' || /^:[0-9]*$/.test(port);

function parseHost(host: string): string {
  if (host.startsWith('[')) {
    const i = host.lastIndexOf(']');
    if (i < 0) throw new UrlError("missing ']' in host");
    const colonPort = host.slice(i + 1);
    if (!validOptionalPort(colonPort)) throw new UrlError(`invalid port ${goQuote(colonPort)} after host`);
    const zone = host.slice(0, i).indexOf('%25');
    if (zone >= 0)
      return (
        unescape(host.slice(0, zone), 'host') +
        unescape(host.slice(zone, i), 'zone') +
        unescape(host.slice(i), 'host')
      );
  } else {
    const i = host.lastIndexOf(':');
    if (i !== -1 && !validOptionalPort(host.slice(i)))
      throw new UrlError(`invalid port ${goQuote(fromBytes(host.slice(i)))} after host`);
  }
  return unescape(host, 'host');
}

const validUserinfo = (s: string) => /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(s);

function parseAuthority(u: ParsedURL, authority: string): void {
  const i = authority.lastIndexOf('@');
  u.host = parseHost(i < 0 ? authority : authority.slice(i + 1));
  if (i < 0) return;
  const userinfo = authority.slice(0, i);
  if (!validUserinfo(userinfo)) throw new UrlError('net/url: invalid userinfo');
  const colon = userinfo.indexOf(':');
  if (colon < 0) u.user = { username: unescape(userinfo, 'userPassword') };
  else
    u.user = {
      username: unescape(userinfo.slice(0, colon), 'userPassword'),
      password: unescape(userinfo.slice(colon + 1), 'userPassword'),
    };
}

function setPath(u: ParsedURL, p: string): void {
  u.path = unescape(p, 'path');
  u.rawPath = escape(u.path, 'path') === p ? '' : p;
}

/** net/url's parse (rawURL without its fragment). */
function parse(raw: string, viaRequest: boolean): ParsedURL {
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new UrlError('net/url: invalid control character in URL');
  if (raw === '' && viaRequest) throw new UrlError('empty url');
  const u = new ParsedURL();
  if (raw === '*') {
    u.path = '*';
    return u;
  }
  let rest: string;
  [u.scheme, rest] = getScheme(raw);
  u.scheme = u.scheme.toLowerCase();
  if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) {
    u.forceQuery = true;
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf('?');
    if (q >= 0) [rest, u.rawQuery] = [rest.slice(0, q), rest.slice(q + 1)];
  }
  if (!rest.startsWith('/')) {
    if (u.scheme !== '') {
      u.opaque = rest;
      return u;
    }
    if (viaRequest) throw new UrlError('invalid URI for request');
    if (rest.split('/', 1)[0]!.includes(':'))
      throw new UrlError('first path segment in URL cannot contain colon');
  }
  if ((u.scheme !== '' || (!viaRequest && !rest.startsWith('///'))) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const i = authority.indexOf('/');
    if (i >= 0) [authority, rest] = [authority.slice(0, i), authority.slice(i)];
    parseAuthority(u, authority);
  }
  setPath(u, rest);
  return u;
}

const wrapped = (raw: string, error: unknown): never => {
  if (error instanceof UrlError)
    throw new Error(`URL parse error during conversion from string: parse ${goQuote(raw)}: ${error.message}`);
  throw error;
};

/** url.ParseRequestURI's error for the string (`parse "…": why`), if it has one. */
export function requestURIError(s: string): string | undefined {
  try {
    parse(toBytes(s), true);
    return undefined;
  } catch (error) {
    if (error instanceof UrlError) return `parse ${goQuote(s)}: ${error.message}`;
    throw error;
  }
}

/** isURL(): whether url.ParseRequestURI takes the string. */
export const isURL = (s: string) => requestURIError(s) === undefined;

/** url(): the url.Parse of a string url.ParseRequestURI takes, or the API server's error. */
export function parseURL(s: string): ParsedURL {
  const raw = toBytes(s);
  try {
    parse(raw, true);
  } catch (error) {
    wrapped(s, error);
  }
  const hash = raw.indexOf('#');
  const head = hash < 0 ? raw : raw.slice(0, hash);
  let u: ParsedURL;
  try {
    u = parse(head, false);
  } catch (error) {
    return wrapped(fromBytes(head), error);
  }
  if (hash >= 0 && hash < raw.length - 1) {
    try {
      const f = raw.slice(hash + 1);
      u.fragment = unescape(f, 'fragment');
      u.rawFragment = escape(u.fragment, 'fragment') === f ? '' : f;
    } catch (error) {
      wrapped(s, error);
    }
  }
  return u;
}

/** splitHostPort of net/url: a numeric port split off, brackets taken off the host. */
function splitHostPort(hostPort: string): [string, string] {
  let host = hostPort;
  let port = '';
  const colon = host.lastIndexOf(':');
  if (colon !== -1 && validOptionalPort(host.slice(colon)))
    [host, port] = [host.slice(0, colon), host.slice(colon + 1)];
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return [host, port];
}

const validEncoded = (s: string, mode: Mode) =>
  [...s].every((c) => `!$&'()*+,;=:@[]%`.includes(c) || !shouldEscape(c, mode));

function escapedPath(u: ParsedURL): string {
  if (u.rawPath !== '' && validEncoded(u.rawPath, 'path')) {
    try {
      if (unescape(u.rawPath, 'path') === u.path) return u.rawPath;
    } catch {
      // Go ignores a raw path that does not unescape.
    }
  }
  if (u.path === '*') return '*';
  return escape(u.path, 'path');
}

function escapedFragment(u: ParsedURL): string {
  if (u.rawFragment !== '' && validEncoded(u.rawFragment, 'fragment')) {
    try {
      if (unescape(u.rawFragment, 'fragment') === u.fragment) return u.rawFragment;
    } catch {
      // As escapedPath.
    }
  }
  return escape(u.fragment, 'fragment');
}

export const urlScheme = (u: ParsedURL) => fromBytes(u.scheme);
export const urlHost = (u: ParsedURL) => fromBytes(u.host);
export const urlHostname = (u: ParsedURL) => fromBytes(splitHostPort(u.host)[0]);
export const urlPort = (u: ParsedURL) => fromBytes(splitHostPort(u.host)[1]);
export const urlEscapedPath = (u: ParsedURL) => fromBytes(escapedPath(u));

/** url.URL.Query(): each key's values, the malformed pairs dropped. */
export function urlQuery(u: ParsedURL): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const pair of u.rawQuery.split('&')) {
    if (pair === '' || pair.includes(';')) continue;
    const eq = pair.indexOf('=');
    try {
      const key = fromBytes(unescape(eq < 0 ? pair : pair.slice(0, eq), 'queryComponent'));
      const value = fromBytes(unescape(eq < 0 ? '' : pair.slice(eq + 1), 'queryComponent'));
      m.set(key, [...(m.get(key) ?? []), value]);
    } catch (error) {
      if (!(error instanceof UrlError)) throw error;
    }
  }
  return m;
}

/** url.URL.String(), what URL equality compares. */
export function urlString(u: ParsedURL): string {
  let out = u.scheme !== '' ? `${u.scheme}:` : '';
  if (u.opaque !== '') out += u.opaque;
  else {
    if (u.scheme !== '' || u.host !== '' || u.user) {
      if (u.host !== '' || u.path !== '' || u.user) out += '//';
      if (u.user) {
        out += escape(u.user.username, 'userPassword');
        if (u.user.password !== undefined) out += `:${escape(u.user.password, 'userPassword')}`;
        out += '@';
      }
      if (u.host !== '') out += escape(u.host, 'host');
    }
    const path = escapedPath(u);
    if (path !== '' && path[0] !== '/' && u.host !== '') out += '/';
    if (out === '' && path.split('/', 1)[0]!.includes(':')) out += './';
    out += path;
  }
  if (u.forceQuery || u.rawQuery !== '') out += `?${u.rawQuery}`;
  if (u.fragment !== '') out += `#${escapedFragment(u)}`;
  return fromBytes(out);
}
