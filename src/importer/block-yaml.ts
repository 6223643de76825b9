/**
 * A fast reader of the block YAML that tools emit (controller-gen, kubectl, Helm, yq): block mappings and
 * sequences, plain, quoted and block scalars, empty flow collections, comments and `---`/`...` markers.
 * It gives the same values as the yaml package's `parseAllDocuments(text).map(d => d.toJS())` with its YAML
 * 1.2 core schema, at a fraction of the time (the full parser builds a CST, then nodes, then the values).
 *
 * It reads nothing it is unsure of: anchors, aliases, tags, directives, flow collections that are not empty,
 * complex or non-string keys, duplicate keys, tabs, carriage returns, control characters, a BOM, explicit
 * indentation indicators, scalars at a document's root, and anything malformed make it answer `undefined`,
 * and the caller then reads the whole text with the yaml package, which gives the values or the positioned
 * error it always gave. test/importer/block-yaml.test.ts compares both readers on fixtures and a fuzz corpus.
 */

/** Thrown (without a stack) when the text needs the full parser. */
const UNSUPPORTED = Object.freeze({ unsupported: true });

// Characters the reader leaves to the full parser anywhere in the text (tab, CR, other controls, NEL, BOM,
// line and paragraph separators): YAML gives several of them meanings of their own.
// eslint-disable-next-line no-control-regex -- the control characters are what it looks for
const UNSUPPORTED_CHARACTERS = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]/;

/** The characters of a plain key (a name, a path, a dotted or dashed word) by char code: 2 may start one. */
const KEY_CHARACTERS = new Uint8Array(128);
for (const ch of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./$')
  KEY_CHARACTERS[ch.charCodeAt(0)] = 2;
for (const ch of '@~+=-') KEY_CHARACTERS[ch.charCodeAt(0)] = 1;

/** The index of the `:` ending a plain key at `line[col]` (then a space or the line's end), or -1. */
function plainKeyEnd(line: string, col: number): number {
  if (KEY_CHARACTERS[line.charCodeAt(col)] !== 2) return -1;
  let at = col + 1;
  while (at < line.length && (KEY_CHARACTERS[line.charCodeAt(at)] ?? 0) > 0) at++;
  if (line.charCodeAt(at) !== 0x3a /* : */) return -1;
  return at + 1 === line.length || line.charCodeAt(at + 1) === 0x20 ? at : -1;
}

/** YAML limits implicit keys to 1024 characters; longer ones are left to the full parser and its error. */
const MAX_KEY_LENGTH = 1000;

/** Deeper nesting is left to the full parser (the reader recurses once per level). */
const MAX_DEPTH = 500;

const enum Kind {
  Blank,
  Comment,
  Marker,
  Content,
}

const DOUBLE_QUOTED_ESCAPES: Readonly<Record<string, string>> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  N: '\u0085',
  _: '\u00a0',
  L: '\u2028',
  P: '\u2029',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
};

/** The value of a plain scalar under YAML 1.2's core schema, as the yaml package resolves it. */
export function resolvePlain(text: string): unknown {
  // Decided by the first character: a null, a boolean or a number starts with one of these only.
  switch (text[0]) {
    case undefined:
      return null;
    case '~':
      return text === '~' ? null : text;
    case 'n':
    case 'N':
      return text === 'null' || text === 'Null' || text === 'NULL' ? null : text;
    case 't':
    case 'T':
      return text === 'true' || text === 'True' || text === 'TRUE' ? true : text;
    case 'f':
    case 'F':
      return text === 'false' || text === 'False' || text === 'FALSE' ? false : text;
  }
  const first = text.charCodeAt(0);
  if (!((first >= 0x30 && first <= 0x39) || first === 0x2b || first === 0x2d || first === 0x2e)) return text;
  if (/^0o[0-7]+$/.test(text)) return parseInt(text.slice(2), 8);
  if (/^[-+]?[0-9]+$/.test(text)) return parseInt(text, 10);
  if (/^0x[0-9a-fA-F]+$/.test(text)) return parseInt(text.slice(2), 16);
  if (/^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/.test(text)) {
    if (text.slice(-3).toLowerCase() === 'nan') return NaN;
    return text[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  if (/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/.test(text)) return parseFloat(text);
  if (/^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/.test(text)) return parseFloat(text);
  return text;
}

const trimSpacesEnd = (s: string) => {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 0x20) end--;
  return s.slice(0, end);
};
const trimSpacesStart = (s: string) => {
  let start = 0;
  while (start < s.length && s.charCodeAt(start) === 0x20) start++;
  return s.slice(start);
};

/** A multi-line flow scalar's lines folded as YAML does: a break is a space, n empty lines n breaks. */
function unfold(parts: readonly string[]): string {
  if (parts.length === 1) return parts[0] ?? '';
  let value = trimSpacesEnd(parts[0] ?? '');
  let separator = ' ';
  for (let i = 1; i < parts.length - 1; i++) {
    const line = trimSpacesStart(trimSpacesEnd(parts[i] ?? ''));
    if (line === '') {
      if (separator === '\n') value += separator;
      else separator = '\n';
    } else {
      value += separator + line;
      separator = ' ';
    }
  }
  return value + separator + trimSpacesStart(parts[parts.length - 1] ?? '');
}

/** The value of a double-quoted scalar's source (between its quotes, line breaks included). */
function doubleQuoted(source: string): string {
  let value = '';
  for (let i = 0; i < source.length; i++) {
    const ch = source[i] as string;
    if (ch === '\n') {
      let fold = '';
      while (source[i + 1] === ' ' || source[i + 1] === '\n') if (source[++i] === '\n') fold += '\n';
      value += fold || ' ';
    } else if (ch === '\\') {
      const next = source[++i] as string;
      const escaped = DOUBLE_QUOTED_ESCAPES[next];
      if (escaped !== undefined) value += escaped;
      else if (next === '\n') {
        // An escaped line break joins the lines; the next line's indentation goes too.
        while (source[i + 1] === ' ') i++;
      } else if (next === 'x' || next === 'u' || next === 'U') {
        const length = next === 'x' ? 2 : next === 'u' ? 4 : 8;
        const hex = source.substr(i + 1, length);
        if (hex.length !== length || !/^[0-9a-fA-F]+$/.test(hex)) throw UNSUPPORTED;
        const code = parseInt(hex, 16);
        if (code > 0x10ffff) throw UNSUPPORTED;
        value += String.fromCodePoint(code);
        i += length;
      } else throw UNSUPPORTED;
    } else if (ch === ' ') {
      // Spaces before a line break are dropped, others kept.
      const start = i;
      while (source[i + 1] === ' ') i++;
      if (source[i + 1] !== '\n') value += source.slice(start, i + 1);
    } else value += ch;
  }
  return value;
}

class BlockReader {
  private readonly lines: string[];
  /** Each line's indentation (leading spaces); -1 for `---` and `...` lines, which end every node. */
  private readonly indents: Int32Array;
  private readonly kinds: Uint8Array;
  /** The line after the node read last: the next content or marker line (blank and comment lines skipped). */
  private next = 0;

  constructor(text: string) {
    this.lines = text.split('\n');
    const count = this.lines.length;
    this.indents = new Int32Array(count);
    this.kinds = new Uint8Array(count);
    for (let i = 0; i < count; i++) {
      const line = this.lines[i] as string;
      let indent = 0;
      while (line.charCodeAt(indent) === 0x20) indent++;
      let kind = Kind.Content;
      if (indent === line.length) kind = Kind.Blank;
      else if (line.charCodeAt(indent) === 0x23 /* # */) kind = Kind.Comment;
      else if (
        indent === 0 &&
        (line.startsWith('---') || line.startsWith('...')) &&
        (line.length === 3 || line[3] === ' ')
      ) {
        kind = Kind.Marker;
        indent = -1;
      }
      this.indents[i] = indent;
      this.kinds[i] = kind;
    }
  }

  /** Every document's value (null for an empty one). */
  documents(): unknown[] {
    const values: unknown[] = [];
    let open = false;
    let value: unknown = null;
    let i = this.skip(0);
    while (i < this.lines.length) {
      const line = this.lines[i] as string;
      if (this.kinds[i] === Kind.Marker) {
        const rest = line.slice(3).trimStart();
        // Content after a marker (`--- |`, `--- !tag`, `... x`) is left to the full parser.
        if (rest !== '' && !rest.startsWith('#')) throw UNSUPPORTED;
        if (line.startsWith('---')) {
          if (open) values.push(value);
          open = true;
          value = null;
        } else {
          if (!open) throw UNSUPPORTED;
          values.push(value);
          open = false;
          value = null;
        }
        i = this.skip(i + 1);
        continue;
      }
      if (line.startsWith('%')) throw UNSUPPORTED; // a directive
      // Content: a document begins (implicitly, or after its `---`) and holds one node.
      if (open && value !== null) throw UNSUPPORTED;
      open = true;
      value = this.node(i, this.indents[i] as number, -1, 0);
      if (value === null) throw UNSUPPORTED;
      i = this.next;
      if (i < this.lines.length && this.kinds[i] !== Kind.Marker) throw UNSUPPORTED;
    }
    if (open) values.push(value);
    return values;
  }

  /** The first line from `i` on that is not blank or a comment. */
  private skip(i: number): number {
    while (i < this.lines.length && (this.kinds[i] === Kind.Blank || this.kinds[i] === Kind.Comment)) i++;
    return i;
  }

  /**
   * The node that starts at line `i`, column `col`: the rest of a line after `key: ` or `- `, or a line of
   * its own. `parent` is the indentation of the collection that holds it (-1 at a document's root); `inline`
   * says the node follows `key: ` on its line, where only a scalar may.
   */
  private node(i: number, col: number, parent: number, depth: number, inline = false): unknown {
    if (depth > MAX_DEPTH) throw UNSUPPORTED;
    // After `key: ` only a scalar may follow; scalar() and plainLine() leave `- x` and `a: b` there to the
    // full parser.
    if (inline) return this.scalar(i, col, parent);
    const line = this.lines[i] as string;
    const ch = line[col];
    if (ch === '-' && (line.length === col + 1 || line[col + 1] === ' ')) return this.sequence(i, col, depth);
    const key = this.key(line, col);
    if (key !== undefined) return this.mapping(i, col, depth, key);
    if (parent < 0) throw UNSUPPORTED; // a scalar document
    return this.scalar(i, col, parent);
  }

  /** The key at `line[col]` and the column after its `:`, or undefined when no simple key is there. */
  private key(line: string, col: number): [string, number] | undefined {
    const quote = line[col];
    if (quote === '"' || quote === "'") {
      const end = quote === '"' ? closingDoubleQuote(line, col + 1) : closingSingleQuote(line, col + 1);
      if (end < 0 || line[end + 1] !== ':' || (end + 2 < line.length && line[end + 2] !== ' '))
        return undefined;
      const source = line.slice(col + 1, end);
      return [quote === '"' ? doubleQuoted(source) : source.replace(/''/g, "'"), end + 2];
    }
    const end = plainKeyEnd(line, col);
    if (end < 0) return undefined;
    const key = line.slice(col, end);
    // A key YAML would read as null, a boolean or a number becomes some other string in JavaScript.
    if (typeof resolvePlain(key) !== 'string') throw UNSUPPORTED;
    return [key, end + 1];
  }

  /** The mapping at line `i`, column `indent`, whose first key (and the column after it) is `first`. */
  private mapping(
    i: number,
    indent: number,
    depth: number,
    first: [string, number],
  ): Record<string, unknown> {
    const map: Record<string, unknown> = {};
    let found: [string, number] | undefined = first;
    for (;;) {
      const line = this.lines[i] as string;
      if (!found) throw UNSUPPORTED;
      const [key, after] = found;
      if (key.length > MAX_KEY_LENGTH || key === '__proto__' || Object.hasOwn(map, key)) throw UNSUPPORTED;
      let valueCol = after;
      while (line.charCodeAt(valueCol) === 0x20) valueCol++;
      if (valueCol === line.length || line[valueCol] === '#') {
        // The value is on the lines below: more indented, or a sequence at the key's own indentation.
        const below = this.skip(i + 1);
        const belowIndent = below < this.lines.length ? (this.indents[below] as number) : -1;
        if (belowIndent > indent) map[key] = this.node(below, belowIndent, indent, depth + 1);
        else if (belowIndent === indent && isSequenceEntry(this.lines[below] as string, indent))
          map[key] = this.sequence(below, indent, depth + 1);
        else {
          map[key] = null;
          this.next = below;
        }
      } else map[key] = this.node(i, valueCol, indent, depth + 1, true);
      i = this.next;
      if (i >= this.lines.length) return map;
      const nextIndent = this.indents[i] as number;
      if (nextIndent < indent) return map;
      if (nextIndent > indent) throw UNSUPPORTED;
      found = this.key(this.lines[i] as string, indent);
    }
  }

  private sequence(i: number, indent: number, depth: number): unknown[] {
    const items: unknown[] = [];
    for (;;) {
      const line = this.lines[i] as string;
      let valueCol = indent + 1;
      while (line.charCodeAt(valueCol) === 0x20) valueCol++;
      if (valueCol === line.length || line[valueCol] === '#') {
        const below = this.skip(i + 1);
        const belowIndent = below < this.lines.length ? (this.indents[below] as number) : -1;
        if (belowIndent > indent) items.push(this.node(below, belowIndent, indent, depth + 1));
        else {
          items.push(null);
          this.next = below;
        }
      } else items.push(this.node(i, valueCol, indent, depth + 1));
      i = this.next;
      if (i >= this.lines.length) return items;
      const nextIndent = this.indents[i] as number;
      if (nextIndent < indent) return items;
      if (nextIndent > indent) throw UNSUPPORTED;
      // A key at the sequence's indentation belongs to the mapping that holds the sequence.
      if (!isSequenceEntry(this.lines[i] as string, indent)) return items;
    }
  }

  private scalar(i: number, col: number, parent: number): unknown {
    const line = this.lines[i] as string;
    const ch = line[col];
    switch (ch) {
      case '|':
      case '>':
        return this.blockScalar(i, col, parent);
      case "'":
      case '"':
        return this.quoted(i, col, parent);
      case '[':
      case '{': {
        if (line[col + 1] !== (ch === '[' ? ']' : '}')) throw UNSUPPORTED;
        this.endOfLine(line, col + 2);
        this.next = this.skip(i + 1);
        return ch === '[' ? [] : {};
      }
      case '-':
      case '?':
      case ':':
        if (ch !== '-' || line[col + 1] === undefined || line[col + 1] === ' ') throw UNSUPPORTED;
        return this.plain(i, col, parent);
      default:
        if (',#&*!%@`]}'.includes(ch ?? ',')) throw UNSUPPORTED;
        return this.plain(i, col, parent);
    }
  }

  /** Only spaces or a comment may follow a scalar on its line. */
  private endOfLine(line: string, col: number): void {
    let at = col;
    while (line.charCodeAt(at) === 0x20) at++;
    if (at === line.length) return;
    if (line[at] !== '#' || at === col) throw UNSUPPORTED;
  }

  private plain(i: number, col: number, parent: number): unknown {
    let line = this.lines[i] as string;
    let comment = line.indexOf(' #', col);
    const parts = [plainLine(line, col, comment)];
    let breaks = 0;
    let at = i + 1;
    // More-indented lines continue the scalar, until a comment ends it (later lines then belong to the
    // parent, which leaves them to the full parser).
    while (comment < 0 && at < this.lines.length) {
      const kind = this.kinds[at];
      if (kind === Kind.Blank) {
        breaks++;
        at++;
        continue;
      }
      if (kind !== Kind.Content || (this.indents[at] as number) <= parent) break;
      line = this.lines[at] as string;
      const from = this.indents[at] as number;
      comment = line.indexOf(' #', from);
      // Any character but `#` (a comment line, which ends the scalar) may start a continuation line;
      // plainLine leaves `: ` to the full parser.
      parts.push(breaks > 0 ? '\n'.repeat(breaks) : ' ', plainLine(line, from, comment));
      breaks = 0;
      at++;
    }
    this.next = this.skip(at);
    return resolvePlain(parts.length === 1 ? (parts[0] as string) : parts.join(''));
  }

  private quoted(i: number, col: number, parent: number): string {
    const double = this.lines[i]?.[col] === '"';
    const closing = double ? closingDoubleQuote : closingSingleQuote;
    // The source between the quotes; `lineStart` is where its last line begins in it, `offset` that
    // line's column of source index `lineStart` (the first line's source begins after the opening quote).
    let source = (this.lines[i] as string).slice(col + 1);
    let lineStart = 0;
    let offset = col + 1;
    let end = closing(source, 0);
    let at = i;
    while (end < 0) {
      // The scalar goes on to the next line, which must be blank or more indented than its parent.
      at++;
      if (at >= this.lines.length || this.kinds[at] === Kind.Marker) throw UNSUPPORTED;
      if (this.kinds[at] !== Kind.Blank && (this.indents[at] as number) <= parent) throw UNSUPPORTED;
      lineStart = source.length + 1;
      offset = 0;
      source += '\n' + (this.lines[at] as string);
      end = closing(source, lineStart);
    }
    this.endOfLine(this.lines[at] as string, end - lineStart + offset + 1);
    const inner = source.slice(0, end);
    this.next = this.skip(at + 1);
    return double ? doubleQuoted(inner) : unfold(inner.split('\n')).replace(/''/g, "'");
  }

  private blockScalar(i: number, col: number, parent: number): string {
    const line = this.lines[i] as string;
    const folded = line[col] === '>';
    let chomp = line[col + 1];
    let headerEnd = col + 2;
    if (chomp !== '-' && chomp !== '+') {
      chomp = '';
      headerEnd = col + 1;
    }
    this.endOfLine(line, headerEnd);
    // Leading empty lines, then the first content line, which sets the indentation.
    let first = i + 1;
    let widestLeading = 0;
    while (first < this.lines.length && this.kinds[first] === Kind.Blank) {
      widestLeading = Math.max(widestLeading, (this.lines[first] as string).length);
      first++;
    }
    const indent = first < this.lines.length ? (this.indents[first] as number) : -1;
    // An empty block scalar, or more-indented leading empty lines, are left to the full parser.
    if (indent <= parent || widestLeading > indent) throw UNSUPPORTED;
    const leading = first - (i + 1);
    const content: string[] = [];
    let trailing = 0;
    let at = first;
    for (; at < this.lines.length; at++) {
      const text = this.lines[at] as string;
      if (this.kinds[at] === Kind.Blank) {
        if (text.length > indent) throw UNSUPPORTED; // whitespace that would be content
        trailing++;
        continue;
      }
      if ((this.indents[at] as number) < indent) break;
      for (; trailing > 0; trailing--) content.push('');
      const lineContent = text.slice(indent);
      if (folded && lineContent.startsWith(' ')) throw UNSUPPORTED; // more-indented folded lines
      content.push(lineContent);
    }
    if (chomp === '+' && trailing > 0) throw UNSUPPORTED;
    let value = '\n'.repeat(leading);
    if (!folded) value += content.join('\n');
    else {
      let separator = '';
      for (const part of content) {
        if (part === '') {
          if (separator === '\n') value += '\n';
          else separator = '\n';
        } else {
          value += separator + part;
          separator = ' ';
        }
      }
    }
    if (chomp !== '-') value += '\n';
    this.next = this.skip(at);
    return value;
  }
}

function isSequenceEntry(line: string, indent: number): boolean {
  return line[indent] === '-' && (line.length === indent + 1 || line[indent + 1] === ' ');
}

/**
 * A plain scalar's text on one line from `col`: up to its comment (at `comment`, or -1), without trailing
 * spaces.
 */
function plainLine(line: string, col: number, comment: number): string {
  const text = trimSpacesEnd(comment < 0 ? line.slice(col) : line.slice(col, comment));
  // `: ` or a final `:` would make a key: a mapping the reader does not expect here.
  if (text.includes(': ') || text.endsWith(':')) throw UNSUPPORTED;
  return text;
}

/** The index of the `"` that closes a double-quoted scalar begun before `from`, or -1. */
function closingDoubleQuote(source: string, from: number): number {
  for (let i = from; i < source.length; i++) {
    const ch = source[i];
    if (ch === '\\') i++;
    else if (ch === '"') return i;
  }
  return -1;
}

/** The index of the `'` that closes a single-quoted scalar begun before `from`, or -1. */
function closingSingleQuote(source: string, from: number): number {
  for (let i = from; i < source.length; i++) {
    if (source[i] !== "'") continue;
    if (source[i + 1] === "'") i++;
    else return i;
  }
  return -1;
}

/**
 * The values of the documents in `text` (null for an empty document), as the yaml package gives them, or
 * undefined when the text uses anything this reader leaves to the yaml package.
 */
export function readBlockYaml(text: string): unknown[] | undefined {
  if (UNSUPPORTED_CHARACTERS.test(text)) return undefined;
  try {
    return new BlockReader(text).documents();
  } catch (error) {
    if (error === UNSUPPORTED || error instanceof RangeError) return undefined;
    throw error;
  }
}
