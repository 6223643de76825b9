/**
 * A reader of protobuf's text format, for the subset the CEL conformance data (cel.dev/expr's
 * tests/simple/testdata/*.textproto) is written in: `name: value` and `name { ... }` (or `name: { ... }`,
 * `name < ... >`), `[a, b]` lists of either, `[type.url/Name]` extension and Any names, `#` comments,
 * single- or double-quoted strings with C escapes (adjacent ones joined), numbers and identifiers. It knows
 * no schema: a message is the list of its fields in order, each value a scalar token or a message, and the
 * caller reads what it expects. Anything else is an error naming the file, line and what was found.
 */

export type TextValue =
  | { kind: 'string'; bytes: Buffer }
  /** A number, an enum name, true/false, inf, nan: as written. */
  | { kind: 'token'; text: string }
  | { kind: 'message'; message: TextMessage };

export interface TextMessage {
  fields: [name: string, value: TextValue][];
}

interface Token {
  kind: 'punct' | 'string' | 'word' | 'name';
  text: string;
  bytes?: Buffer;
  line: number;
}

export class TextProtoError extends Error {
  constructor(file: string, line: number, what: string) {
    super(`${file}:${line}: ${what}`);
    this.name = 'TextProtoError';
  }
}

const SIMPLE_ESCAPES: Record<string, number> = {
  n: 10,
  t: 9,
  r: 13,
  a: 7,
  b: 8,
  f: 12,
  v: 11,
  '\\': 92,
  "'": 39,
  '"': 34,
  '?': 63,
};

function unescape(body: string, fail: (what: string) => never): Buffer {
  const out: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      const cp = body.codePointAt(i)!;
      if (cp > 0xffff) i++;
      out.push(...Buffer.from(String.fromCodePoint(cp), 'utf8'));
      continue;
    }
    const e = body[++i];
    if (e === undefined) fail('a string ends with a backslash');
    if (SIMPLE_ESCAPES[e] !== undefined) out.push(SIMPLE_ESCAPES[e]);
    else if (e === 'x' || e === 'X') {
      const hex = /^[0-9a-fA-F]{1,2}/.exec(body.slice(i + 1))?.[0];
      if (!hex) fail('\\x without hex digits');
      out.push(parseInt(hex, 16));
      i += hex.length;
    } else if (/[0-7]/.test(e)) {
      const oct = /^[0-7]{1,3}/.exec(body.slice(i))![0];
      out.push(parseInt(oct, 8) & 0xff);
      i += oct.length - 1;
    } else if (e === 'u' || e === 'U') {
      const n = e === 'u' ? 4 : 8;
      const hex = body.slice(i + 1, i + 1 + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) fail(`\\${e} needs ${n} hex digits`);
      out.push(...Buffer.from(String.fromCodePoint(parseInt(hex, 16)), 'utf8'));
      i += n;
    } else fail(`unknown escape \\${e}`);
  }
  return Buffer.from(out);
}

function tokenize(text: string, file: string): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\n') {
      line++;
      i++;
    } else if (/\s/.test(c)) i++;
    else if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if ('{}<>:,;'.includes(c)) {
      tokens.push({ kind: 'punct', text: c, line });
      i++;
    } else if (c === '[') {
      // `[type.googleapis.com/google.protobuf.Any]` (a name), or the start of a list.
      const name = /^\[\s*([A-Za-z_][\w.]*(?:\/[\w.]+)?)\s*\]/.exec(text.slice(i));
      const prev = tokens[tokens.length - 1];
      if (
        name &&
        (!prev ||
          prev.text === '{' ||
          prev.text === '<' ||
          prev.text === '}' ||
          prev.text === '>' ||
          prev.kind !== 'punct' ||
          prev.text === ',' ||
          prev.text === ';')
      ) {
        tokens.push({ kind: 'name', text: name[1]!, line });
        i += name[0].length;
      } else {
        tokens.push({ kind: 'punct', text: '[', line });
        i++;
      }
    } else if (c === ']') {
      tokens.push({ kind: 'punct', text: ']', line });
      i++;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) {
        if (text[j] === '\\') j++;
        if (text[j] === '\n') throw new TextProtoError(file, line, 'a string runs past the end of its line');
        j++;
      }
      if (j >= text.length) throw new TextProtoError(file, line, 'a string is not closed');
      const at = line;
      const bytes = unescape(text.slice(i + 1, j), (what) => {
        throw new TextProtoError(file, at, what);
      });
      tokens.push({ kind: 'string', text: text.slice(i, j + 1), bytes, line });
      i = j + 1;
    } else {
      const rest = text.slice(i);
      const word =
        /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[fF]?(?![\w.])/.exec(rest) ??
        /^[-+]?[A-Za-z_][\w.]*/.exec(rest);
      if (!word) throw new TextProtoError(file, line, `unexpected ${JSON.stringify(c)}`);
      tokens.push({ kind: 'word', text: word[0], line });
      i += word[0].length;
    }
  }
  return tokens;
}

/** The message a textproto file holds. */
export function parseTextProto(text: string, file: string): TextMessage {
  const tokens = tokenize(text, file);
  let at = 0;
  const peek = () => tokens[at];
  const lineHere = () => tokens[Math.min(at, tokens.length - 1)]?.line ?? 1;
  const fail = (what: string): never => {
    throw new TextProtoError(file, lineHere(), what);
  };
  const take = (text: string) => {
    if (peek()?.text !== text || peek()?.kind !== 'punct')
      fail(`expected ${JSON.stringify(text)}, found ${peek() ? JSON.stringify(peek()!.text) : 'the end'}`);
    at++;
  };

  const message = (close: string | undefined): TextMessage => {
    const fields: TextMessage['fields'] = [];
    for (;;) {
      const t = peek();
      if (!t) {
        if (close) fail(`expected ${JSON.stringify(close)}, found the end`);
        return { fields };
      }
      if (close && t.kind === 'punct' && t.text === close) {
        at++;
        return { fields };
      }
      if (t.kind !== 'word' && t.kind !== 'name')
        fail(`expected a field name, found ${JSON.stringify(t.text)}`);
      at++;
      const name = t.text;
      let colon = false;
      if (peek()?.kind === 'punct' && peek()!.text === ':') {
        at++;
        colon = true;
      }
      if (peek()?.kind === 'punct' && peek()!.text === '[') {
        if (!colon) fail(`a list after ${name} needs a colon`);
        at++;
        if (!(peek()?.kind === 'punct' && peek()!.text === ']')) {
          for (;;) {
            fields.push([name, value(name, true)]);
            if (peek()?.kind === 'punct' && peek()!.text === ',') {
              at++;
              continue;
            }
            break;
          }
        }
        take(']');
      } else {
        fields.push([name, value(name, colon)]);
      }
      if (peek()?.kind === 'punct' && (peek()!.text === ',' || peek()!.text === ';')) at++;
    }
  };

  const value = (name: string, colon: boolean): TextValue => {
    const t = peek();
    if (!t) return fail(`${name} has no value`);
    if (t.kind === 'punct' && (t.text === '{' || t.text === '<')) {
      at++;
      return { kind: 'message', message: message(t.text === '{' ? '}' : '>') };
    }
    if (!colon) return fail(`${name} needs a colon before a scalar value`);
    if (t.kind === 'string') {
      const parts: Buffer[] = [];
      while (peek()?.kind === 'string') parts.push(tokens[at++]!.bytes!);
      return { kind: 'string', bytes: Buffer.concat(parts) };
    }
    if (t.kind === 'word') {
      at++;
      return { kind: 'token', text: t.text };
    }
    return fail(`${name}: unexpected ${JSON.stringify(t.text)}`);
  };

  return message(undefined);
}

/** Reading a parsed message, with errors that say which field was not what the reader expected. */
export class Fields {
  constructor(
    readonly message: TextMessage,
    readonly where: string,
  ) {}

  names(): string[] {
    return this.message.fields.map(([name]) => name);
  }

  all(name: string): TextValue[] {
    return this.message.fields.filter(([n]) => n === name).map(([, v]) => v);
  }

  has(name: string): boolean {
    return this.message.fields.some(([n]) => n === name);
  }

  messages(name: string): Fields[] {
    return this.all(name).map((v, i) => {
      if (v.kind !== 'message') throw new Error(`${this.where}: ${name} is not a message`);
      return new Fields(v.message, `${this.where}.${name}[${i}]`);
    });
  }

  message1(name: string): Fields | undefined {
    const all = this.messages(name);
    if (all.length > 1) throw new Error(`${this.where}: ${name} given ${all.length} times`);
    return all[0];
  }

  string(name: string): string | undefined {
    const v = this.all(name).at(-1);
    if (v === undefined) return undefined;
    if (v.kind !== 'string') throw new Error(`${this.where}: ${name} is not a string`);
    return v.bytes.toString('utf8');
  }

  bytes(name: string): Buffer | undefined {
    const v = this.all(name).at(-1);
    if (v === undefined) return undefined;
    if (v.kind !== 'string') throw new Error(`${this.where}: ${name} is not a string`);
    return v.bytes;
  }

  token(name: string): string | undefined {
    const v = this.all(name).at(-1);
    if (v === undefined) return undefined;
    if (v.kind !== 'token') throw new Error(`${this.where}: ${name} is not a scalar`);
    return v.text;
  }

  bool(name: string): boolean {
    const t = this.token(name);
    if (t === undefined) return false;
    if (t === 'true' || t === 't' || t === '1' || t === 'True') return true;
    if (t === 'false' || t === 'f' || t === '0' || t === 'False') return false;
    throw new Error(`${this.where}: ${name} is ${t}, not a bool`);
  }
}
