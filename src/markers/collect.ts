/**
 * Reads markers from the raw comment text of a TypeScript file, line by line, from `//` and `/** *\/`
 * comments (JSDoc tag parsing would split values at `@` and glue markers onto tags). Markers in the
 * comments directly above a declaration belong to it; the others are file-level (rbac, webhook,
 * groupName...). Every marker keeps its exact file:line:col.
 */
import { ts } from '../typescript/compiler.cjs';
import type { Report } from './diagnostics.js';
import type { Marker, MarkerRegistry, Target } from './registry.js';

/** One comment line whose text starts with `+`. */
export interface MarkerLine {
  /** From `+` to the end of the line (or the closing `*\/`), trimmed. */
  text: string;
  /** Offset of the `+` in the file. */
  pos: number;
}

/** The marker lines of one comment. */
function markerLinesOf(fileText: string, range: ts.CommentRange): MarkerLine[] {
  const raw = fileText.slice(range.pos, range.end);
  const out: MarkerLine[] = [];
  // Most comments, and most lines of the others, hold no `+`: those are passed over without a regex.
  let plus = raw.indexOf('+');
  if (plus < 0) return out;
  if (range.kind === ts.SyntaxKind.SingleLineCommentTrivia) {
    const m = /^\/\/\s*/.exec(raw);
    const start = m ? m[0].length : 2;
    if (raw[start] === '+') out.push({ text: raw.slice(start).trimEnd(), pos: range.pos + start });
    return out;
  }
  const bodyEnd = raw.endsWith('*/') ? raw.length - 2 : raw.length;
  for (let lineStart = 0; lineStart <= bodyEnd;) {
    let lineEnd = raw.indexOf('\n', lineStart);
    if (lineEnd < 0 || lineEnd > bodyEnd) lineEnd = bodyEnd;
    if (plus >= 0 && plus < lineStart) plus = raw.indexOf('+', lineStart);
    if (plus < 0 || plus >= bodyEnd) break;
    if (plus < lineEnd) {
      const line = raw.slice(lineStart, lineEnd);
      // `/**` or `/*` on the first line, `*` on the others, then spaces.
      const m = /^(?:\s*\/\*\*?|\s*\*(?!\/))?\s*/.exec(line);
      const start = m ? m[0].length : 0;
      if (line[start] === '+') {
        out.push({
          text: line.slice(start).trimEnd(), // trimEnd also drops the \r of a CRLF line
          pos: range.pos + lineStart + start,
        });
      }
    }
    lineStart = lineEnd + 1;
  }
  return out;
}

/** A block comment's line without `\r`, its leading `*` and the space after it, nor trailing spaces. */
function blockLineText(line: string): string {
  if (line.endsWith('\r')) line = line.slice(0, -1);
  const rest = line.trimStart();
  if (rest.startsWith('*')) line = rest.startsWith('* ') ? rest.slice(2) : rest.slice(1);
  return line.trimEnd();
}

/** The lines of a comment's text without comment syntax (for descriptions). */
export function commentTextLines(fileText: string, range: ts.CommentRange): string[] {
  const raw = fileText.slice(range.pos, range.end);
  if (range.kind === ts.SyntaxKind.SingleLineCommentTrivia) return [raw.replace(/^\/\/ ?/, '')];
  // Without `/**` (or `/*`) and `*/`. Builtins, not regular expressions or loops over characters: this
  // runs once per doc comment, before V8 compiles anything of ours.
  const bodyStart = raw.startsWith('/**') ? 3 : raw.startsWith('/*') ? 2 : 0;
  const bodyEnd = raw.endsWith('*/') && raw.length - 2 >= bodyStart ? raw.length - 2 : raw.length;
  const lines = raw.slice(bodyStart, bodyEnd).split('\n').map(blockLineText);
  // The first line is what follows `/**`; trim its leading spaces.
  if (lines.length > 0) lines[0] = (lines[0] ?? '').trimStart();
  while (lines.length > 0 && (lines[0] ?? '').trim() === '') lines.shift();
  while (lines.length > 0 && (lines[lines.length - 1] ?? '').trim() === '') lines.pop();
  return lines;
}

const Kind = ts.SyntaxKind; // read once: the walks below look at every node's kind
/** The target of each node kind markers attach to: declarations of types, and properties. */
const TARGETS: readonly (Target | undefined)[] = (() => {
  const targets: (Target | undefined)[] = [];
  for (const kind of [
    Kind.InterfaceDeclaration,
    Kind.TypeAliasDeclaration,
    Kind.ClassDeclaration,
    Kind.EnumDeclaration,
  ])
    targets[kind] = 'type';
  for (const kind of [Kind.PropertySignature, Kind.PropertyDeclaration]) targets[kind] = 'field';
  return targets;
})();

/** Declarations markers attach to, and their target. */
function targetOf(node: ts.Node): Target | undefined {
  return TARGETS[node.kind];
}

/** `OrderSpec.lines.name`: a declaration and the properties down to `node`, for messages. */
function subjectOf(node: ts.Node): string | undefined {
  const parts: string[] = [];
  for (let n: ts.Node | undefined = node; n; n = n.parent) {
    if (ts.isPropertySignature(n) || ts.isPropertyDeclaration(n)) {
      parts.unshift(ts.isIdentifier(n.name) || ts.isStringLiteral(n.name) ? n.name.text : n.name.getText());
    } else if (
      ts.isInterfaceDeclaration(n) ||
      ts.isTypeAliasDeclaration(n) ||
      ts.isClassDeclaration(n) ||
      ts.isEnumDeclaration(n)
    ) {
      parts.unshift(n.name?.text ?? 'default');
      break;
    }
  }
  return parts.length > 0 ? parts.join('.') : undefined;
}

export interface FileMarkers {
  /** File-level markers, in source order. */
  package: Marker[];
  /** Markers of each declaration (interface, type alias, class, enum, property), in source order. */
  byNode: Map<ts.Node, Marker[]>;
  /** The JSDoc (`/** *\/`) comment directly above each declaration, for descriptions. */
  docs: Map<ts.Node, ts.CommentRange>;
}

/** Collects and parses every marker of `sf`. Problems go to `report`. */
export function collectFileMarkers(sf: ts.SourceFile, registry: MarkerRegistry, report: Report): FileMarkers {
  const file = report.displayPath(sf);
  const text = sf.getFullText();
  const result: FileMarkers = { package: [], byNode: new Map(), docs: new Map() };
  const attached = new Set<number>();
  const allComments = new Map<number, ts.CommentRange>();

  const position = (pos: number) => {
    const lc = sf.getLineAndCharacterOfPosition(pos);
    return { file, line: lc.line + 1, col: lc.character + 1 };
  };

  const parseInto = (line: MarkerLine, target: Target, out: Marker[], subject?: string) => {
    const where = position(line.pos);
    const parsed = registry.parse(line.text, target, where, subject);
    if (parsed === undefined) return;
    if (parsed.ok) {
      if (!parsed.marker.definition.ignored) out.push(parsed.marker);
      return;
    }
    report.error(position(line.pos + parsed.offset), parsed.code, parsed.message, parsed.hint);
  };

  // Offsets of every `+` in the file. A marker line holds one, so a node whose text (its leading comments
  // included) holds none has no marker in or before any of its tokens: below it, only declarations matter
  // (for their docs), and they are found without listing tokens, which is most of the cost of a walk.
  const plus: number[] = [];
  for (let at = text.indexOf('+'); at >= 0; at = text.indexOf('+', at + 1)) plus.push(at);
  const holdsPlus = (from: number, end: number): boolean => {
    let lo = 0;
    let hi = plus.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (plus[mid]! < from) lo = mid + 1;
      else hi = mid;
    }
    return lo < plus.length && plus[lo]! < end;
  };

  const visitDeclaration = (node: ts.Node): void => {
    const target = targetOf(node);
    if (target !== undefined) {
      const doc = jsDocOf(ts.getLeadingCommentRanges(text, node.pos) ?? []);
      if (doc) result.docs.set(node, doc);
      result.byNode.set(node, []);
    }
    // getChildren's SyntaxList (a NodeArray made a node) has no children for forEachChild.
    if (node.kind === Kind.SyntaxList) node.getChildren(sf).forEach(visitDeclaration);
    else ts.forEachChild(node, visitDeclaration);
  };

  const jsDocOf = (ranges: readonly ts.CommentRange[]) =>
    [...ranges].reverse().find((r) => text.startsWith('/**', r.pos) && !text.startsWith('/**/', r.pos));

  // The declarations that have markers above them, in source order, with the comments above each.
  const marked: { node: ts.Node; target: Target; ranges: readonly ts.CommentRange[] }[] = [];

  /**
   * Finds the comments that hold a `+`: the leading comments of every node whose text holds one. With
   * `tokens`, of every token too (getChildren lists them, which costs a scan of the node and a node per
   * token); without, only of the nodes ts.forEachChild visits, which misses a comment that only a token
   * leads (before a `}` or a `,`): the caller checks that every `+` was found.
   */
  const visit = (node: ts.Node, tokens: boolean): void => {
    if (node.kind >= Kind.FirstJSDocNode && node.kind <= Kind.LastJSDocNode) return;
    if (!holdsPlus(node.pos, node.end)) {
      visitDeclaration(node);
      return;
    }
    const ranges = ts.getLeadingCommentRanges(text, node.pos) ?? [];
    for (const range of ranges) allComments.set(range.pos, range);
    const target = targetOf(node);
    if (target !== undefined) {
      const doc = jsDocOf(ranges);
      if (doc) result.docs.set(node, doc);
      result.byNode.set(node, []);
      if (ranges.length > 0) marked.push({ node, target, ranges });
      // Markers only in the comments above it are this declaration's (its first child's leading comments
      // are the same ones): below it, only declarations matter, as in a node without a marker. Only
      // spaces lie between its last comment and its first token (getStart would scan the comments again).
      const start = ranges.length > 0 ? ranges[ranges.length - 1]!.end : node.pos;
      if (!holdsPlus(start, node.end)) {
        ts.forEachChild(node, visitDeclaration);
        return;
      }
    }
    if (tokens) for (const child of node.getChildren(sf)) visit(child, true);
    else ts.forEachChild(node, (child) => visit(child, false));
  };
  visit(sf, false);
  if (!everyPlusInAComment(plus, allComments)) {
    // A `+` outside the comments found: in a comment only a token leads, or in code (`a + b`, a string).
    marked.length = 0;
    allComments.clear();
    result.docs.clear();
    result.byNode.clear();
    visit(sf, true);
  }

  // A declaration's comments are read again for the file-level markers among them: read each once.
  const linesByComment = new Map<number, MarkerLine[]>();
  const linesOf = (range: ts.CommentRange): MarkerLine[] => {
    let lines = linesByComment.get(range.pos);
    if (lines === undefined) linesByComment.set(range.pos, (lines = markerLinesOf(text, range)));
    return lines;
  };

  for (const { node, target, ranges } of marked) {
    const markers = result.byNode.get(node)!;
    let subject: string | undefined | null = null; // once per declaration, when a marker line is its own
    for (const range of ranges) {
      for (const line of linesOf(range)) {
        // A file-level marker (rbac, groupName) may stand above a declaration too.
        if (registry.lookup(line.text, target) === undefined && registry.lookup(line.text, 'package'))
          continue;
        attached.add(line.pos);
        if (subject === null) subject = subjectOf(node);
        parseInto(line, target, markers, subject);
      }
    }
  }

  for (const range of [...allComments.values()].sort((a, b) => a.pos - b.pos)) {
    for (const line of linesOf(range)) {
      if (attached.has(line.pos)) continue;
      parseInto(line, 'package', result.package);
    }
  }
  return result;
}

/** Whether every offset of `plus` (ascending) lies in one of `comments`. */
function everyPlusInAComment(plus: readonly number[], comments: Map<number, ts.CommentRange>): boolean {
  const ranges = [...comments.values()].sort((a, b) => a.pos - b.pos);
  let r = 0;
  for (const at of plus) {
    while (r < ranges.length && ranges[r]!.end <= at) r++;
    if (r === ranges.length || ranges[r]!.pos > at) return false;
  }
  return true;
}
