/**
 * `npm run bench`: times `kubesmith manifests` as a whole process on synthetic API trees of 1, 10, 50 and
 * 200 kinds, against `tsc --noEmit` (the floor: the TypeScript that ts-morph bundles, 5.9) and against
 * ts-json-schema-generator and typescript-json-schema on the same types. Prints the median wall time and
 * peak RSS of each as a markdown table. Options: --sizes 1,10 --runs 3.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { writeSyntheticProject } from './synthetic.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const require = createRequire(import.meta.url);
const peakRss = fileURLToPath(new URL('./peak-rss.cjs', import.meta.url));

const { values } = parseArgs({
  options: { sizes: { type: 'string', default: '1,10,50,200' }, runs: { type: 'string', default: '5' } },
});
const sizes = values.sizes.split(',').map(Number);
const runs = Number(values.runs);

function bin(pkg, name) {
  const manifest = require(`${pkg}/package.json`);
  const relative = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin[name ?? pkg];
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), relative);
}

const tools = {
  kubesmith: [path.join(repo, 'bin/kubesmith.js'), 'manifests', '--crd'],
  tsc: [bin('typescript', 'tsc'), '--noEmit', '-p', 'tsconfig.json'],
  'ts-json-schema-generator': [
    bin('ts-json-schema-generator'),
    '--path',
    'src/api/bench/v1/*.types.ts',
    '--type',
    '*',
    '--tsconfig',
    'tsconfig.json',
    '--out',
    'tjsg.json',
  ],
  'typescript-json-schema': [
    bin('typescript-json-schema'),
    'tsconfig.json',
    '*',
    '--required',
    '--out',
    'tjs.json',
  ],
};

/** Runs one command in `cwd`; returns its wall time (ms) and peak RSS (MiB). */
async function measure(cwd, args) {
  const rssFile = path.join(cwd, `.rss-${process.pid}`);
  await rm(rssFile, { force: true });
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, {
    cwd,
    env: { ...process.env, NODE_OPTIONS: `--require ${peakRss}`, BENCH_RSS_FILE: rssFile, NO_COLOR: '1' },
    encoding: 'utf8',
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) {
    throw new Error(
      `${args.join(' ')} failed in ${cwd} (exit ${result.status}):\n${result.stderr}${result.stdout}`,
    );
  }
  const kib = Math.max(...(await readFile(rssFile, 'utf8')).trim().split('\n').map(Number));
  return { ms, mib: kib / 1024 };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function series(cwd, args, before) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    if (before) await before();
    samples.push(await measure(cwd, args));
  }
  return { ms: median(samples.map((s) => s.ms)), mib: median(samples.map((s) => s.mib)) };
}

const rows = [];
for (const size of sizes) {
  const dir = await mkdtemp(path.join(os.tmpdir(), `kubesmith-bench-${size}-`));
  try {
    await writeSyntheticProject(dir, size);
    const cold = await series(dir, tools.kubesmith, () =>
      rm(path.join(dir, 'config'), { recursive: true, force: true }),
    );
    const rerun = await series(dir, tools.kubesmith);
    const tsc = await series(dir, tools.tsc);
    const tjsg = await series(dir, tools['ts-json-schema-generator']);
    const tjs = await series(dir, tools['typescript-json-schema']);
    rows.push({ size, cold, rerun, tsc, tjsg, tjs });
    process.stderr.write(`measured ${size} kinds\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const cell = (m) => `${(m.ms / 1000).toFixed(2)} s, ${Math.round(m.mib)} MiB`;
const lines = [
  `Median of ${runs} runs, wall time and peak RSS, Node ${process.version}, ${os.cpus().length} CPUs.`,
  '',
  '| kinds | kubesmith manifests | re-run, unchanged | tsc --noEmit | kubesmith / tsc | ts-json-schema-generator | typescript-json-schema |',
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map(
    (r) =>
      `| ${r.size} | ${cell(r.cold)} | ${cell(r.rerun)} | ${cell(r.tsc)} | ${(r.cold.ms / r.tsc.ms).toFixed(2)}x | ${cell(r.tjsg)} | ${cell(r.tjs)} |`,
  ),
];
process.stdout.write(`${lines.join('\n')}\n`);
