/**
 * Text from the command line (an owner, a container command, an image) written into generated files, each
 * escaped for the syntax it lands in. A template names its sink with a helper (`{{tsString image}}`,
 * `{{blockComment commandText}}`; render.ts registers them), so no flag can close a comment or a string and
 * write code, markers or fields of its own.
 */

/** Characters that end a line for TypeScript, YAML or the marker parser, and the other control characters. */
// eslint-disable-next-line no-control-regex -- the control characters are what it replaces
const LINE_BREAKS_AND_CONTROLS = /[\u0000-\u001f\u007f\u0085\u2028\u2029]/g;

function unicodeEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * Text inside a `/* *\/` or `/** *\/` comment: `*\/` cannot close it, and a line break cannot start a line
 * of its own (where a `+kubebuilder:` marker would be read): both are shown escaped.
 */
export function blockComment(text: string): string {
  return text.replace(LINE_BREAKS_AND_CONTROLS, unicodeEscape).replace(/\*\//g, '*\\/');
}

/** Text inside a `//` or `#` comment, which ends at the first line break: line breaks are shown escaped. */
export function lineComment(text: string): string {
  return text.replace(LINE_BREAKS_AND_CONTROLS, unicodeEscape);
}

/** A single-quoted TypeScript string literal whose value is `text`. */
export function tsString(text: string): string {
  const body = text
    .replace(/\\/g, '\\\\')
    .replace(/'/g, "\\'")
    .replace(LINE_BREAKS_AND_CONTROLS, unicodeEscape);
  return `'${body}'`;
}

/** A TypeScript array literal of string literals: `['memcached', '-m=64']`. */
export function tsStringArray(words: readonly string[]): string {
  return `[${words.map(tsString).join(', ')}]`;
}

/** A JSON string (with its quotes) whose value is `text`: for package.json, and YAML's double quotes. */
export function jsonString(text: string): string {
  return JSON.stringify(text).replace(/[\u2028\u2029]/g, unicodeEscape);
}

/** The helpers templates call, by name. */
export const escapeHelpers = { blockComment, lineComment, tsString, jsonString } as const;
