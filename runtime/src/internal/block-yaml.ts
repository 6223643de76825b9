/**
 * A reader of the YAML kubeconfigs are written in (kubectl, kind, minikube and the clouds' CLIs write
 * block mappings and sequences of plain or quoted one-line strings), for loadKubeConfig: the `yaml`
 * package takes ~60 ms of a start to load, more than the rest of a manager's start to synced caches.
 * It reads that subset only, and gives up (undefined) on anything else: anchors and aliases, tags, flow
 * collections other than `{}` and `[]`, block scalars, multi-line or escaped strings it does not know,
 * several documents, tabs, CRLF line ends, control characters and Unicode spaces, duplicate keys, and
 * any plain scalar that is not plainly a string, true, false or null (numbers, and the words YAML 1.1
 * reads as booleans). The caller then parses the text with the `yaml` package, so a kubeconfig reads
 * the same either way: what this reader returns is what `yaml.parse` returns for the same text.
 */

/** The parsed document, or undefined when the text is outside the subset. */
export function parseBlockYaml(text: string): { value: unknown } | undefined {
  // Tabs, CR, a byte order mark, control characters and the line breaks of YAML 1.1 (NEL, LS, PS):
  // YAML has rules of its own for each. And the spaces JavaScript's trim() takes that YAML's does not
  // (no-break and Unicode spaces): without them, trim() here takes exactly YAML's spaces.
  if (
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    /[\t\r\uFEFF\x00-\x08\x0B\x0C\x0E-\x1F\x7F\x85\u2028\u2029\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000]/.test(
      text,
    )
  ) {
    return undefined;
  }
  const lines: Line[] = [];
  for (const raw of text.split('\n')) {
    const content = raw.trimStart();
    if (content === '' || content.startsWith('#')) continue;
    lines.push({ indent: raw.length - content.length, text: content.trimEnd() });
  }
  // One document: a leading `---` alone is its start marker; any other marker or directive is not read.
  if (lines[0]?.indent === 0 && lines[0].text === '---') lines.shift();
  if (lines.some((line) => line.indent === 0 && /^(---|\.\.\.|%)/.test(line.text))) return undefined;
  if (lines.length === 0) return { value: null };
  try {
    const reader = new BlockReader(lines);
    const value = reader.block(lines[0]!.indent, 0);
    return reader.done() ? { value } : undefined;
  } catch (err) {
    if (err === OUTSIDE) return undefined;
    throw err;
  }
}

interface Line {
  indent: number;
  text: string;
}

/** Thrown to give up: the text is outside the subset (not necessarily invalid YAML). */
const OUTSIDE = Symbol('outside the block YAML subset');

/** Nesting deeper than this is no kubeconfig: leave it to the full parser. */
const MAX_DEPTH = 64;

/** A key the way kubeconfigs spell them: `current-context`, `as-user-extra`, `example.com/x`. */
const KEY = /^[A-Za-z_][A-Za-z0-9_./-]*$/;

/** Plain scalars YAML 1.2 or 1.1 reads as something else than a string, or might: left to `yaml`. */
const NOT_PLAINLY_STRING = [
  // Numbers of either version: decimal, octal, hexadecimal, binary, with underscores, sexagesimal.
  /^[-+]?(?:0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+|[0-9_]*\.?[0-9_]*(?:[eE][-+]?[0-9]+)?(?::[0-9_.]+)*)$/,
  /^[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)$/,
  // Timestamps (YAML 1.1).
  /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}/,
  // YAML 1.1's booleans, and null, true and false spelled other than in lower case.
  /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|Null|NULL|True|TRUE|False|FALSE|=|<<)$/,
];

/** Keys that are not plain strings to YAML, or not to a JavaScript object. */
const RESERVED_KEYS = new Set(['null', 'true', 'false', '__proto__']);

const ESCAPES: Record<string, string> = { '\\': '\\', '"': '"', '/': '/', n: '\n', t: '\t', r: '\r' };

class BlockReader {
  private next = 0;

  constructor(private readonly lines: Line[]) {}

  done(): boolean {
    return this.next === this.lines.length;
  }

  /** The mapping or sequence whose lines start at `indent`. */
  block(indent: number, depth: number): unknown {
    if (depth > MAX_DEPTH) throw OUTSIDE;
    const line = this.lines[this.next]!;
    if (line.indent !== indent) throw OUTSIDE;
    return isItem(line.text) ? this.sequence(indent, depth) : this.mapping(indent, depth);
  }

  private mapping(indent: number, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const seen = new Set<string>();
    for (let line = this.peek(); line?.indent === indent && !isItem(line.text); line = this.peek()) {
      const entry = splitEntry(line.text);
      if (entry === undefined || entry.key === '__proto__' || seen.has(entry.key)) throw OUTSIDE;
      seen.add(entry.key);
      this.next++;
      out[entry.key] = this.value(entry.rest, indent, depth, true);
    }
    return out;
  }

  private sequence(indent: number, depth: number): unknown[] {
    const out: unknown[] = [];
    for (let line = this.peek(); line?.indent === indent && isItem(line.text); line = this.peek()) {
      const rest = line.text.slice(1);
      const content = rest.trimStart();
      if (isItem(content) || splitEntry(content) !== undefined) {
        // `- key: value` or `- - item`: a mapping or sequence whose first line is the rest of this one,
        // at its column.
        const column = indent + 1 + rest.length - content.length;
        this.lines[this.next] = { indent: column, text: content };
        out.push(this.block(column, depth + 1));
        continue;
      }
      this.next++;
      out.push(this.value(content, indent, depth, false));
    }
    return out;
  }

  /**
   * A value written after a key (`inMapping`) or a dash at `indent`: inline, or on the lines below (for a
   * key, a sequence may start at the key's own column, as kubectl writes them).
   */
  private value(inline: string, indent: number, depth: number, inMapping: boolean): unknown {
    const below = this.peek();
    if (inline === '' || inline.startsWith('#')) {
      if (below && below.indent > indent) return this.block(below.indent, depth + 1);
      if (inMapping && below?.indent === indent && isItem(below.text)) {
        return this.sequence(indent, depth + 1);
      }
      return null;
    }
    // More lines below an inline value would continue a plain scalar over lines.
    if (below && below.indent > indent) throw OUTSIDE;
    return scalar(inline);
  }

  private peek(): Line | undefined {
    return this.lines[this.next];
  }
}

/** A sequence item: `-` alone or followed by a space. */
function isItem(text: string): boolean {
  return text === '-' || text.startsWith('- ');
}

/**
 * `key: value` or `key:`, the key plain (as kubeconfigs spell keys) or quoted on its line: the key and
 * what follows its colon; undefined when the line is no entry this reader reads.
 */
function splitEntry(text: string): { key: string; rest: string } | undefined {
  if (text.startsWith('"') || text.startsWith("'")) {
    const quoted = text.startsWith('"') ? doubleQuoted(text) : singleQuoted(text);
    if (quoted === undefined || !/^:(?: |$)/.test(quoted.rest)) return undefined;
    return { key: quoted.value, rest: quoted.rest.slice(1).trim() };
  }
  const colon = text.endsWith(':') ? text.length - 1 : text.indexOf(': ');
  if (colon <= 0) return undefined;
  const key = text.slice(0, colon);
  if (!KEY.test(key) || RESERVED_KEYS.has(key) || !isPlainString(key)) return undefined;
  return { key, rest: text.slice(colon + 1).trim() };
}

/** A one-line scalar: quoted, `{}` or `[]`, or plain. */
function scalar(text: string): unknown {
  if (text.startsWith('"') || text.startsWith("'")) {
    const quoted = text.startsWith('"') ? doubleQuoted(text) : singleQuoted(text);
    // Nothing but a comment may follow the closing quote.
    if (quoted === undefined || !(quoted.rest === '' || /^ +#/.test(quoted.rest))) throw OUTSIDE;
    return quoted.value;
  }
  if (text === '{}') return {};
  if (text === '[]') return [];
  // Indicators that start a flow collection, an alias, anchor, tag, block scalar, directive or reserved.
  if (/^[[\]{}&*!|>%@`,#?:]/.test(text) || /^-(?: |$)/.test(text)) throw OUTSIDE;
  const comment = text.indexOf(' #');
  const plain = comment === -1 ? text : text.slice(0, comment).trimEnd();
  // `a: b` inside a value is a nested mapping YAML refuses; a trailing colon likewise.
  if (plain.includes(': ') || plain.endsWith(':')) throw OUTSIDE;
  if (plain === 'null' || plain === '~') return null;
  if (plain === 'true') return true;
  if (plain === 'false') return false;
  if (!isPlainString(plain)) throw OUTSIDE;
  return plain;
}

function isPlainString(text: string): boolean {
  return !NOT_PLAINLY_STRING.some((pattern) => pattern.test(text));
}

/** A quoted string at the start of a line, and the rest of the line after its closing quote. */
interface Quoted {
  value: string;
  rest: string;
}

/**
 * `"..."` closed on its line, with the escapes \\ \" \/ \n \t \r; undefined for any other escape
 * or a string that goes on to the next line.
 */
function doubleQuoted(text: string): Quoted | undefined {
  let value = '';
  for (let i = 1; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') return { value, rest: text.slice(i + 1) };
    if (c === '\\') {
      const escaped = ESCAPES[text[i + 1] ?? ''];
      if (escaped === undefined) return undefined;
      value += escaped;
      i++;
    } else value += c;
  }
  return undefined;
}

/** `'...'` closed on its line, `''` for a quote. */
function singleQuoted(text: string): Quoted | undefined {
  let value = '';
  for (let i = 1; i < text.length; i++) {
    const c = text[i]!;
    if (c !== "'") value += c;
    else if (text[i + 1] === "'") {
      value += "'";
      i++;
    } else return { value, rest: text.slice(i + 1) };
  }
  return undefined;
}
