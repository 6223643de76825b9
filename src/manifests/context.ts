/**
 * The one context every generator pass shares, `{ program, checker, markers, report, schemas }` as
 * controller-tools' genall: one TypeScript program over the API files (`src/api/**` and what they import,
 * src/typescript), the other sources of `src/` parsed for their markers only, the markers of all of them
 * (read through `markers`, from the registry every generator's markers make, registry.ts), the one
 * `report` every diagnostic goes to, and the schema builder, which the passes ask only for schemas.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { apiProgram, sourceFiles } from '../typescript/api-program.js';
import { ts } from '../typescript/compiler.cjs';
import { readProjectDomain } from '../project/find.js';
import { MarkerIndex, Report, type Marker } from '../markers/index.js';
import { SchemaBuilder } from '../schema/index.js';
import { brandSchema } from '../schema/resolve.js';
import type { LibVariant } from '../typescript/program.js';
import { defaultRegistry } from './registry.js';
import { API_DIR, SOURCE_DIR } from '../project/layout.js';

export interface ManifestContext {
  root: string;
  /**
   * The directory (relative to the root, `/`-separated, '' for the root itself) whose
   * `<group>/<version>/*.ts` files hold the kinds: `src/api`, or the root of `manifests --paths DIR`.
   */
  apiDir: string;
  /** The PROJECT file's domain, when it has one. Read from PROJECT when first asked for. */
  readonly domain: string | undefined;
  /** The program of the API files (`src/api/**`) and what they import. */
  program: ts.Program;
  checker: ts.TypeChecker;
  /** The markers and doc comments of every source, collected once per file. */
  markers: MarkerIndex;
  /** Where every diagnostic of the run goes. */
  report: Report;
  /** The schema of a kind's root type, and of what it uses. */
  schemas: SchemaBuilder;
  /**
   * The scanned sources (`src/**\/*.ts` without tests and declarations), sorted by path: those of the
   * program (`src/api/**` and the files they import), and the others, parsed alone for their markers.
   */
  sources: ts.SourceFile[];
  /** Whether the program loaded the smaller entries of the runtime and client-node (declarations.ts). */
  declarations: 'subset' | 'full';
  /** Whether the program's lib.es5.d.ts lacked its interfaces' methods (lib-subset.ts). */
  lib: LibVariant;
  /** What made the program take the full library after the subset (`file:line: what`), if anything. */
  libBlocker: string | undefined;
  displayPath(sf: ts.SourceFile): string;
  /** File-level markers of every scanned source, in path then source order. */
  packageMarkers(): Marker[];
}

/**
 * `planned`: files (relative to root) whose content stands for what is on disk, and files not yet written:
 * the TypeScript of a scaffold's plan, so that its manifests are generated before anything is written.
 */
export function createContext(
  root: string,
  planned?: ReadonlyMap<string, string>,
  options: { lib?: LibVariant; paths?: boolean } = {},
): ManifestContext {
  // `manifests --paths DIR` (controller-gen's `paths=`): DIR is the root, its sources are the API files.
  const srcDir = (options.paths ? root : path.join(root, SOURCE_DIR)).split(path.sep).join('/');
  const overlay = new Map<string, string>();
  for (const [file, content] of planned ?? []) {
    if (!file.startsWith(`${SOURCE_DIR}/`) || !file.endsWith('.ts') || /\.(test|d)\.ts$/.test(file)) continue;
    overlay.set(path.join(root, file).split(path.sep).join('/'), content);
  }
  const read = (file: string): string => overlay.get(file) ?? readFileSync(file, 'utf8');
  const linkedOut: string[] = [];
  const onDisk = existsSync(srcDir) ? sourceFiles(srcDir, realpathSync(root), linkedOut) : [];
  const all = [...new Set([...onDisk, ...overlay.keys()])].sort();
  const apiDir = options.paths ? '' : API_DIR;
  const apiPrefix = options.paths ? `${srcDir}/` : `${path.join(root, API_DIR).split(path.sep).join('/')}/`;
  const { program, declarations, lib, libBlocker } = apiProgram(
    root,
    all.filter((f) => f.startsWith(apiPrefix)),
    overlay,
    read,
    options.lib ?? 'subset',
    (checker, type) => brandSchema(checker, type) !== undefined,
  );
  const checker = program.getTypeChecker();
  const displayPath = (sf: ts.SourceFile): string =>
    path.relative(root, sf.fileName).split(path.sep).join('/');
  const report = new Report(displayPath);
  for (const file of linkedOut) {
    report.error(
      { file: path.relative(root, file).split(path.sep).join('/'), line: 1, col: 1 },
      'link-out-of-project',
      'a symbolic link out of the project: kubesmith reads only files inside the project',
      'replace the link with the file or directory itself',
    );
  }
  const markers = new MarkerIndex(defaultRegistry(), report);
  const optionalDirs = new Map<string, boolean>();
  const schemas = new SchemaBuilder({
    checker,
    markers,
    report,
    // `+kubebuilder:validation:Optional` in any file of a directory makes its fields optional by default.
    optionalByDefault: (sf) => {
      const dir = path.dirname(sf.fileName);
      let optional = optionalDirs.get(dir);
      if (optional === undefined) {
        optional = sources
          .filter((f) => path.dirname(f.fileName) === dir)
          .some((f) =>
            markers.fileMarkers(f).package.some((m) => m.name === 'kubebuilder:validation:Optional'),
          );
        optionalDirs.set(dir, optional);
      }
      return optional;
    },
  });
  // The program's files (those under src/api and what they import), and the others parsed alone: their
  // markers (rbac, webhook...) are read from comments, without types.
  const sources = all
    .map(
      (file) =>
        program.getSourceFile(file) ?? ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true),
    )
    .sort((a, b) => (displayPath(a) < displayPath(b) ? -1 : displayPath(a) > displayPath(b) ? 1 : 0));
  let domain: { value: string | undefined } | undefined;
  return {
    root,
    apiDir,
    get domain() {
      return (domain ??= { value: readProjectDomain(root) }).value;
    },
    program,
    checker,
    markers,
    report,
    schemas,
    sources,
    declarations,
    lib,
    libBlocker,
    displayPath,
    packageMarkers: () => sources.flatMap((sf) => markers.fileMarkers(sf).package),
  };
}
