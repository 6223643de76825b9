/**
 * The TypeScript program of the API files, built with TypeScript's API the way ts-morph built it for the
 * generator before: the project's tsconfig options under the generator's, TypeScript's lib files served
 * from memory under `/node_modules/typescript/lib`, every file parsed for the options' target. Without
 * ts-morph's project layer a cold run loads and does less.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubesmithError } from '../errors.js';
import { SUBSET_LIB, subsetLibText } from './lib-subset.js';
import { ts } from './compiler.cjs';

const LIB_FOLDER = '/node_modules/typescript/lib';
/** The lib files `npm run build` copies from @ts-morph/common (scripts/lib-files.mjs). */
const SHIPPED_LIBS = fileURLToPath(new URL('./lib/', import.meta.url));

let libTexts: ((fileName: string) => string | undefined) | undefined;
let shippedLibs = false;
let subsetText: string | undefined;

/**
 * Which library a program gets: TypeScript's, or the one whose ES5 file lacks its interfaces' methods
 * (lib-subset.ts says when that one may serve).
 */
export type LibVariant = 'full' | 'subset';

/**
 * The text of a TypeScript lib file (`lib.es5.d.ts`), as ts-morph serves it: from the copy the build
 * shipped when it belongs to this TypeScript, else from @ts-morph/common, which holds them all. The
 * subset of lib.es5.d.ts comes from the build too (`subset/`), or is made here from the full text.
 */
function libText(fileName: string, variant: LibVariant): string | undefined {
  if (variant === 'subset' && fileName === SUBSET_LIB) {
    if (subsetText === undefined) {
      const full = libText(fileName, 'full'); // also settles whether the build shipped the files
      try {
        if (shippedLibs) subsetText = readFileSync(path.join(SHIPPED_LIBS, 'subset', fileName), 'utf8');
      } catch {
        // An older build without it: made from the full text.
      }
      if (subsetText === undefined && full !== undefined) subsetText = subsetLibText(full);
    }
    return subsetText;
  }
  if (!libTexts) {
    let shipped: string | undefined;
    try {
      shipped = readFileSync(path.join(SHIPPED_LIBS, 'typescript-version'), 'utf8').trim();
    } catch {
      // Not built (tests run the sources): the package has them.
    }
    if (shipped === ts.version) {
      shippedLibs = true;
      libTexts = (name) => {
        if (!/^lib(\.[\w-]+)*\.d\.ts$/.test(name)) return undefined;
        try {
          return readFileSync(path.join(SHIPPED_LIBS, name), 'utf8');
        } catch {
          return undefined;
        }
      };
    } else {
      const common = createRequire(import.meta.url)('@ts-morph/common') as {
        getLibFiles(): { fileName: string; text: string }[];
      };
      const texts = new Map(common.getLibFiles().map((f) => [f.fileName, f.text]));
      libTexts = (name) => texts.get(name);
    }
  }
  return libTexts(fileName);
}

/** The project's tsconfig options (its `include` is not expanded: the roots are the API files) under `overrides`. */
export function projectOptions(
  root: string,
  overrides: ts.CompilerOptions,
  withoutTsconfig: ts.CompilerOptions,
): ts.CompilerOptions {
  const tsconfig = path.join(root, 'tsconfig.json').split(path.sep).join('/');
  if (!existsSync(tsconfig)) return withoutTsconfig;
  const text = ts.sys.readFile(tsconfig) ?? '';
  const json = ts.parseConfigFileTextToJson(tsconfig, text);
  if (json.error) {
    throw new KubesmithError(
      `cannot read ${tsconfig}: ${ts.flattenDiagnosticMessageText(json.error.messageText, '\n')}`,
      { hint: 'fix the JSON of tsconfig.json' },
    );
  }
  const host: ts.ParseConfigHost = { ...ts.sys, readDirectory: () => [] };
  const parsed = ts.parseJsonConfigFileContent(
    json.config,
    host,
    path.dirname(tsconfig),
    undefined,
    tsconfig,
  );
  return { ...parsed.options, ...overrides };
}

/**
 * How every file of the program is parsed: for the options' target; JSDoc only where TypeScript needs it
 * for types (JavaScript files), as tsc does (descriptions and markers are read from comments). Parent nodes
 * are not set by the parser: the binder sets them.
 */
export const parseOptions = (options: ts.CompilerOptions): ts.CreateSourceFileOptions => ({
  languageVersion: options.target ?? ts.ScriptTarget.Latest,
  jsDocParsingMode: ts.JSDocParsingMode.ParseForTypeErrors,
});

/**
 * A program over `rootNames`. `entries` gives the text of some files (a scaffold's planned files, the
 * smaller declarations of declarations.ts). Parsed files are kept in `cache` and serve again unless an
 * entry gives their file another text: a second program (the fallback) does not parse them again, nor
 * does the program a scaffold's planned API files, parsed before it to read their imports. The subset
 * of lib.es5.d.ts is cached under its own key. A file `mayRead` refuses is as if it did not exist.
 */
export function createProgram(
  rootNames: readonly string[],
  options: ts.CompilerOptions,
  entries: ReadonlyMap<string, string>,
  cache: Map<string, ts.SourceFile>,
  variant: LibVariant = 'full',
  mayRead: (file: string) => boolean = () => true,
): ts.Program {
  // Lib files are read once each (a program asks for a file more than once), and only under LIB_FOLDER.
  const libs = new Map<string, string | undefined>();
  const lib = (file: string): string | undefined => {
    if (path.posix.dirname(file) !== LIB_FOLDER) return undefined;
    if (!libs.has(file)) libs.set(file, libText(path.posix.basename(file), variant));
    return libs.get(file);
  };
  const cacheKey = (file: string): string =>
    variant === 'subset' && file === `${LIB_FOLDER}/${SUBSET_LIB}` ? `subset:${file}` : file;
  const readFile = (file: string): string | undefined =>
    entries.get(file) ?? lib(file) ?? (mayRead(file) ? ts.sys.readFile(file) : undefined);
  const parse = parseOptions(options);
  const host: ts.CompilerHost = {
    getSourceFile(fileName) {
      // A planned file was parsed from its entry's own text (the same string); the smaller declarations
      // of the runtime and client-node are never cached, their files' full text is.
      const cached = cache.get(cacheKey(fileName));
      if (cached && (!entries.has(fileName) || cached.text === entries.get(fileName))) return cached;
      const text = readFile(fileName);
      if (text === undefined) return undefined;
      const sf = ts.createSourceFile(fileName, text, parse);
      if (!entries.has(fileName)) cache.set(cacheKey(fileName), sf);
      return sf;
    },
    getDefaultLibFileName: (o) => `${LIB_FOLDER}/${ts.getDefaultLibFileName(o)}`,
    getDefaultLibLocation: () => LIB_FOLDER,
    writeFile: () => undefined,
    getCurrentDirectory: () => process.cwd(),
    getCanonicalFileName: (f) => (ts.sys.useCaseSensitiveFileNames ? f : f.toLowerCase()),
    useCaseSensitiveFileNames: () => ts.sys.useCaseSensitiveFileNames,
    getNewLine: () => '\n',
    fileExists: (f) => entries.has(f) || lib(f) !== undefined || (ts.sys.fileExists(f) && mayRead(f)),
    readFile,
    directoryExists: (d) => d === LIB_FOLDER || ts.sys.directoryExists(d),
    getDirectories: (d) => ts.sys.getDirectories(d),
    realpath: (f) => (lib(f) !== undefined ? f : (ts.sys.realpath?.(f) ?? f)),
  };
  return ts.createProgram({ rootNames, options, host });
}
