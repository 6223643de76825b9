/**
 * Descriptions, as controller-gen reads Go doc comments: the text of the JSDoc above a declaration without
 * marker lines (`+...`) and lines starting with `TODO`, up to a line starting with `---` (both only outside
 * fenced code), blank runs collapsed to one, no leading or trailing blank lines.
 */

/**
 * What a doc comment cannot say as it is, escaped (kubesmith import crd writes them so): a star, a
 * backslash and a slash read as a star and a slash (the comment would end there), and a backslash before a
 * line's first `+`, `TODO`, `---` or backslash is dropped (the line would be a marker, be left out, or end
 * the description).
 */
function unescapeLine(line: string): string {
  if (!line.includes('\\')) return line; // both escapes hold a backslash
  return line.replaceAll('*\\/', '*/').replace(/^(\s*)\\(?=\+|TODO|---|\\)/, '$1');
}

/** The description in the lines of a comment's text (comment syntax already removed), if any. */
export function describe(lines: readonly string[]): string | undefined {
  const out: string[] = [];
  let inCode = false;
  for (const line of lines) {
    const trimmed = line.trim();
    if (trimmed.startsWith('+')) continue;
    if (trimmed.startsWith('```') || trimmed.startsWith('~~~')) inCode = !inCode;
    if (!inCode) {
      if (trimmed.startsWith('TODO')) continue;
      if (trimmed.startsWith('---')) break;
    }
    out.push(unescapeLine(line));
  }
  // Blank runs collapse to one, and leading and trailing blank lines go, as Go's comment text.
  const collapsed = out.filter(
    (line, i) => line.trim() !== '' || (i > 0 && (out[i - 1] ?? '').trim() !== ''),
  );
  const text = collapsed.join('\n').trim();
  return text === '' ? undefined : text;
}
