/**
 * The one context every generator pass shares, `{ program, checker, markers, report, schemas }` as
 * controller-tools' genall: one TypeScript program over the API files (`src/api/**` and what they import,
 * src/typescript), the other sources of `src/` parsed for their markers only, the markers of all of them
 * (read through `markers`, from the registry every generator's markers make, registry.ts), the one
 * `report` every diagnostic goes to, and the schema builder, which the passes ask only for schemas.
 */
import path from 'node:path';
import { apiProgram } from '../typescript/api-program.js';
import { ts } from '../typescript/compiler.cjs';
import { readProjectDomain } from '../project/find.js';
import { MarkerIndex, Report, type Marker } from '../markers/index.js';
import { SchemaBuilder } from '../schema/index.js';
import { brandSchema } from '../schema/resolve.js';
import type { LibVariant } from '../typescript/program.js';
import { defaultRegistry } from './registry.js';
import { API_DIR } from '../project/layout.js';
import { listSources, type Share, type SourceListing } from './sources.js';

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
  /**
   * Whether this run generates the kinds of a scanned source and checks its markers: every source, but in
   * one thread's share of a parallel run (parallel.ts), whose other sources are read for file-level
   * markers only.
   */
  owns(sf: ts.SourceFile): boolean;
  /** File-level markers of every scanned source, in path then source order. */
  packageMarkers(): Marker[];
}

export function createContext(
  root: string,
  planned?: ReadonlyMap<string, string>,
  options: { lib?: LibVariant; paths?: boolean } = {},
): ManifestContext {
  return contextOf(listSources(root, planned, options), options.lib);
}

/** The context over `listing`, or over one thread's `share` of it. */
export function contextOf(listing: SourceListing, lib?: LibVariant, share?: Share): ManifestContext {
  const { root, read, overlay } = listing;
  const apiDir = listing.paths ? '' : API_DIR;
  const apiFiles = new Set(listing.apiFiles);
  const owned = share ? new Set(share.owned) : undefined;
  const all = share
    ? [
        ...new Set([
          ...share.owned,
          ...share.packageFiles,
          ...(share.others ? listing.all.filter((f) => !apiFiles.has(f)) : []),
        ]),
      ].sort()
    : listing.all;
  const {
    program,
    declarations,
    lib: libVariant,
    libBlocker,
  } = apiProgram(
    root,
    share ? [...share.owned] : listing.apiFiles,
    overlay,
    read,
    lib ?? 'subset',
    (checker, type) => brandSchema(checker, type) !== undefined,
    share?.parsed,
    share?.imports,
  );
  const checker = program.getTypeChecker();
  // Once per file: sorting the sources asks ~3,000 times at 200 kinds, and path.relative is not cheap.
  const displayPaths = new Map<string, string>();
  const displayPath = (sf: ts.SourceFile): string => {
    let shown = displayPaths.get(sf.fileName);
    if (shown === undefined) {
      shown = path.relative(root, sf.fileName).split(path.sep).join('/');
      displayPaths.set(sf.fileName, shown);
    }
    return shown;
  };
  const report = new Report(displayPath);
  for (const file of !share || share.others ? listing.linkedOut : []) {
    report.error(
      { file: path.relative(root, file).split(path.sep).join('/'), line: 1, col: 1 },
      'link-out-of-project',
      'a symbolic link out of the project: kubesmith reads only files inside the project',
      'replace the link with the file or directory itself',
    );
  }
  const markers = new MarkerIndex(defaultRegistry(), report);
  const optionalDirs = new Map<string, boolean>();
  // Asked for every property: answered once per file, without taking its directory name each time.
  const optionalFiles = new Map<ts.SourceFile, boolean>();
  const schemas = new SchemaBuilder({
    checker,
    markers,
    report,
    // `+kubebuilder:validation:Optional` in any file of a directory makes its fields optional by default.
    optionalByDefault: (sf) => {
      let optional = optionalFiles.get(sf);
      if (optional !== undefined) return optional;
      const dir = path.dirname(sf.fileName);
      optional = optionalDirs.get(dir);
      if (optional === undefined) {
        optional = sources
          .filter((f) => path.dirname(f.fileName) === dir)
          .some((f) =>
            markers.fileMarkers(f).package.some((m) => m.name === 'kubebuilder:validation:Optional'),
          );
        optionalDirs.set(dir, optional);
      }
      optionalFiles.set(sf, optional);
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
    lib: libVariant,
    libBlocker,
    displayPath,
    owns: (sf) => !owned || owned.has(sf.fileName) || (share!.others && !apiFiles.has(sf.fileName)),
    packageMarkers: () => sources.flatMap((sf) => markers.fileMarkers(sf).package),
  };
}
