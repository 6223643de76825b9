/**
 * A marker is one definition: what it does lives in it, so a marker defined anywhere applies through
 * the builder with no other change, its value typed by its arguments.
 */
import { describe, expect, it } from 'vitest';
import { Project, ts } from 'ts-morph';
import { DEFINITIONS } from '../manifests/registry.js';
import { formatDiagnostic, Report, sortDiagnostics, type Diagnostic } from '../markers/diagnostics.js';
import { MarkerIndex } from '../markers/marker-index.js';
import { T } from '../markers/grammar.js';
import { defineMarker, MarkerRegistry, optional, required } from '../markers/registry.js';
import { SchemaBuilder } from './build.js';

const EXACT_ITEMS = defineMarker({
  name: 'kubebuilder:validation:ExactItems',
  targets: ['field'],
  args: { count: required(T.int), why: optional(T.string) },
  help: 'the list has exactly this many items',
  schema: {
    apply(schema, { count, why }, fail) {
      if (schema.type !== 'array') return fail('ExactItems applies to arrays');
      schema.minItems = count;
      schema.maxItems = count;
      if (why !== undefined) schema.title = why;
    },
  },
});

// The value's type comes from the arguments: a count is a number, never a string.
defineMarker({
  name: 'kubebuilder:validation:Wrong',
  targets: ['field'],
  value: required(T.int),
  help: 'ill-typed',
  schema: {
    apply(schema, n) {
      // @ts-expect-error n is a number
      schema.pattern = n;
    },
  },
});

function build(source: string): { properties: unknown; diagnostics: string[] } {
  const project = new Project({ useInMemoryFileSystem: true, compilerOptions: { strict: true } });
  const sf = project.createSourceFile('/src/types.ts', source).compilerNode;
  const diagnostics: Diagnostic[] = [];
  const report = new Report(() => 'types.ts', diagnostics);
  const builder = new SchemaBuilder({
    checker: project.getTypeChecker().compilerObject,
    markers: new MarkerIndex(new MarkerRegistry().define(...DEFINITIONS, EXACT_ITEMS), report),
    report,
  });
  const root = sf.statements.find(ts.isInterfaceDeclaration);
  if (!root) throw new Error('no interface');
  const schema = builder.declarationSchema(root, 'Root');
  return { properties: schema.properties, diagnostics: sortDiagnostics(diagnostics).map(formatDiagnostic) };
}

describe('a marker defined with its effect', () => {
  it('applies with no other change, and reports where it cannot', () => {
    const { properties, diagnostics } = build(`export interface Root {
      /** +kubebuilder:validation:ExactItems:count=2,why=pair */
      pair: string[];
      /** +kubebuilder:validation:ExactItems:count=2 */
      name: string;
    }`);
    expect(properties).toEqual({
      pair: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 2, title: 'pair' },
      name: { type: 'string' },
    });
    expect(diagnostics).toEqual([
      'types.ts:4:11: error: +kubebuilder:validation:ExactItems on Root.name: ExactItems applies to arrays',
    ]);
  });

  it('is unknown (with a did-you-mean) in a registry without it', () => {
    const project = new Project({ useInMemoryFileSystem: true });
    const sf = project.createSourceFile(
      '/src/types.ts',
      'export interface Root {\n  /** +kubebuilder:validation:ExactItems:count=2 */\n  pair: string[];\n}',
    ).compilerNode;
    const diagnostics: Diagnostic[] = [];
    const report = new Report(() => 'types.ts', diagnostics);
    const builder = new SchemaBuilder({
      checker: project.getTypeChecker().compilerObject,
      markers: new MarkerIndex(new MarkerRegistry().define(...DEFINITIONS), report),
      report,
    });
    builder.declarationSchema(sf.statements.find(ts.isInterfaceDeclaration)!, 'Root');
    expect(diagnostics.map(formatDiagnostic)).toEqual([
      'types.ts:2:7: error: unknown marker +kubebuilder:validation:ExactItems on Root.pair\n  hint: did you mean +kubebuilder:validation:MaxItems?',
    ]);
  });
});
