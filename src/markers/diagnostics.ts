/**
 * What the generator reports instead of throwing: every problem found, at the exact character, with a fix.
 * The generator collects them, keeps going with a placeholder, and the CLI prints them all, sorted.
 */
import { printable } from '../printable.js';
import type { ts } from '../typescript/compiler.cjs';
import type { Fail } from './effects.js';

/** What went wrong, as a stable identifier (`--json` prints it). */
export type DiagnosticCode =
  // Markers: not kubesmith's, standing where they cannot, or not applying there (their arguments,
  // the type they stand on).
  | 'unknown-marker'
  | 'misplaced-marker'
  | 'invalid-marker'
  // Types: with no CRD schema, containing themselves, or breaking the apiserver's structural rules.
  | 'unsupported-type'
  | 'recursive-type'
  | 'unknown-k8s-type'
  | 'not-structural'
  // CEL rules: not compiling against the schema, or over the API server's cost budget.
  | 'invalid-rule'
  | 'rule-cost'
  // Kinds and their CRDs.
  | 'missing-group'
  | 'invalid-version'
  | 'invalid-kind'
  | 'invalid-crd-name'
  | 'no-storage-version'
  | 'several-storage-versions'
  | 'crd-too-large'
  | 'crd-too-large-for-etcd'
  // The project's files.
  | 'link-out-of-project';

export interface Diagnostic {
  /** Path relative to the project root, with `/` separators. */
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based, in characters. */
  col: number;
  /** A stable identifier of the kind of problem: `unknown-marker`, `unsupported-type`... */
  code: DiagnosticCode;
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

/**
 * Where every diagnostic of a run is made: at a node (its first character) or at a position (a marker's,
 * a file's first line), appended to one list, never thrown.
 */
export class Report {
  constructor(
    /** The path of a source file as shown in diagnostics (relative to the project root). */
    readonly displayPath: (sf: ts.SourceFile) => string,
    readonly diagnostics: Diagnostic[] = [],
  ) {}

  error(at: ts.Node | SourcePosition, code: DiagnosticCode, message: string, hint?: string): void {
    this.add(at, code, message, hint, 'error');
  }

  /** A problem that does not stop the generator from writing. */
  warning(at: ts.Node | SourcePosition, code: DiagnosticCode, message: string, hint?: string): void {
    this.add(at, code, message, hint, 'warning');
  }

  /** What a marker's effects call when it cannot apply where it stands: an `invalid-marker` at the marker. */
  marker(marker: SourcePosition): Fail {
    return (message, hint) => this.error(marker, 'invalid-marker', message, hint);
  }

  /** Whether an error was reported. */
  hasErrors(): boolean {
    return this.diagnostics.some(isError);
  }

  private add(
    at: ts.Node | SourcePosition,
    code: DiagnosticCode,
    message: string,
    hint: string | undefined,
    severity: 'error' | 'warning',
  ): void {
    this.diagnostics.push({
      ...('file' in at ? { file: at.file, line: at.line, col: at.col } : this.positionOf(at)),
      code,
      severity,
      message,
      ...(hint ? { hint } : {}),
    });
  }

  private positionOf(node: ts.Node): SourcePosition {
    const sf = node.getSourceFile();
    const lc = sf.getLineAndCharacterOfPosition(node.getStart(sf));
    return { file: this.displayPath(sf), line: lc.line + 1, col: lc.character + 1 };
  }
}

function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
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
