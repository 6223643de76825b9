/**
 * TypeScript -> structural OpenAPI v3 (DESIGN §4): the schema builder the generators use. Over the run's
 * markers and report (src/markers), it puts together name resolution (resolve.ts) and the one type mapper
 * (mapper.ts, with objects.ts and unions.ts), and adds what is special about a kind's root type. Schemas are built once per declaration and always inlined; problems become diagnostics
 * naming the property path and the fix, with a placeholder schema standing in.
 */
import { ts } from '../typescript/compiler.cjs';
import type { MarkerIndex, Report } from '../markers/index.js';
import { TYPE_META_DESCRIPTIONS } from './k8s-data.js';
import { TypeMapper } from './mapper.js';
import type { ReadFile } from './origin.js';
import { Reporter } from './report.js';
import { declName, Resolver, type Decl } from './resolve.js';
import type { JSONSchemaProps } from './types.js';
import { ROOT_REQUIRED, ROOT_TYPE_META_DESCRIPTIONS } from './markers.js';

export interface SchemaBuilderOptions {
  checker: ts.TypeChecker;
  /** The markers and docs of the sources, the run's one index. */
  markers: MarkerIndex;
  /** Where the builder's problems go. */
  report: Report;
  /** Whether fields declared in `sf` are optional unless marked (`+kubebuilder:validation:Optional` on the package). */
  optionalByDefault?: (sf: ts.SourceFile) => boolean;
  /** Reads a package.json, to learn which package a declaration comes from. Default: from disk. */
  readFile?: ReadFile;
}

export class SchemaBuilder {
  private readonly mapper: TypeMapper;
  private readonly markers: MarkerIndex;

  constructor(options: SchemaBuilderOptions) {
    this.markers = options.markers;
    const reporter = new Reporter(options.report);
    const resolver = new Resolver(options.checker, reporter, options.readFile ?? ((f) => ts.sys.readFile(f)));
    const optionalByDefault = options.optionalByDefault ?? (() => false);
    this.mapper = new TypeMapper(options.checker, options.markers, reporter, resolver, optionalByDefault);
  }

  /** The schema of a named type, with its description and type-level markers. Cached. */
  declarationSchema(decl: Decl, path: string, at: ts.Node = decl): JSONSchemaProps {
    return this.mapper.declarationSchema(decl, path, at);
  }

  /**
   * The schema of a kind's root type: `metadata` is `{type: object}`, apiVersion and kind documented, none
   * of them required, unless the kind's `+kubesmith:root:` markers say otherwise.
   */
  rootSchema(decl: Decl): JSONSchemaProps {
    // A copy of the cached schema's top level; its properties are the cache's, so they are changed on a copy.
    const schema = this.declarationSchema(decl, declName(decl));
    const markers = this.markers.markersOf(decl);
    const kept = new Set<string>(
      markers.filter((m) => m.definition === ROOT_REQUIRED).flatMap((m) => m.value as string[]),
    );
    const documented = !markers.some(
      (m) => m.definition === ROOT_TYPE_META_DESCRIPTIONS && m.value === false,
    );
    const props = { ...schema.properties };
    if (schema.properties) schema.properties = props;
    if (props['metadata']) props['metadata'] = { type: 'object' };
    // apiVersion and kind are plain strings whatever literal type they are written with (as TypeMeta).
    for (const key of ['apiVersion', 'kind'] as const) {
      const prop = props[key];
      const description = prop?.description ?? (documented ? TYPE_META_DESCRIPTIONS[key] : undefined);
      if (prop) props[key] = { ...(description !== undefined ? { description } : {}), type: 'string' };
    }
    // As Go's inlined TypeMeta and `metadata,omitempty`: never required (but those the marker keeps).
    const required = (schema.required ?? []).filter(
      (r) => (r !== 'apiVersion' && r !== 'kind' && r !== 'metadata') || kept.has(r),
    );
    for (const name of kept) if (props[name] && !required.includes(name)) required.push(name);
    required.sort();
    if (required.length > 0) schema.required = required;
    else delete schema.required;
    return schema;
  }
}
