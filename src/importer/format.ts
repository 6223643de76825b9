/**
 * The imported files formatted with the Prettier settings of the directory they go to (a project's
 * `.prettierrc`), else those of a new kubesmith project: the same input always gives the same files, and
 * they pass the project's `prettier --check`.
 *
 * Prettier is most of an import's time, so emit.ts lays the code out as Prettier prints it with a new
 * project's settings and any `printWidth`. Prettier runs only where that layout is not certain to be
 * Prettier's: in a directory whose settings differ otherwise, and on a file with a line of code the
 * emitter could not fit in the width or holding other than ASCII (whose width Prettier measures its own
 * way). test/importer/format.test.ts holds the emitter to Prettier's output on the whole import corpus.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type * as Prettier from 'prettier';
import type { Options } from 'prettier';

/** A new kubesmith project's settings (templates/init/.prettierrc). */
const PROJECT_SETTINGS = { singleQuote: true, printWidth: 110, trailingComma: 'all' } as const;

/**
 * The settings that change how Prettier prints what the emitter writes, each with the value the emitter
 * assumes, and Prettier's default, which is what an absent setting means.
 */
const ASSUMED: Record<string, { value: unknown; default: unknown }> = {
  singleQuote: { value: true, default: false },
  trailingComma: { value: 'all', default: 'all' },
  semi: { value: true, default: true },
  tabWidth: { value: 2, default: 2 },
  useTabs: { value: false, default: false },
  quoteProps: { value: 'as-needed', default: 'as-needed' },
  bracketSpacing: { value: true, default: true },
  objectWrap: { value: 'preserve', default: 'preserve' },
  endOfLine: { value: 'lf', default: 'lf' },
  experimentalOperatorPosition: { value: 'start', default: 'start' },
  insertPragma: { value: false, default: false },
  requirePragma: { value: false, default: false },
};

/** Settings for what the imported files do not hold (JSX, HTML, prose, arrow functions, ternaries...). */
const IRRELEVANT = new Set([
  '$schema',
  'arrowParens',
  'bracketSameLine',
  'embeddedLanguageFormatting',
  'experimentalTernaries',
  'htmlWhitespaceSensitivity',
  'jsxBracketSameLine',
  'jsxSingleQuote',
  'proseWrap',
  'singleAttributePerLine',
  'vueIndentScriptAndStyle',
]);

/**
 * Whether Prettier prints the emitter's layout unchanged with `options`: each setting that matters as the
 * emitter assumes it (any `printWidth`), and no other (plugins, parsers, overrides of unknown settings).
 */
export function emitterLayoutHolds(options: Options): boolean {
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined || key === 'printWidth' || IRRELEVANT.has(key)) continue;
    if (key === 'parser' && value === 'typescript') continue;
    if (!(key in ASSUMED)) return false;
  }
  return Object.entries(ASSUMED).every(
    ([key, setting]) => ((options as Record<string, unknown>)[key] ?? setting.default) === setting.value,
  );
}

/**
 * Long lines of code Prettier has no place to break: an interface's first line, and a property of a named
 * type or an array of it (long names of deeply nested types, in a PodTemplateSpec for one).
 */
const UNBREAKABLE = /^(export interface [\w$]+ \{| {2}[\w$]+\??: [\w$]+(\[\])*;)$/;

/**
 * Whether each line of code (not of a comment) of an emitted file fits in `width` columns, or is one
 * Prettier cannot break, and is ASCII. The emitter's lines that are not comments never start with `*`
 * or `/`.
 */
export function fitsLayout(content: string, width: number): boolean {
  for (const line of content.split('\n')) {
    if (/^[\x20-\x7e]*$/.test(line) && (line.length <= width || UNBREAKABLE.test(line))) continue;
    const start = line.trimStart();
    if (start.startsWith('*') || start.startsWith('/')) continue;
    return false;
  }
  return true;
}

export interface Formatter {
  /** The `printWidth` of `file`'s directory, for the emitter's layout. */
  width(file: string): Promise<number>;
  /** `content`, emitted for `file` (relative to the output directory) with its width, formatted. */
  format(file: string, content: string): Promise<string>;
}

/**
 * The files Prettier 3 reads settings from (a package.json or package.yaml only when it has a `prettier`
 * key, and .editorconfig only when asked to, but their presence is enough to leave the answer to it).
 */
const SETTINGS_FILES = [
  '.prettierrc',
  '.prettierrc.json',
  '.prettierrc.yaml',
  '.prettierrc.yml',
  '.prettierrc.json5',
  '.prettierrc.js',
  '.prettierrc.ts',
  '.prettierrc.mjs',
  '.prettierrc.mts',
  '.prettierrc.cjs',
  '.prettierrc.cts',
  '.prettierrc.toml',
  'prettier.config.js',
  'prettier.config.ts',
  'prettier.config.mjs',
  'prettier.config.mts',
  'prettier.config.cjs',
  'prettier.config.cts',
  'package.json',
  'package.yaml',
  '.editorconfig',
];

/**
 * Whether no directory from `dir` up holds a file Prettier could read settings from. Then its answer is
 * known (none: a new project's settings) without loading Prettier, a twentieth of the import of 100 CRDs
 * outside a project.
 */
function noSettingsFileAbove(dir: string): boolean {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    if (SETTINGS_FILES.some((name) => existsSync(path.join(at, name)))) return false;
    if (path.dirname(at) === at) return true;
  }
}

/** The formatter of files under `outDir`, Prettier loaded only when a file needs it. */
export function formatter(outDir: string): Formatter {
  let loaded: Promise<typeof Prettier> | undefined;
  const prettier = () => (loaded ??= import('prettier'));
  // Settings resolved once per directory: resolving them is a search of the file system.
  const byDir = new Map<string, Promise<Options>>();
  const settings = (file: string): Promise<Options> => {
    const dir = path.dirname(`${outDir}/${file}`);
    let resolved = byDir.get(dir);
    if (!resolved) {
      resolved = noSettingsFileAbove(dir)
        ? Promise.resolve(PROJECT_SETTINGS)
        : prettier().then(async (p) => (await p.resolveConfig(`${outDir}/${file}`)) ?? PROJECT_SETTINGS);
      byDir.set(dir, resolved);
    }
    return resolved;
  };
  return {
    width: async (file) => (await settings(file)).printWidth ?? 80,
    format: async (file, content) => {
      const options = await settings(file);
      if (emitterLayoutHolds(options) && fitsLayout(content, options.printWidth ?? 80)) return content;
      return (await prettier()).format(content, { ...options, filepath: `${outDir}/${file}` });
    },
  };
}
