/**
 * Text from a project or the command line made safe to print as part of one line: line breaks, other
 * control characters and Unicode's line and paragraph separators become escapes (`\n`, `\u001b`...).
 * A name with a line break would otherwise print a line that looks like kubesmith's own (`error:`, a
 * diagnostic), and an escape character from a pull request would drive the reader's terminal.
 */
// eslint-disable-next-line no-control-regex -- control characters are what this module escapes
const UNPRINTABLE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r' };

export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
