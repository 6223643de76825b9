/** The schema the generator's type mapper gives a declaration, for the unit tests of src/schema. */
import { Project, ts } from 'ts-morph';
import { defaultRegistry } from '../../src/manifests/registry.js';
import {
  formatDiagnostic,
  MarkerIndex,
  Report,
  sortDiagnostics,
  type Diagnostic,
} from '../../src/markers/index.js';
import { SchemaBuilder } from '../../src/schema/build.js';
import type { JSONSchemaProps } from '../../src/schema/types.js';

/** A schema builder over `source` (an in-memory file), its declarations by name, and its diagnostics. */
export function builderOf(source: string): {
  builder: SchemaBuilder;
  decl: (name: string) => ts.InterfaceDeclaration | ts.TypeAliasDeclaration;
  diagnostics: Diagnostic[];
} {
  const project = new Project({
    useInMemoryFileSystem: true,
    compilerOptions: { strict: true, target: ts.ScriptTarget.ES2022 },
  });
  const sf = project.createSourceFile('/src/types.ts', source).compilerNode;
  const diagnostics: Diagnostic[] = [];
  const report = new Report(() => 'types.ts', diagnostics);
  const builder = new SchemaBuilder({
    checker: project.getTypeChecker().compilerObject,
    markers: new MarkerIndex(defaultRegistry(), report),
    report,
  });
  const decl = (name: string) => {
    const found = sf.statements.find(
      (s): s is ts.InterfaceDeclaration | ts.TypeAliasDeclaration =>
        (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) && s.name.text === name,
    );
    if (!found) throw new Error(`no ${name}`);
    return found;
  };
  return { builder, decl, diagnostics };
}

/** The schema of `Root` (an interface or a type alias) in `source` (an in-memory file), and the diagnostics. */
export function schemaOf(source: string): { schema: JSONSchemaProps; diagnostics: string[] } {
  const { builder, decl, diagnostics } = builderOf(source);
  const schema = builder.declarationSchema(decl('Root'), 'Root');
  return { schema, diagnostics: sortDiagnostics(diagnostics).map(formatDiagnostic) };
}
