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
//
// CPU time on the same Nodes: V8 sends a function to TurboFan, its optimizing compiler, after it has used
// up its "interrupt budget" (67,584 bytes of bytecode run, by default) a few times. In a run of a second,
// thousands of TypeScript's parser, binder and checker functions get there, and compiling them (on
// another thread, counted in CPU time) and deoptimizing them costs more than the optimized code saves
// before the process exits. With a budget of 512,000, a cold run at 50 kinds took 0.48 s of CPU instead of
// 0.80 s, at 200 kinds 0.92 s instead of 1.46 s, and at 1,000 kinds 3.2-3.6 s instead of 3.5-3.7 s: the
// hottest functions are still optimized (docs/benchmarks.md, "Closing the gap"). Set before TypeScript loads, so its functions get the larger
// budget; like the flag above, it changes V8's flag hash, and the code cache is rewritten once.
if (typeof (Module as { enableCompileCache?: unknown }).enableCompileCache !== 'function') {
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  v8.setFlagsFromString('--interrupt-budget=512000');
} else if (process.versions.v8.startsWith('12.')) {
  // Node 22 (V8 12.4) counts calls instead: a function goes to TurboFan after 3,000 of them. Ten times as
  // many: 0.74x of the CPU time, 0.79x of the wall time and 7 MiB less peak RSS at 50 realistic kinds
  // (15 pairs, each with a compile cache of its own), 0.83x, 0.90x and 8 MiB less at 200 (9 pairs). Not
  // on Node 24 (V8 13.6): 0.96x of the CPU time at 50 kinds, within the noise (docs/benchmarks.md).
  // Only on a V8 known to have the flag: an unknown one is an error line on stderr.
  v8.setFlagsFromString('--invocation-count-for-turbofan=30000');
}
const loaded = installCodeCache();
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the point of this module
export import ts = require('@ts-morph/common/dist/typescript.js');
loaded();
