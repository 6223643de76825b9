/**
 * The project's sources as the generator finds them, before any is parsed, and the part of them one thread
 * of a parallel run generates (a Share). Without TypeScript: a run on two threads (parallel.ts) lists them
 * and starts its worker before the compiler loads.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { API_DIR, SOURCE_DIR } from '../project/layout.js';
import type { ts } from '../typescript/compiler.cjs';
import type { Imports } from '../typescript/declarations.js';
import { sourceFiles } from '../typescript/source-files.js';
import type { GenerateOptions } from './generate.js';

export interface SourceListing {
  root: string;
  /** Every scanned source (absolute, `/`-separated, sorted): files on disk and planned ones. */
  all: string[];
  /** Those under the API directory: the program's root files. */
  apiFiles: string[];
  /** The text of a source: a planned file's, else the disk's. */
  read: (file: string) => string;
  /** The planned sources, by absolute path. */
  overlay: ReadonlyMap<string, string>;
  /** Links out of the project, left out (reported by createContext). */
  linkedOut: string[];
  paths: boolean;
}

/**
 * `planned`: files (relative to root) whose content stands for what is on disk, and files not yet written:
 * the TypeScript of a scaffold's plan, so that its manifests are generated before anything is written.
 */
export function listSources(
  root: string,
  planned?: ReadonlyMap<string, string>,
  options: { paths?: boolean } = {},
): SourceListing {
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
  const apiPrefix = options.paths ? `${srcDir}/` : `${path.join(root, API_DIR).split(path.sep).join('/')}/`;
  return {
    root,
    all,
    apiFiles: all.filter((f) => f.startsWith(apiPrefix)),
    read,
    overlay,
    linkedOut,
    paths: options.paths ?? false,
  };
}

/**
 * The part of a project one thread generates (parallel.ts): the kinds of `owned` API files, with the
 * file-level markers of `packageFiles` (group, version, defaults of their directories) and, with
 * `others`, the sources outside the API directory (rbac and webhook markers, misplaced kind markers).
 */
export interface Share {
  owned: readonly string[];
  packageFiles: readonly string[];
  others: boolean;
  /** What all the API files import from the runtime and client-node (importsOfAll). */
  imports: Imports;
  /** API files already parsed (parseApiFiles). */
  parsed?: ReadonlyMap<string, ts.SourceFile>;
}

/** The sources `options` asks for. */
export const listingOf = (options: GenerateOptions): SourceListing =>
  listSources(options.root, options.sources, { paths: options.paths ?? false });
