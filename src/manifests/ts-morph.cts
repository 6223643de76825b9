/**
 * TypeScript as ts-morph bundles it (`@ts-morph/common/dist/typescript.js`), loaded with require. An ESM
 * `import` would make Node scan the CommonJS bundle for export names first; a CommonJS module that
 * re-exports it by name skips that scan. On Node 20 the bundle loads through a V8 code cache
 * (code-cache.cts). Neither ts-morph's project layer (ts-morph.js) nor the rest of @ts-morph/common (2.5 MB,
 * mostly the lib files' text) is loaded: the generator builds its program with TypeScript's API and reads
 * the lib files it needs from disk (program.ts).
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
export import ts = require('@ts-morph/common/dist/typescript.js');
loaded();
