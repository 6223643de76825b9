/**
 * TypeScript as ts-morph bundles it (`@ts-morph/common`: the compiler and the lib files, served from
 * memory), loaded with require. An ESM `import` would make Node scan the CommonJS bundle for export names
 * first; a CommonJS module that re-exports it by name skips that scan. On Node 20 the bundles load through
 * a V8 code cache (code-cache.cts). ts-morph's own project layer (ts-morph.js) is not loaded: the generator
 * builds its program with TypeScript's API (program.ts).
 */
import Module from 'node:module';
import v8 from 'node:v8';
import { installCodeCache } from './code-cache.cjs';

// Peak memory on Node before 22.1 (V8 11): a generator run allocates ASTs and types that mostly survive,
// and V8 answers high survival by doubling the young generation up to 3 x 16 MB, which a process this
// short never gives back. Kept at its first size, peak RSS at 200 kinds drops from ~175 to ~145 MB for
// the same CPU time (docs/benchmarks.md). Newer V8s clamp this factor; the flag is left alone there.
if (typeof (Module as { enableCompileCache?: unknown }).enableCompileCache !== 'function') {
  v8.setFlagsFromString('--semi-space-growth-factor=1');
}
const loaded = installCodeCache();
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the point of this module
import common = require('@ts-morph/common');
loaded();

export import ts = common.ts;
/** TypeScript's lib files (`lib.es5.d.ts`...) by file name, as ts-morph serves them. */
export import getLibFiles = common.getLibFiles;
