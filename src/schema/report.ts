/**
 * The schema builder's diagnostics, through the run's one Report: every problem at the exact character,
 * with a fix (never thrown). A placeholder schema stands in for what could not be mapped, so the build
 * goes on and reports everything at once.
 */
import type { ts } from '../typescript/compiler.cjs';
import type { DiagnosticCode, Marker, Report } from '../markers/index.js';
import type { JSONSchemaProps } from './types.js';

const RECURSION_HINT =
  'mark the property where the cycle starts with +kubebuilder:validation:Schemaless and +kubebuilder:pruning:PreserveUnknownFields';

export class Reporter {
  constructor(private readonly report: Report) {}

  /** The path of a source file as diagnostics show it. */
  displayPath(sf: ts.SourceFile): string {
    return this.report.displayPath(sf);
  }

  /** A problem at the first character of `node`. */
  at(node: ts.Node, code: DiagnosticCode, message: string, hint?: string): void {
    this.report.error(node, code, message, hint);
  }

  /** A marker that cannot apply where it stands. */
  readonly marker = (marker: Marker, message: string, hint?: string): void => {
    this.report.marker(marker)(message, hint);
  };

  /** A type with no CRD schema; its placeholder keeps any value. */
  unsupported(at: ts.Node, path: string, what: string, fix: string): JSONSchemaProps {
    this.at(at, 'unsupported-type', `${path}: ${what} has no CRD schema`, fix);
    return { 'x-kubernetes-preserve-unknown-fields': true };
  }

  /** A type that contains itself; its placeholder keeps any value. */
  recursive(at: ts.Node, name: string, path: string): JSONSchemaProps {
    this.at(
      at,
      'recursive-type',
      `recursive type ${name} at ${path}: CRD schemas cannot be recursive`,
      RECURSION_HINT,
    );
    return { 'x-kubernetes-preserve-unknown-fields': true };
  }
}
