/**
 * TypeScript -> structural OpenAPI v3 (DESIGN §4): the schema builder the generators use. It puts together
 * the marker index (marker-index.ts), the diagnostics (report.ts), name resolution (resolve.ts) and the
 * one type mapper (mapper.ts, with objects.ts and unions.ts), and adds what is special about a kind's
 * root type. Schemas are built once per declaration and always inlined; problems become diagnostics
 * naming the property path and the fix, with a placeholder schema standing in.
 */
import { ts } from '../typescript/compiler.cjs';
import type { Diagnostic, FileMarkers, Marker, MarkerRegistry } from '../markers/index.js';
import { TYPE_META_DESCRIPTIONS } from './k8s-data.js';
import { MarkerIndex } from './marker-index.js';
import { TypeMapper } from './mapper.js';
import type { ReadFile } from './origin.js';
import { Reporter } from './report.js';
import { declName, Resolver, type Decl } from './resolve.js';
import type { JSONSchemaProps } from './types.js';

export interface SchemaBuilderOptions {
  checker: ts.TypeChecker;
  registry: MarkerRegistry;
  diagnostics: Diagnostic[];
  /** The path of a source file as shown in diagnostics (relative to the project root). */
  displayPath: (sf: ts.SourceFile) => string;
  /** Whether fields declared in `sf` are optional unless marked (`+kubebuilder:validation:Optional` on the package). */
  optionalByDefault?: (sf: ts.SourceFile) => boolean;
  /** Reads a package.json, to learn which package a declaration comes from. Default: from disk. */
  readFile?: ReadFile;
}

export class SchemaBuilder {
  private readonly index: MarkerIndex;
  private readonly reporter: Reporter;
  private readonly mapper: TypeMapper;

  constructor(options: SchemaBuilderOptions) {
    this.index = new MarkerIndex(options.registry, options.displayPath, options.diagnostics);
    this.reporter = new Reporter(options.diagnostics, options.displayPath);
    const resolver = new Resolver(
      options.checker,
      this.reporter,
      options.readFile ?? ((f) => ts.sys.readFile(f)),
    );
    const optionalByDefault = options.optionalByDefault ?? (() => false);
    this.mapper = new TypeMapper(options.checker, this.index, this.reporter, resolver, optionalByDefault);
  }

  /** The parsed markers and docs of a file, collected once. */
  fileMarkers(sf: ts.SourceFile): FileMarkers {
    return this.index.fileMarkers(sf);
  }

  markersOf(node: ts.Node): Marker[] {
    return this.index.markersOf(node);
  }

  /** The description of a declaration: its JSDoc text without markers, TODO lines, or anything after `---`. */
  descriptionOf(node: ts.Node): string | undefined {
    return this.index.descriptionOf(node);
  }

  report(node: ts.Node, code: string, message: string, hint?: string): void {
    this.reporter.at(node, code, message, hint);
  }

  /** The schema of a named type, with its description and type-level markers. Cached. */
  declarationSchema(decl: Decl, path: string, at: ts.Node = decl): JSONSchemaProps {
    return this.mapper.declarationSchema(decl, path, at);
  }

  /** The schema of a kind's root type: `metadata` is `{type: object}`, apiVersion and kind documented. */
  rootSchema(decl: Decl): JSONSchemaProps {
    const schema = this.declarationSchema(decl, declName(decl)); // a copy of the cached schema
    const props = schema.properties ?? {};
    if (props['metadata']) props['metadata'] = { type: 'object' };
    // apiVersion and kind are plain strings whatever literal type they are written with (as TypeMeta).
    for (const key of ['apiVersion', 'kind'] as const) {
      const prop = props[key];
      if (prop) props[key] = { description: prop.description ?? TYPE_META_DESCRIPTIONS[key], type: 'string' };
    }
    // As Go's inlined TypeMeta and `metadata,omitempty`: never required.
    const required = (schema.required ?? []).filter(
      (r) => r !== 'apiVersion' && r !== 'kind' && r !== 'metadata',
    );
    if (required.length > 0) schema.required = required;
    else delete schema.required;
    return schema;
  }
}
