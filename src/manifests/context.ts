/**
 * The one context every generator pass shares: the project root, one ts-morph Project over `src/`, one
 * marker collection, one schema builder, and the diagnostics list they all append to.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Project, ts } from './ts-morph.cjs';
import { readProjectDomain } from '../project/find.js';
import { defaultRegistry, type Diagnostic, type Marker, type MarkerRegistry } from '../markers/index.js';
import { SchemaBuilder } from '../schema/index.js';

export interface ManifestContext {
  root: string;
  /** The PROJECT file's domain, when it has one. Read from PROJECT when first asked for. */
  readonly domain: string | undefined;
  project: Project;
  checker: ts.TypeChecker;
  registry: MarkerRegistry;
  builder: SchemaBuilder;
  diagnostics: Diagnostic[];
  /** The scanned sources (`src/**\/*.ts` without tests and declarations), sorted by path. */
  sources: ts.SourceFile[];
  displayPath(sf: ts.SourceFile): string;
  /** File-level markers of every scanned source, in path then source order. */
  packageMarkers(): Marker[];
}

const COMPILER_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  skipLibCheck: true,
  noEmit: true,
  lib: ['lib.es5.d.ts'],
  types: [],
};

/**
 * Over the project's tsconfig: API types need ES5's library (Array, Record, Partial, Omit, Date...), never the
 * DOM or @types/node, which are most of what a program loads; leaving them out halves the generator's time.
 */
const GENERATOR_OPTIONS: ts.CompilerOptions = {
  noEmit: true,
  lib: ['lib.es5.d.ts'],
  types: [],
};

/**
 * `planned`: files (relative to root) whose content stands for what is on disk, and files not yet written:
 * the TypeScript of a scaffold's plan, so that its manifests are generated before anything is written.
 */
export function createContext(root: string, planned?: ReadonlyMap<string, string>): ManifestContext {
  const tsconfig = path.join(root, 'tsconfig.json');
  const project = existsSync(tsconfig)
    ? new Project({
        tsConfigFilePath: tsconfig,
        skipAddingFilesFromTsConfig: true,
        compilerOptions: GENERATOR_OPTIONS,
      })
    : new Project({ compilerOptions: COMPILER_OPTIONS });
  const srcDir = path.join(root, 'src');
  if (existsSync(srcDir)) {
    project.addSourceFilesAtPaths([
      `${srcDir.split(path.sep).join('/')}/**/*.ts`,
      `!${srcDir.split(path.sep).join('/')}/**/*.test.ts`,
      `!${srcDir.split(path.sep).join('/')}/**/*.d.ts`,
    ]);
  }
  for (const [file, content] of planned ?? []) {
    if (!/^src\/.*\.ts$/.test(file) || /\.(test|d)\.ts$/.test(file)) continue;
    project.createSourceFile(path.join(root, file), content, { overwrite: true });
  }
  const checker = project.getTypeChecker().compilerObject;
  const registry = defaultRegistry();
  const diagnostics: Diagnostic[] = [];
  const displayPath = (sf: ts.SourceFile): string =>
    path.relative(root, sf.fileName).split(path.sep).join('/');
  const optionalDirs = new Map<string, boolean>();
  const builder: SchemaBuilder = new SchemaBuilder({
    checker,
    registry,
    diagnostics,
    displayPath,
    // `+kubebuilder:validation:Optional` in any file of a directory makes its fields optional by default.
    optionalByDefault: (sf) => {
      const dir = path.dirname(sf.fileName);
      let optional = optionalDirs.get(dir);
      if (optional === undefined) {
        optional = project
          .getSourceFiles()
          .filter((f) => path.dirname(f.getFilePath()) === dir)
          .some((f) =>
            builder
              .fileMarkers(f.compilerNode)
              .package.some((m) => m.name === 'kubebuilder:validation:Optional'),
          );
        optionalDirs.set(dir, optional);
      }
      return optional;
    },
  });
  const sources = project
    .getSourceFiles()
    .map((f) => f.compilerNode)
    .sort((a, b) => (displayPath(a) < displayPath(b) ? -1 : displayPath(a) > displayPath(b) ? 1 : 0));
  let domain: { value: string | undefined } | undefined;
  return {
    root,
    get domain() {
      return (domain ??= { value: readProjectDomain(root) }).value;
    },
    project,
    checker,
    registry,
    builder,
    diagnostics,
    sources,
    displayPath,
    packageMarkers: () => sources.flatMap((sf) => builder.fileMarkers(sf).package),
  };
}
