/**
 * cel-js's has() takes a field of a name or of a selection only; cel-go's, so the API server's, takes a
 * field of any expression: `has(self.rules[0].path)` (Gateway API's HTTPRoute has such rules). Where
 * cel-js refuses one, the rule is run with each such has(X.f) written as X.?f.hasValue(), which answers
 * the same on the JSON values rules see: whether X has the key f.
 */

/** Where each string literal of `text` ends, by its start: has( inside a string is not a call. */
function skipString(text: string, at: number): number {
  let i = at;
  if (text[i] === 'r' || text[i] === 'R' || text[i] === 'b' || text[i] === 'B') i++;
  if (text[i] === 'r' || text[i] === 'R') i++;
  const raw = /[rR]/.test(text.slice(at, i));
  const quote = text[i]!;
  const triple = text.startsWith(quote.repeat(3), i);
  const close = triple ? quote.repeat(3) : quote;
  i += close.length;
  while (i < text.length && !text.startsWith(close, i)) i += !raw && text[i] === '\\' ? 2 : 1;
  return i + close.length;
}

/** The expression with each has(X.f) whose X is not a name or a selection written as X.?f.hasValue(). */
export function rewritePresence(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"' || c === "'" || (/[rRbB]/.test(c) && /^[rRbB]{1,2}['"]/.test(text.slice(i, i + 3)))) {
      if (i > 0 && /[A-Za-z0-9_]/.test(text[i - 1]!) && !(c === '"' || c === "'")) {
        out += c;
        i++;
        continue;
      }
      const end = skipString(text, i);
      out += text.slice(i, end);
      i = end;
      continue;
    }
    const call = /^has\s*\(/.exec(text.slice(i));
    if (call && (i === 0 || !/[A-Za-z0-9_.]/.test(text[i - 1]!))) {
      // The argument, to its closing parenthesis.
      let depth = 1;
      let j = i + call[0].length;
      const start = j;
      while (j < text.length && depth > 0) {
        const d = text[j]!;
        if (d === '"' || d === "'") {
          j = skipString(text, j);
          continue;
        }
        if (d === '(' || d === '[' || d === '{') depth++;
        else if (d === ')' || d === ']' || d === '}') depth--;
        j++;
      }
      const argument = rewritePresence(text.slice(start, j - 1)).trim();
      const field = /^([\s\S]*\S)\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)$/.exec(argument);
      // A name or a selection of names cel-js takes as it is.
      const plain = field && /^[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*$/.test(field[1]!);
      out += field && !plain ? `(${field[1]}).?${field[2]}.hasValue()` : `has(${argument})`;
      i = j;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}
