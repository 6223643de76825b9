/**
 * The marker value grammar of DESIGN §3, the same as controller-gen's: integers, floats, booleans, strings
 * (`"..."`, `'...'`, backticks, or bare up to `,` `;` `}`), lists (`a;b;c` or `{a,b}`) and maps (`{k: v}`).
 * Values are parsed against the argument type a marker definition declares; `any` guesses the type from
 * the text as controller-gen does.
 */

/** The type of one marker argument; `V` is the type of the values it parses to. */
export type ArgType<V = unknown> = ArgKind & { readonly __value?: V };

type ArgKind =
  | { kind: 'int' }
  | { kind: 'number' }
  | { kind: 'string' }
  | { kind: 'bool' }
  | { kind: 'any' }
  | { kind: 'json' }
  | { kind: 'list'; item: ArgType }
  | { kind: 'map'; item: ArgType };

const int: ArgType<number> = { kind: 'int' };
const number: ArgType<number> = { kind: 'number' };
const string: ArgType<string> = { kind: 'string' };
const bool: ArgType<boolean> = { kind: 'bool' };
const any: ArgType = { kind: 'any' };
const json: ArgType = { kind: 'json' };

export const T = {
  int,
  number,
  string,
  bool,
  any,
  json,
  list: <V>(item: ArgType<V>): ArgType<V[]> => ({ kind: 'list', item }),
  map: <V>(item: ArgType<V>): ArgType<Record<string, V>> => ({ kind: 'map', item }),
};

/** A syntax error at `offset` characters into the text that was parsed. */
export class GrammarError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = 'GrammarError';
  }
}

/** Describes an argument type for messages: `int`, `[]string`, `map[string]any`. */
export function typeName(type: ArgType): string {
  switch (type.kind) {
    case 'list':
      return `[]${typeName(type.item)}`;
    case 'map':
      return `map[string]${typeName(type.item)}`;
    case 'number':
      return 'float';
    case 'json':
      return 'JSON';
    default:
      return type.kind;
  }
}

const NUMBER = /^-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?/;
const INTEGER = /^-?(?:0[xX][0-9a-fA-F]+|\d+)/;
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*/;

/** A cursor over the text of a marker's arguments. */
export class Cursor {
  pos = 0;
  constructor(readonly text: string) {}

  get eof(): boolean {
    return this.pos >= this.text.length;
  }

  skipSpace(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos] ?? '')) this.pos++;
  }

  /** The next character that is not white space, or '' at the end. */
  peek(): string {
    this.skipSpace();
    return this.text[this.pos] ?? '';
  }

  rest(): string {
    return this.text.slice(this.pos);
  }

  match(re: RegExp): string | undefined {
    this.skipSpace();
    const m = re.exec(this.rest());
    if (!m) return undefined;
    this.pos += m[0].length;
    return m[0];
  }

  expect(ch: string, what: string): void {
    if (this.peek() !== ch) throw new GrammarError(`expected ${what}, got ${this.describeNext()}`, this.pos);
    this.pos++;
  }

  describeNext(): string {
    const next = this.peek();
    return next === '' ? 'end of marker' : JSON.stringify(this.rest().slice(0, 20));
  }
}

/** Whether the text ahead, after white space, is a delimiter of a bare value. */
function isDelimiter(ch: string, inMap: boolean): boolean {
  return ch === ',' || ch === ';' || ch === '}' || ch === '' || (inMap && ch === ':');
}

function parseQuoted(cur: Cursor): string {
  const start = cur.pos;
  const quote = cur.text[cur.pos];
  if (quote === '`') {
    const end = cur.text.indexOf('`', cur.pos + 1);
    if (end < 0) throw new GrammarError('unterminated raw string', start);
    cur.pos = end + 1;
    return cur.text.slice(start + 1, end);
  }
  let i = cur.pos + 1;
  let out = '';
  for (;;) {
    const ch = cur.text[i];
    if (ch === undefined) throw new GrammarError('unterminated string', start);
    if (ch === quote) break;
    if (ch === '\\') {
      const next = cur.text[i + 1];
      if (next === undefined) throw new GrammarError('unterminated string', start);
      const simple: Record<string, string> = {
        n: '\n',
        t: '\t',
        r: '\r',
        '\\': '\\',
        '"': '"',
        "'": "'",
        '`': '`',
        '/': '/',
        b: '\b',
        f: '\f',
        v: '\v',
        a: '\x07',
      };
      const mapped = simple[next];
      if (mapped !== undefined) {
        out += mapped;
        i += 2;
        continue;
      }
      const hex = /^(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8}))/.exec(cur.text.slice(i + 1));
      if (hex) {
        out += String.fromCodePoint(parseInt(hex[1] ?? hex[2] ?? hex[3] ?? '0', 16));
        i += 1 + hex[0].length;
        continue;
      }
      throw new GrammarError(`unknown escape sequence \\${next} in string`, i);
    }
    out += ch;
    i++;
  }
  cur.pos = i + 1;
  return out;
}

function parseString(cur: Cursor, inMap: boolean): string {
  const next = cur.peek();
  if (next === '"' || next === "'" || next === '`') return parseQuoted(cur);
  const start = cur.pos;
  while (!cur.eof) {
    const ch = cur.text[cur.pos] ?? '';
    if (isDelimiter(ch, inMap)) break;
    // As controller-gen's tokenizer: a quoted part of a bare value (`[?(@.type=="Ready")]`) is one token.
    if (ch === '"' || ch === '`') {
      parseQuoted(cur);
      continue;
    }
    cur.pos++;
  }
  return cur.text.slice(start, cur.pos).trim();
}

function parseList(cur: Cursor, item: ArgType): unknown[] {
  const out: unknown[] = [];
  if (cur.peek() === '{') {
    cur.pos++;
    while (cur.peek() !== '}' && cur.peek() !== '') {
      out.push(parseValue(cur, item, true));
      if (cur.peek() === '}') break;
      cur.expect(',', 'a comma or "}"');
    }
    cur.expect('}', 'a closing "}"');
    return out;
  }
  for (let next = cur.peek(); next !== ',' && next !== '}' && next !== ''; next = cur.peek()) {
    out.push(parseValue(cur, item, true));
    const after = cur.peek();
    if (after === ',' || after === '}' || after === '') break;
    if (after !== ';') throw new GrammarError(`expected ";" or ",", got ${cur.describeNext()}`, cur.pos);
    cur.pos++;
  }
  return out;
}

function parseMap(cur: Cursor, item: ArgType): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  cur.expect('{', 'an opening "{"');
  while (cur.peek() !== '}' && cur.peek() !== '') {
    const key = parseString(cur, true);
    cur.expect(':', 'a colon');
    out[key] = parseValue(cur, item, false);
    if (cur.peek() === '}') break;
    cur.expect(',', 'a comma or "}"');
  }
  cur.expect('}', 'a closing "}"');
  return out;
}

/** Guesses the type of an `any` value the way controller-gen does. */
function guessType(cur: Cursor, allowList: boolean): ArgType {
  const save = cur.pos;
  try {
    if (allowList) {
      const item = guessType(cur, false);
      // A `;` before the next `,` makes it a list.
      const probe = new Cursor(cur.text);
      probe.pos = cur.pos;
      try {
        parseValue(probe, item, true);
        if (probe.peek() === ';') return T.list(item);
      } catch {
        // not a list; fall through
      }
      return item;
    }
    const next = cur.peek();
    if (next === '"' || next === "'" || next === '`') return T.string;
    if (next === '{') {
      cur.pos++;
      const first = cur.peek();
      if (first === '}') return T.map(T.any);
      const itemType = guessType(cur, false);
      if (itemType.kind === 'string') {
        parseString(cur, true);
        if (cur.peek() === ':') return T.map(T.any);
      }
      return T.list(itemType);
    }
    const ident = /^(true|false)(?![A-Za-z0-9_])/.exec(cur.rest());
    if (ident) {
      cur.pos += ident[0].length;
      if (isDelimiter(cur.peek(), false)) return T.bool;
      return T.string;
    }
    const num = NUMBER.exec(cur.rest());
    if (num) {
      cur.pos += num[0].length;
      if (isDelimiter(cur.peek(), false)) return /[.eE]/.test(num[0]) ? T.number : T.int;
    }
    return T.string;
  } finally {
    cur.pos = save;
  }
}

/** Parses one value of `type` at the cursor. */
export function parseValue(cur: Cursor, type: ArgType, inList = false): unknown {
  switch (type.kind) {
    case 'int': {
      const start = cur.pos;
      const text = cur.match(INTEGER);
      if (text === undefined || /^[.eE]/.test(cur.text[cur.pos] ?? '')) {
        cur.pos = start;
        throw new GrammarError(`expected an integer, got ${cur.describeNext()}`, skipSpaceAt(cur));
      }
      return integer(text, cur.pos - text.length);
    }
    case 'number': {
      const text = cur.match(NUMBER);
      if (text === undefined) throw new GrammarError(`expected a number, got ${cur.describeNext()}`, cur.pos);
      return Number(text);
    }
    case 'bool': {
      const text = cur.match(IDENT);
      if (text !== 'true' && text !== 'false') {
        if (text !== undefined) cur.pos -= text.length;
        throw new GrammarError(`expected true or false, got ${cur.describeNext()}`, cur.pos);
      }
      return text === 'true';
    }
    case 'string':
      return parseString(cur, false);
    case 'json': {
      const start = skipSpaceAt(cur);
      const text = cur.rest().trim();
      cur.pos = cur.text.length;
      if (text.startsWith('ref(')) return undefined;
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new GrammarError(`expected a JSON value, got ${JSON.stringify(text)}`, start);
      }
    }
    case 'list':
      return parseList(cur, type.item);
    case 'map':
      return parseMap(cur, type.item);
    case 'any':
      return parseValue(cur, guessType(cur, !inList), inList);
  }
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * The value of an integer literal at `offset`. As controller-gen (Go's int64) refuses one out of the int64
 * range; one beyond ±2^53 would silently lose digits as a JavaScript number (and be written `1e+26`,
 * which the API server refuses for an integer field), so that is an error too.
 */
function integer(text: string, offset: number): number {
  const negative = text.startsWith('-');
  const digits = negative ? text.slice(1) : text;
  const magnitude = BigInt(digits.toLowerCase().startsWith('0x') ? digits : digits.replace(/^0+(?=\d)/, ''));
  const value = negative ? -magnitude : magnitude;
  if (value < INT64_MIN || value > INT64_MAX) {
    throw new GrammarError(`integer ${text} is out of the int64 range`, offset);
  }
  if (value < BigInt(Number.MIN_SAFE_INTEGER) || value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new GrammarError(
      `integer ${text} is beyond ±${Number.MAX_SAFE_INTEGER}, more than kubesmith keeps exactly`,
      offset,
    );
  }
  return Number(value);
}

function skipSpaceAt(cur: Cursor): number {
  cur.skipSpace();
  return cur.pos;
}

export { IDENT };
