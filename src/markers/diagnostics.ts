/**
 * What the generator reports instead of throwing: every problem found, at the exact character, with a fix.
 * The generator collects them, keeps going with a placeholder, and the CLI prints them all, sorted.
 */
import { printable } from '../printable.js';

export interface Diagnostic {
  /** Path relative to the project root, with `/` separators. */
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based, in characters. */
  col: number;
  /** A stable identifier of the kind of problem: `unknown-marker`, `unsupported-type`... */
  code: string;
  message: string;
  hint?: string;
  /** Default: error. Warnings do not stop the generator from writing. */
  severity?: 'error' | 'warning';
}

export interface SourcePosition {
  file: string;
  line: number;
  col: number;
}

export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  if (a.line !== b.line) return a.line - b.line;
  if (a.col !== b.col) return a.col - b.col;
  return a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
}

/** Sorted by file, line and column, without exact duplicates. */
export function sortDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  const out: Diagnostic[] = [];
  for (const d of [...diagnostics].sort(compareDiagnostics)) {
    const key = `${d.file}:${d.line}:${d.col}:${d.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(d);
  }
  return out;
}

/** `file:line:col: error: message`, then `  hint: ...` when there is one. */
export function formatDiagnostic(d: Diagnostic): string {
  const head = printable(`${d.file}:${d.line}:${d.col}: ${d.severity ?? 'error'}: ${d.message}`);
  return d.hint ? `${head}\n  hint: ${printable(d.hint)}` : head;
}

export function isError(d: Diagnostic): boolean {
  return (d.severity ?? 'error') === 'error';
}
