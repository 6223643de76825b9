/**
 * Where a cold `kubesmith manifests` spends its time, in one process on a synthetic tree (default 50 kinds):
 * `node test/bench/phases.mjs [--kinds 50] [--corpus small|realistic]` after `npm run build` (the corpora of
 * `npm run bench`, docs/benchmarks.md; default small). The program is first built step by step
 * as createContext builds it (same compiler options, the full declarations of the runtime), then the real
 * createContext (the smaller declarations) and generateCrds run, and last a full semantic check of the same
 * program shows what type checking everything would add.
 * Timings after the first steps run on a warm JIT, so they are lower bounds of their share of a cold run.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { writeRealisticProject } from './realistic.mjs';
import { writeSyntheticProject } from './synthetic.mjs';

const { values } = parseArgs({
  options: { kinds: { type: 'string', default: '50' }, corpus: { type: 'string', default: 'small' } },
});
const kinds = Number(values.kinds);
const writers = { small: writeSyntheticProject, realistic: writeRealisticProject };
if (!Number.isInteger(kinds) || kinds < 1 || !Object.hasOwn(writers, values.corpus)) {
  throw new Error('usage: node test/bench/phases.mjs [--kinds 50] [--corpus small|realistic]');
}
const dist = (file) => new URL(`../../dist/${file}`, import.meta.url).href;

const phases = [];
let last = performance.now();
function phase(name) {
  const now = performance.now();
  phases.push([name, now - last]);
  last = now;
}
phases.push(['node start to first line', performance.now()]);

const dir = await mkdtemp(path.join(os.tmpdir(), `kubesmith-phases-${kinds}-`));
try {
  await writers[values.corpus](dir, kinds);
  last = performance.now();

  // As kubesmith loads it: required from CommonJS, through the V8 code cache on Node 20 (written at the end
  // of the first run; NODE_DISABLE_COMPILE_CACHE=1 measures without it).
  const { ts } = createRequire(import.meta.url)('../../dist/typescript/compiler.cjs');
  phase('load TypeScript');
  const { createContext } = await import(dist('manifests/context.js'));
  const { createProgram, parseOptions, projectOptions } = await import(dist('typescript/program.js'));
  const { generateCrds } = await import(dist('manifests/crd.js'));
  const { writeYamlDocuments } = await import(dist('manifests/yaml.js'));
  phase('load the generator modules');

  const options = projectOptions(dir, { noEmit: true, lib: ['lib.es5.d.ts'], types: [] }, {});
  phase('read tsconfig.json');
  const api = path.join(dir, 'src/api/bench/v1');
  const files = (await readdir(api)).map((f) => `${api}/${f}`).sort();
  const cache = new Map();
  for (const file of files) {
    cache.set(file, ts.createSourceFile(file, await readFile(file, 'utf8'), parseOptions(options)));
  }
  phase(`parse the ${files.length} API files`);
  const program = createProgram(files, options, new Map(), cache);
  phase(`create the program, full runtime declarations (${program.getSourceFiles().length} files)`);
  program.getTypeChecker();
  phase('create its type checker (bind every file)');

  const ctx = createContext(dir);
  phase(
    `createContext, warm: ${ctx.declarations} declarations, ${ctx.lib} lib.es5 (${ctx.program.getSourceFiles().length} files)`,
  );
  const crds = [...generateCrds(ctx, { version: 'bench' })];
  phase(`generateCrds: ${crds.length} CRDs (checker queries, markers, schemas)`);
  for (const file of crds) writeYamlDocuments(file.documents);
  phase('write the YAML (in memory)');

  const diagnostics = ctx.program.getSemanticDiagnostics();
  phase(`not done by kubesmith: full semantic check (${diagnostics.length} diagnostics)`);
} finally {
  await rm(dir, { recursive: true, force: true });
}

const rows = phases.map(([name, ms]) => `| ${name} | ${Math.round(ms)} ms |`);
process.stdout.write(
  `${kinds} kinds (${values.corpus} corpus), Node ${process.version}, peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB\n\n` +
    `| phase | time |\n| --- | ---: |\n${rows.join('\n')}\n`,
);
