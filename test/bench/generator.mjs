/**
 * `npm run bench`: times `kubesmith manifests` as a whole process on synthetic API trees of 1, 10, 50 and
 * 200 kinds: first run (no outputs, no stamp, no code cache), cold (no outputs, no stamp) and re-run (inputs
 * and outputs unchanged), against `tsc --noEmit` (the floor: the TypeScript and lib files that ts-morph
 * bundles, see tsc.cjs; also the `typescript` package's own `tsc` bin) and against ts-json-schema-generator
 * and typescript-json-schema on the same types, and against controller-gen on the Go twin of the same API
 * (warm Go build cache), and against the program floor (program-floor.mjs: TypeScript's program over the same
 * types, bound and its properties typed, nothing of kubesmith's own work; on one thread and split over two).
 * Then times `kubesmith create api` in a quick-start project. Prints the median wall
 * time, CPU time and peak RSS of each as markdown tables (stdout).
 *
 * Two corpora (docs/benchmarks.md): `small` (synthetic.mjs, kinds of about 60 lines) and `realistic`
 * (realistic.mjs, kinds of about 190 lines shaped like real operators'), each with its own tables.
 *
 * Options: --sizes 1,10 --runs 3 --corpus small|realistic|all (default all) --out results.md (also writes
 * the tables there).
 * Every process is checked: kubesmith must write one CRD per kind (and say `cached` on a re-run), the peers
 * must emit a schema per kind, the program floor must type a property per kind, tsc must exit 0, controller-gen's CRDs must be kubesmith's as data (the
 * number of differing schema paths is reported), `create api` must write the kind's CRD.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { compareCrds, CONTROLLER_GEN_VERSION, ensureControllerGen } from './controller-gen.mjs';
import { writeRealisticGoTwin, writeRealisticProject } from './realistic.mjs';
import { writeGoTwin, writeSyntheticProject } from './synthetic.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const require = createRequire(import.meta.url);
const here = (file) => fileURLToPath(new URL(file, import.meta.url));

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1,10,50,200' },
    runs: { type: 'string', default: '5' },
    corpus: { type: 'string', default: 'all' },
    out: { type: 'string' },
  },
});
const sizes = values.sizes.split(',').map(Number);
const runs = Number(values.runs);
/** Each corpus: its project and its Go twin (the same API), see docs/benchmarks.md. */
const corpora = {
  small: { writeProject: writeSyntheticProject, writeGoTwin },
  realistic: { writeProject: writeRealisticProject, writeGoTwin: writeRealisticGoTwin },
};
const chosen = values.corpus === 'all' ? Object.keys(corpora) : [values.corpus];
if (
  sizes.some((n) => !Number.isInteger(n) || n < 1) ||
  !Number.isInteger(runs) ||
  runs < 1 ||
  !chosen.every((name) => Object.hasOwn(corpora, name))
) {
  throw new Error(
    'usage: node test/bench/generator.mjs [--sizes 1,10,50,200] [--runs 5] [--corpus small|realistic|all] [--out file.md]',
  );
}

/** The file a package's bin runs, so that every tool is started the same way: `node <file> ...args`. */
function bin(pkg, name = pkg) {
  const manifest = require(`${pkg}/package.json`);
  const relative = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin[name];
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), relative);
}

const version = (pkg) => require(`${pkg}/package.json`).version;
const tsMorphTs = spawnSync(process.execPath, [here('./tsc.cjs'), '--version'], { encoding: 'utf8' })
  .stdout.trim()
  .replace(/^Version /, '');

/** Each tool: its command line (run with node in the synthetic project) and a check of its output. */
const tools = {
  kubesmith: {
    args: [path.join(repo, 'bin/kubesmith.js'), 'manifests', '--crd', '--json'],
    check: (result, dir, kinds) => {
      const { ok, files } = JSON.parse(result.stdout);
      if (!ok || files.length !== kinds.length) throw new Error(`expected ${kinds.length} CRDs`);
    },
  },
  'program floor': {
    args: [here('./program-floor.mjs')],
    check: (result, dir, kinds) => programFloorCheck(result, kinds),
  },
  'program floor (2 threads)': {
    args: [here('./program-floor.mjs'), '--threads', '2'],
    check: (result, dir, kinds) => programFloorCheck(result, kinds),
  },
  tsc: {
    args: [here('./tsc.cjs'), '--noEmit', '-p', 'tsconfig.json'],
  },
  'tsc (typescript bin)': {
    args: [bin('typescript', 'tsc'), '--noEmit', '-p', 'tsconfig.json'],
  },
  'ts-json-schema-generator': {
    args: [
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
    check: (result, dir, kinds) => definitionsOf(path.join(dir, 'tjsg.json'), kinds),
  },
  'typescript-json-schema': {
    args: [bin('typescript-json-schema'), 'tsconfig.json', '*', '--required', '--out', 'tjs.json'],
    check: (result, dir, kinds) => definitionsOf(path.join(dir, 'tjs.json'), kinds),
  },
};

/** The program floor typed at least one property per kind. */
function programFloorCheck(result, kinds) {
  const { properties } = JSON.parse(result.stdout);
  if (!(properties >= kinds.length)) throw new Error(`the program floor typed ${properties} properties`);
}

async function definitionsOf(file, kinds) {
  const { definitions } = JSON.parse(await readFile(file, 'utf8'));
  const missing = kinds.filter((kind) => !definitions?.[kind]?.properties?.spec);
  if (missing.length > 0) throw new Error(`${file}: no schema for ${missing.join(', ')}`);
}

/**
 * Runs `node ...args` in `cwd`; returns its wall time (ms), peak RSS (MiB) and CPU time (ms). The peak
 * RSS and CPU time come from peak-rss.cjs, preloaded with NODE_OPTIONS: Node alone, the same for every
 * Node tool, on any OS.
 */
/**
 * The environment every timed process gets: this one without NODE_EXTRA_CA_CERTS. Node 20 reads and parses
 * that whole certificate bundle while it starts (Debian's, 144 certificates: `node -e 0` took 0.114 s of CPU
 * time with it and 0.035 s without on the machine of docs/benchmarks.md, medians of 21); Node 22 and later
 * read it on first use of TLS, and no tool timed here makes a TLS connection. A machine that sets it (a
 * corporate proxy's CA) pays that on Node 20 in every Node process, whatever the tool.
 */
const { NODE_EXTRA_CA_CERTS: extraCaCerts, ...timedEnv } = process.env;

async function measure(cwd, args, extraEnv = {}) {
  const rssFile = path.join(cwd, `.rss-${process.pid}`);
  await rm(rssFile, { force: true });
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, {
    cwd,
    env: {
      ...timedEnv,
      ...extraEnv,
      NODE_OPTIONS: `--require ${here('./peak-rss.cjs')}`,
      BENCH_RSS_FILE: rssFile,
    },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) {
    throw new Error(
      `node ${args.join(' ')} failed in ${cwd} (exit ${result.status}):\n${result.stderr}${result.stdout}`,
    );
  }
  return { ms, ...(await usageOf(rssFile)), result };
}

/** The peak RSS (MiB) and CPU time (ms) peak-rss.cjs wrote for the processes of one measurement. */
async function usageOf(rssFile) {
  // One line per process that exited (a tool that forks would write several): the largest peak, all CPU.
  const lines = (await readFile(rssFile, 'utf8')).trim().split('\n');
  const usage = lines.map((l) => l.split(' ').map(Number));
  const kib = Math.max(...usage.map(([maxRss]) => maxRss));
  const cpu = usage.reduce((sum, [, micros]) => sum + micros / 1000, 0);
  return { mib: kib / 1024, cpu };
}

/**
 * Runs a native program (controller-gen) in `cwd` under GNU time, which reports its peak RSS (KiB) and
 * CPU time as peak-rss.cjs does for Node; without /usr/bin/time, wall time only. GNU time adds a fork and
 * an exec (about a millisecond) to the wall time.
 */
const GNU_TIME = '/usr/bin/time';
const hasGnuTime = spawnSync(GNU_TIME, ['-f', '%M', 'true'], { encoding: 'utf8' }).status === 0;
async function measureNative(cwd, command, args) {
  const rssFile = path.join(cwd, `.rss-${process.pid}`);
  await rm(rssFile, { force: true });
  const argv = hasGnuTime
    ? [GNU_TIME, '-f', '%M %U %S', '-o', rssFile, command, ...args]
    : [command, ...args];
  const started = process.hrtime.bigint();
  const result = spawnSync(argv[0], argv.slice(1), {
    cwd,
    env: timedEnv,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed in ${cwd} (exit ${result.status}):\n${result.stderr}`,
    );
  }
  if (!hasGnuTime) return { ms, mib: NaN, cpu: NaN, result };
  const [kib, user, sys] = (await readFile(rssFile, 'utf8')).trim().split('\n').at(-1).split(' ').map(Number);
  return { ms, mib: kib / 1024, cpu: (user + sys) * 1000, result };
}

const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * The medians of the ratios of `a`'s samples to `b`'s taken in the same round (wall and CPU time): two
 * tools timed a moment apart see the same machine, so a drift in its speed over the run (other load, a
 * slower spell of a virtual machine's host) moves both sides of a ratio, where it would move the medians
 * of the two lists apart.
 */
const pairedRatios = (a, b) => ({
  ms: median(a.map((s, i) => s.ms / b[i].ms)),
  cpu: median(a.map((s, i) => s.cpu / b[i].cpu)),
});

/** The medians of wall time, peak RSS and CPU time of samples. */
const summary = (samples) => ({
  ms: median(samples.map((s) => s.ms)),
  mib: median(samples.map((s) => s.mib)),
  cpu: median(samples.map((s) => s.cpu)),
});

const controllerGen = ensureControllerGen();
const controllerGenArgs = (out) => ['crd:allowDangerousTypes=true', 'paths=./...', `output:crd:dir=${out}`];

const loadStart = os.loadavg()[0];

/** Measures every size of one corpus; returns a row per size (the medians, and the CRDs' agreement). */
async function measureCorpus(name, { writeProject, writeGoTwin }) {
  const rows = [];
  for (const size of sizes) {
    rows.push(await measureSize(name, size, writeProject, writeGoTwin));
    process.stderr.write(`measured ${name}: ${size} kind${size === 1 ? '' : 's'}\n`);
  }
  return rows;
}

async function measureSize(corpus, size, writeProject, writeGoTwin) {
  const dir = await mkdtemp(path.join(os.tmpdir(), `kubesmith-bench-${corpus}-${size}-`));
  try {
    const kinds = await writeProject(dir, size);
    // The Go twin, outside src/ (kubesmith reads src/ only); one untimed run warms Go's build cache, as
    // on the machine of a kubebuilder user, and checks that it writes a CRD per kind.
    const goDir = path.join(dir, 'go');
    const goOut = path.join(dir, 'controller-gen-crds');
    await writeGoTwin(goDir, size);
    await measureNative(goDir, controllerGen, controllerGenArgs(goOut));
    const checkControllerGen = async () => {
      const written = (await readdir(goOut)).filter((f) => f.endsWith('.yaml'));
      if (written.length !== kinds.length) throw new Error(`controller-gen wrote ${written.length} CRDs`);
    };
    await checkControllerGen();
    // One untimed run of the program floor, so that its code cache is there, as kubesmith's is.
    await measure(dir, tools['program floor'].args);
    const clean = async () => {
      await rm(path.join(dir, 'config'), { recursive: true, force: true });
      await rm(path.join(dir, 'node_modules/.cache'), { recursive: true, force: true });
    };
    // Round-robin: each round runs every tool once, so that a burst of load elsewhere on the machine
    // spreads over all tools instead of falling on one. A cold run starts without outputs and stamp; the
    // re-run right after it finds both up to date.
    const samples = {
      first: [],
      cold: [],
      rerun: [],
      controllerGen: [],
      floor: [],
      floor2: [],
      tsc: [],
      tscBin: [],
      tjsg: [],
      tjs: [],
    };
    const names = {
      floor: 'program floor',
      floor2: 'program floor (2 threads)',
      tsc: 'tsc',
      tscBin: 'tsc (typescript bin)',
      tjsg: 'ts-json-schema-generator',
      tjs: 'typescript-json-schema',
    };
    for (let i = 0; i < runs; i++) {
      // The first run on a machine: no outputs, no stamp, and no compiled code kept by an earlier run
      // (kubesmith's V8 code cache on Node 20, Node's compile cache on 22.1+).
      await clean();
      const first = await measure(dir, tools.kubesmith.args, { NODE_DISABLE_COMPILE_CACHE: '1' });
      tools.kubesmith.check(first.result, dir, kinds);
      samples.first.push(first);
      await clean();
      const cold = await measure(dir, tools.kubesmith.args);
      tools.kubesmith.check(cold.result, dir, kinds);
      samples.cold.push(cold);
      const rerun = await measure(dir, tools.kubesmith.args);
      if (JSON.parse(rerun.result.stdout).cached !== true) throw new Error('the re-run was not cached');
      samples.rerun.push(rerun);
      await rm(goOut, { recursive: true, force: true });
      samples.controllerGen.push(await measureNative(goDir, controllerGen, controllerGenArgs(goOut)));
      await checkControllerGen();
      for (const [key, name] of Object.entries(names)) {
        const sample = await measure(dir, tools[name].args);
        await tools[name].check?.(sample.result, dir, kinds);
        samples[key].push(sample);
      }
    }
    const row = { size };
    for (const [key, list] of Object.entries(samples)) row[key] = summary(list);
    row.coldVsControllerGen = pairedRatios(samples.cold, samples.controllerGen);
    // The CRDs of the last rounds: kubesmith's (the re-run left them in place) and controller-gen's.
    row.agreement = await compareCrds(path.join(dir, 'config/crd/bases'), goOut);
    return row;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const results = [];
for (const name of chosen) results.push({ name, rows: await measureCorpus(name, corpora[name]) });

/**
 * `kubesmith create api` on the quick-start project (`init --domain example.com`, then
 * `create api --group webapp --version v1 --kind Guestbook`): the project's node_modules holds the runtime
 * (linked, as in the synthetic projects), so the manifests it regenerates resolve the real declarations.
 * Each run starts from a fresh copy of the initialized project; the check is the CRD it must write.
 */
async function measureCreateApi() {
  const work = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-bench-create-'));
  try {
    const template = path.join(work, 'template');
    await mkdir(template);
    await measure(template, [
      path.join(repo, 'bin/kubesmith.js'),
      'init',
      '--domain',
      'example.com',
      '--project-name',
      'quickstart',
      '--skip-install',
    ]);
    await mkdir(path.join(template, 'node_modules/@kubesmith'), { recursive: true });
    await symlink(path.join(repo, 'runtime'), path.join(template, 'node_modules/@kubesmith/runtime'), 'dir');
    const samples = [];
    for (let i = 0; i < runs; i++) {
      const project = path.join(work, `run-${i}`);
      await cp(template, project, { recursive: true, verbatimSymlinks: true });
      const sample = await measure(project, [
        path.join(repo, 'bin/kubesmith.js'),
        'create',
        'api',
        '--group',
        'webapp',
        '--version',
        'v1',
        '--kind',
        'Guestbook',
      ]);
      await readFile(path.join(project, 'config/crd/bases/webapp.example.com_guestbooks.yaml'), 'utf8');
      samples.push(sample);
    }
    return summary(samples);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
const createApi = await measureCreateApi();
process.stderr.write('measured create api\n');

const times = (a, b, metric) => `${(a[metric] / b[metric]).toFixed(2)}x`;

/** A markdown table of one metric (`ms`: wall time, `cpu`: CPU time), padded as prettier pads tables. */
function table(rows, metric) {
  const cell = (m) =>
    metric === 'ms'
      ? `${(m.ms / 1000).toFixed(2)} s${Number.isNaN(m.mib) ? '' : `, ${Math.round(m.mib)} MiB`}`
      : Number.isNaN(m.cpu)
        ? 'n/a'
        : `${(m.cpu / 1000).toFixed(2)} s`;
  const header = [
    'kinds',
    'kubesmith (first run)',
    'kubesmith (cold)',
    'kubesmith (re-run)',
    'controller-gen (warm)',
    'cold / controller-gen (paired)',
    'program floor',
    'floor / controller-gen',
    'floor, 2 threads',
    'tsc --noEmit',
    'cold / tsc',
    'tsc bin',
    'ts-json-schema-generator',
    'typescript-json-schema',
    'peers / cold',
  ];
  const body = rows.map((r) => [
    String(r.size),
    cell(r.first),
    cell(r.cold),
    cell(r.rerun),
    cell(r.controllerGen),
    `${r.coldVsControllerGen[metric].toFixed(2)}x`,
    cell(r.floor),
    times(r.floor, r.controllerGen, metric),
    cell(r.floor2),
    cell(r.tsc),
    times(r.cold, r.tsc, metric),
    cell(r.tscBin),
    cell(r.tjsg),
    cell(r.tjs),
    `${times(r.tjsg, r.cold, metric)}, ${times(r.tjs, r.cold, metric)}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => c.padStart(widths[i])).join(' | ')} |`;
  return [
    line(header),
    `| ${widths.map((w) => `${'-'.repeat(w - 1)}:`).join(' | ')} |`,
    ...body.map(line),
  ].join('\n');
}

/** The tables of one corpus. */
const corpusReport = (name, rows) => `### The ${name} corpus

Wall time, peak RSS (median of each):

${table(rows, 'ms')}

CPU time, user + system (median), less sensitive than wall time to other load on the machine:

${table(rows, 'cpu')}

kubesmith's CRDs against controller-gen's (as data, without the version annotations), leaf paths of the
CRD documents:

| kinds | CRDs | paths compared | differing |
| ----: | ---: | -------------: | --------: |
${rows
  .map((r) => `| ${r.size} | ${r.agreement.crds} | ${r.agreement.paths} | ${r.agreement.differing} |`)
  .join('\n')}
${rows.flatMap((r) => r.agreement.examples.map((e) => `\n- ${r.size} kinds: ${e}`)).join('')}
`;

const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
const report = `${runs} runs of each tool per size. Node ${process.version}, ${os.platform()} ${os.arch()}, \
${os.cpus().length} x ${cpu}. kubesmith ${require(path.join(repo, 'package.json')).version} \
(ts-morph ${version('ts-morph')}, TypeScript ${tsMorphTs}); controller-gen ${CONTROLLER_GEN_VERSION} \
(${spawnSync('go', ['version'], { encoding: 'utf8' })
  .stdout.trim()
  .replace(/^go version /, '')}); \
tsc bin: typescript ${version('typescript')}; ts-json-schema-generator ${version('ts-json-schema-generator')}; \
typescript-json-schema ${version('typescript-json-schema')}.

${results.map(({ name, rows }) => corpusReport(name, rows)).join('\n')}
\`kubesmith create api --group webapp --version v1 --kind Guestbook\` in the quick-start project (median):
${(createApi.ms / 1000).toFixed(2)} s wall, ${(createApi.cpu / 1000).toFixed(2)} s CPU, ${Math.round(createApi.mib)} MiB peak RSS.

Load average (1 min) at the start ${loadStart.toFixed(2)}, at the end ${os.loadavg()[0].toFixed(2)}.
${
  extraCaCerts === undefined
    ? ''
    : '\nNODE_EXTRA_CA_CERTS was set here; every tool ran without it (Node 20 parses the bundle as it starts).\n'
}`;
process.stdout.write(report);
if (values.out) await writeFile(values.out, report);
