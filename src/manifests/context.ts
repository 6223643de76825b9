/**
 * The one context every generator pass shares: the project root, one ts-morph Project over `src/`, one
 * marker collection, one schema builder, and the diagnostics list they all append to.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Project, ts } from './ts-morph.cjs';
import { KubesmithError } from '../errors.js';
import { yaml } from './lazy-yaml.js';
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

/** The nearest directory from `cwd` upwards holding a PROJECT file, and the project's domain. */
export function findProjectRoot(cwd: string): { root: string; domain: string | undefined } {
  let dir = path.resolve(cwd);
  for (;;) {
    const file = path.join(dir, 'PROJECT');
    if (existsSync(file)) {
      let domain: string | undefined;
      try {
        const data = yaml().parse(readFileSync(file, 'utf8')) as { domain?: unknown } | null;
        if (typeof data?.domain === 'string') domain = data.domain;
      } catch (error) {
        throw new KubesmithError(`cannot read ${file}: ${(error as Error).message}`, {
          hint: 'fix the YAML syntax of the PROJECT file',
        });
      }
      return { root: dir, domain };
    }
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new KubesmithError(
        `not in a kubesmith project (no PROJECT file in ${path.resolve(cwd)} or its parents)`,
        { hint: 'run kubesmith init first' },
      );
    }
    dir = parent;
  }
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

export function createContext(root: string): ManifestContext {
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
      return (domain ??= { value: findProjectRoot(root).domain }).value;
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
