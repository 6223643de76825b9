/**
 * Part of `npm run build`: writes TypeScript's lib files, as @ts-morph/common serves them to ts-morph, to
 * dist/typescript/lib/ with the TypeScript version they belong to. `kubesmith manifests` then reads the one
 * or two it needs (lib.es5.d.ts) from there instead of loading @ts-morph/common's 2.5 MB module, which
 * holds them all (40 ms and 27 MB of a cold run). A different TypeScript at run time falls back to that
 * module (src/typescript/program.ts). Usage: node scripts/lib-files.mjs [out-dir]
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const out = process.argv[2] ?? fileURLToPath(new URL('../dist/typescript/lib', import.meta.url));
const { getLibFiles, ts } = createRequire(import.meta.url)('@ts-morph/common');

mkdirSync(out, { recursive: true });
for (const name of readdirSync(out)) rmSync(path.join(out, name), { recursive: true });
const libFiles = getLibFiles();
for (const { fileName, text } of libFiles) writeFileSync(path.join(out, fileName), text);
// The smaller lib.es5.d.ts of src/typescript/lib-subset.ts, made once here rather than in every run.
const { SUBSET_LIB, subsetLibText } = await import('../dist/typescript/lib-subset.js');
const subset = path.join(out, 'subset');
rmSync(subset, { recursive: true, force: true });
mkdirSync(subset);
const es5 = libFiles.find((f) => f.fileName === SUBSET_LIB);
writeFileSync(path.join(subset, SUBSET_LIB), subsetLibText(es5.text));
writeFileSync(path.join(out, 'typescript-version'), `${ts.version}\n`);
