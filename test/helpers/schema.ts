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

/** The schema of `Root` (an interface or a type alias) in `source` (an in-memory file), and the diagnostics. */
export function schemaOf(source: string): { schema: JSONSchemaProps; diagnostics: string[] } {
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
  const root = sf.statements.find(
    (s): s is ts.InterfaceDeclaration | ts.TypeAliasDeclaration =>
      (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) && s.name.text === 'Root',
  );
  if (!root) throw new Error('no Root');
  const schema = builder.declarationSchema(root, 'Root');
  return { schema, diagnostics: sortDiagnostics(diagnostics).map(formatDiagnostic) };
}
