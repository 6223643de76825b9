/**
 * `npm run bench:runtime`: the runtime against a real kube-apiserver (envtest), side by side with the
 * framework-less floor (floor-child.mjs: a plain client-node informer and a de-duplicating queue) and with
 * controller-runtime (controller-runtime/main.go: the same reconciler in Go, built from the Go module proxy
 * into ~/.cache/kubesmith/bench by controller-runtime.mjs), in the same run, and beside the floor whose
 * reads are deep copies (floor+copy: what a cache read's copy costs without a framework) and the runtime
 * reading its lists in pages instead of streaming them (runtime-pages: what the default streamed list
 * changes). First, with no object yet, the lean-start rows (lean-start.mjs): a bare Node start, the import
 * of @kubesmith/runtime and of @kubernetes/client-node, and a manager's process start to synced caches at
 * N=0, the runtime's (start-child.mjs) and controller-runtime's, each wall time, CPU time and RSS the
 * median of `--start-rounds` spawns. Then for 1,000 and 10,000 custom resources of ~1.3 KB as the API
 * server returns them: the time for the cache to sync, the time until a reconciler that reads each object
 * has seen every one, the drain rate, memory per cached object, and the time of a cached read; the API
 * server's own time to send the list each way (server-floor.mjs); then the runtime's targets against the floor, with
 * controller-runtime's figures beside them, and the work queue's own cost per item. Each contender runs
 * `--rounds` times (default 3), interleaved, each in a fresh process; the table gives medians.
 * The options' rows: the runtime with read-your-own-writes and the priority queue off (runtime-plain; both
 * are on by default) and with its Widget informer metadata-only (runtime-metadata), beside the default
 * runtime: start to all reconciled, and the memory per cached object, the heap (after a GC) once every
 * object was reconciled less the same contender's heap at N=0 (synced with no Widget, measured before any
 * is created), over the count: the runtime's own fixed cost (modules loaded at its start, the metrics
 * registry) is not counted per object.
 * Options: --sizes 1000,10000 --rounds 3 --start-rounds 5; --only-start measures the lean-start rows alone
 * (a minute instead of many, for work on the runtime's start); --only-options the options' rows alone
 * (runtime, runtime-plain and runtime-metadata; --sizes 10000 --rounds 5 unless given);
 * --compare-runtime FILE adds lean-start rows for another build of the runtime (its dist/index.js, its
 * packages resolvable from there), such as the build before a change, measured in the same rounds.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { groupVersion, HttpClient, resourcePath, WorkQueue } from '@kubesmith/runtime';
import { startEnvtest } from '@kubesmith/runtime/envtest';
import { controllerRuntimeVersion, ensureControllerRuntimeBench } from './controller-runtime.mjs';
import { leanStartTimes } from './lean-start.mjs';
import { serverListTimes } from './server-floor.mjs';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string' },
    rounds: { type: 'string' },
    'start-rounds': { type: 'string', default: '5' },
    'only-start': { type: 'boolean', default: false },
    'only-options': { type: 'boolean', default: false },
    'compare-runtime': { type: 'string' },
  },
});
const onlyStart = values['only-start'];
const onlyOptions = values['only-options'];
const sizes = (values.sizes ?? (onlyOptions ? '10000' : '1000,10000')).split(',').map(Number);
const rounds = Number(values.rounds ?? (onlyOptions ? 5 : 3));
const startRounds = Number(values['start-rounds']);
// Built first: the first build downloads and compiles controller-runtime (minutes on 2 CPUs).
const controllerRuntime = onlyOptions ? undefined : ensureControllerRuntimeBench();
const goVersion = spawnSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' }).stdout?.trim() || 'Go';
/** Each contender's command line, given the kubeconfig's path and the number of objects. */
const nodeChild =
  (script, ...mode) =>
  (kubeconfigPath, size) => [
    process.execPath,
    ['--expose-gc', fileURLToPath(new URL(script, import.meta.url)), kubeconfigPath, String(size), ...mode],
  ];
const children = {
  runtime: nodeChild('./runtime-child.mjs'),
  'runtime-plain': nodeChild('./runtime-child.mjs', 'plain'),
  'runtime-metadata': nodeChild('./runtime-child.mjs', 'metadata'),
  'runtime-pages': nodeChild('./runtime-child.mjs', 'pages'),
  floor: nodeChild('./floor-child.mjs'),
  'floor+copy': nodeChild('./floor-child.mjs', 'copy'),
  'controller-runtime': (kubeconfigPath, size) => [controllerRuntime, [kubeconfigPath, String(size)]],
};
/** The contenders of the options' rows, each also measured at N=0 (its fixed memory). */
const optionContenders = ['runtime', 'runtime-plain', 'runtime-metadata'];
const contenders = onlyOptions ? optionContenders : Object.keys(children);

/** The child environment: floor+copy's deep copy module (floor-child.mjs), written by deepCopyModule. */
const childEnv = { ...process.env };

/** One measurement by a child process of its own (its memory figures are its own). */
function measure(contender, kubeconfigPath, size) {
  const [program, args] = children[contender](kubeconfigPath, size);
  const result = spawnSync(program, args, {
    encoding: 'utf8',
    timeout: 300_000,
    env: childEnv,
  });
  if (result.status !== 0) throw new Error(`${contender} child failed:\n${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** The median of each numeric figure of several measurements. */
function medians(measurements) {
  const out = {};
  for (const key of Object.keys(measurements[0])) {
    const sorted = measurements.map((m) => m[key]).sort((a, b) => a - b);
    out[key] = sorted[Math.floor(sorted.length / 2)];
  }
  return out;
}
const Widget = groupVersion('bench.example.com', 'v1').kind('Widget', { plural: 'widgets' });

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.bench.example.com' },
  spec: {
    group: 'bench.example.com',
    names: { kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

/** A ~1.1 KB object as sent (~1.3 KB as the API server returns it, managedFields included). */
function widget(i) {
  return {
    apiVersion: Widget.apiVersion,
    kind: 'Widget',
    metadata: { name: `widget-${i}`, namespace: 'default', labels: { app: 'bench', shard: String(i % 16) } },
    spec: { replicas: i % 7, image: `registry.example.com/bench/widget:${i}`, note: 'x'.repeat(800) },
  };
}

/**
 * runtime/src/internal/deepcopy.ts compiled to a module of its own in `dir`: the floor+copy child copies
 * as the runtime does, and the runtime's bundle does not export its deep copy.
 */
async function deepCopyModule(dir) {
  const { default: ts } = await import('typescript');
  const source = await readFile(new URL('../../runtime/src/internal/deepcopy.ts', import.meta.url), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
  });
  const file = path.join(dir, 'deepcopy.mjs');
  await writeFile(file, outputText);
  return file;
}

/** Each contender `rounds` times at `size`, interleaved, each in a fresh process: the median of each figure. */
function measureRounds(names, kubeconfigPath, size) {
  const runs = Object.fromEntries(names.map((contender) => [contender, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const contender of order) runs[contender].push(measure(contender, kubeconfigPath, size));
  }
  return Object.fromEntries(names.map((contender) => [contender, medians(runs[contender])]));
}

/** The work queue alone: add, get and done of distinct keys, in ns per item. */
async function queueCost(items) {
  const queue = new WorkQueue();
  const started = process.hrtime.bigint();
  for (let i = 0; i < items; i++) queue.add(`ns/key-${i}`);
  for (let i = 0; i < items; i++) queue.done(await queue.get());
  return Number(process.hrtime.bigint() - started) / items;
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-bench-runtime-'));
const env = await startEnvtest({ crds: [CRD] });
const rows = [];
/** The API server's own time for each way of listing, per size (server-floor.mjs). */
const serverRows = [];
/** The lean-start rows (lean-start.mjs), measured before any Widget exists. */
let startRows;
/** The options' contenders at N=0, before any Widget exists: their fixed memory. */
let emptyRows;
try {
  const kubeconfigPath = path.join(dir, 'kubeconfig');
  await writeFile(kubeconfigPath, env.kubeConfig.exportConfig());
  if (contenders.includes('floor+copy')) childEnv.KUBESMITH_BENCH_DEEPCOPY = await deepCopyModule(dir);
  if (!onlyOptions) {
    startRows = await leanStartTimes({
      kubeconfigPath,
      controllerRuntime,
      rounds: startRounds,
      compare: values['compare-runtime'] && path.resolve(values['compare-runtime']),
    });
    process.stderr.write('measured the lean starts\n');
  }
  if (onlyStart) sizes.length = 0;
  else {
    emptyRows = measureRounds(optionContenders, kubeconfigPath, 0);
    process.stderr.write('measured the runtime at N=0\n');
  }
  const client = new HttpClient(env.kubeConfig);
  let created = 0;
  for (const size of sizes) {
    const startedCreate = performance.now();
    const todo = Array.from({ length: size - created }, (_, k) => created + k);
    for (let i = 0; i < todo.length; i += 32) {
      await Promise.all(todo.slice(i, i + 32).map((n) => client.create(Widget, widget(n))));
    }
    const createMs = performance.now() - startedCreate;
    created = size;
    // Each contender a few times, interleaved, each in a fresh process; the median of each figure.
    const measured = measureRounds(contenders, kubeconfigPath, size);
    for (const contender of contenders) {
      rows.push({ contender, ...measured[contender], createPerSec: todo.length / (createMs / 1000) });
    }
    if (!onlyOptions) {
      serverRows.push({
        count: size,
        ...(await serverListTimes(env.kubeConfig, resourcePath(Widget), rounds)),
      });
    }
    process.stderr.write(`measured ${size} objects\n`);
  }
} finally {
  await env.stop();
  await rm(dir, { recursive: true, force: true });
}
const perItem = onlyStart || onlyOptions ? undefined : await queueCost(1_000_000);

const perObjectKiB = (r) => ((r.heapLoadedMiB - r.heapIdleMiB) * 1024) / r.count;
const drainPerSec = (r) => r.count / (r.drainMs / 1000);

/**
 * Memory per cached object in KiB: the heap (or RSS), after a GC, once every object was reconciled, less
 * the same contender's at N=0, over the count.
 */
const cachedKiB = (r, figure = 'heap') =>
  ((r[`${figure}LoadedMiB`] - emptyRows[r.contender][`${figure}LoadedMiB`]) * 1024) / r.count;

const check = (ok, what, got) => `- ${ok ? 'met' : 'NOT met'}: ${what} (${got})`;
const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;
const mebibytes = (mib) => `${mib.toFixed(1)} MiB`;

/**
 * The runtime's targets, at the largest size, against the floor measured in this run, with the figures of
 * the runtime, the floor and controller-runtime beside each.
 */
function targets() {
  const size = Math.max(...sizes);
  const at = (contender) => rows.find((r) => r.contender === contender && r.count === size);
  const [runtime, floor, copying, go] = ['runtime', 'floor', 'floor+copy', 'controller-runtime'].map(at);
  const beside = (figure) =>
    `runtime ${figure(runtime)}, floor ${figure(floor)}, controller-runtime ${figure(go)}`;
  return [
    `Targets at ${size} objects, the runtime against the floor of this run:`,
    check(
      runtime.reconcileAllMs <= 1.1 * floor.reconcileAllMs,
      'start to all reconciled within 1.1x of the floor',
      `${(runtime.reconcileAllMs / floor.reconcileAllMs).toFixed(2)}x; ${beside((r) => seconds(r.reconcileAllMs))}`,
    ),
    check(
      drainPerSec(runtime) >= 150_000,
      'drain at least 150k reconciles/s',
      beside((r) => `${Math.round(drainPerSec(r))}/s`),
    ),
    check(
      runtime.rssIdleMiB - floor.rssIdleMiB <= 5,
      'idle RSS within 5 MiB of the floor',
      `${(runtime.rssIdleMiB - floor.rssIdleMiB).toFixed(1)} MiB more; ${beside((r) => mebibytes(r.rssIdleMiB))}`,
    ),
    check(
      perObjectKiB(runtime) - perObjectKiB(floor) <= 0.3,
      'heap per cached object within 0.3 KiB of the floor',
      `${(perObjectKiB(runtime) - perObjectKiB(floor)).toFixed(2)} KiB more; ` +
        beside((r) => `${perObjectKiB(r).toFixed(2)} KiB`),
    ),
    `The floor reading deep copies drains ${Math.round(drainPerSec(copying))}/s: the runtime drains ` +
      `${((100 * drainPerSec(runtime)) / drainPerSec(copying)).toFixed(0)}% of that.`,
  ];
}

/** The options' rows: the default runtime, runtime-plain and runtime-metadata at each size. */
function optionsTable() {
  const kib = (value) => `${value.toFixed(2)} KiB`;
  return [
    "The runtime's options: the default (read-your-own-writes and the priority queue on), runtime-plain",
    '(both off), runtime-metadata (the default, its Widget informer and reads metadata-only). Memory per',
    "cached object: the heap (RSS) once every object was reconciled less the same contender's at N=0, over",
    `the count; the cache's own estimate (mgr.cache.stats()) beside it. Median of ${rounds} runs each.`,
    '',
    '| objects | contender | cache synced | all reconciled once | CPU per reconcile | heap at N=0 -> loaded | heap per cached object | RSS per cached object | estimate per object | cached get |',
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows
      .filter((r) => optionContenders.includes(r.contender))
      .map(
        (r) =>
          `| ${r.count} | ${r.contender} | ${seconds(r.syncMs)} | ${seconds(r.reconcileAllMs)} | ` +
          `${(r.drainCpuUs / r.count).toFixed(1)} us | ` +
          `${mebibytes(emptyRows[r.contender].heapLoadedMiB)} -> ${mebibytes(r.heapLoadedMiB)} | ` +
          `${kib(cachedKiB(r))} | ${kib(cachedKiB(r, 'rss'))} | ${kib(r.cachedBytes / 1024 / r.count)} | ` +
          `${(r.cacheGetNs / 1000).toFixed(1)} us |`,
      ),
  ];
}

/** The options' targets (issue 24) at the largest size. */
function optionTargets() {
  const size = Math.max(...sizes);
  const at = (contender) => rows.find((r) => r.contender === contender && r.count === size);
  const [on, off, metadata] = optionContenders.map(at);
  const kib = (r) => `${cachedKiB(r).toFixed(2)} KiB`;
  return [
    `Options' targets at ${size} objects, in this run:`,
    check(
      cachedKiB(on) >= 4 * cachedKiB(metadata),
      'a metadata-only cache at least 4x smaller per cached object than the full one',
      `${(cachedKiB(on) / cachedKiB(metadata)).toFixed(2)}x: ${kib(metadata)} against ${kib(on)}; ` +
        `the cache's estimates ${Math.round(metadata.cachedBytes / size)} and ${Math.round(on.cachedBytes / size)} bytes`,
    ),
    check(
      on.reconcileAllMs <= 1.05 * off.reconcileAllMs,
      'read-your-own-writes and the priority queue on: start to all reconciled no worse than off (within 5%)',
      `${(on.reconcileAllMs / off.reconcileAllMs).toFixed(2)}x; on ${seconds(on.reconcileAllMs)}, ` +
        `off ${seconds(off.reconcileAllMs)}`,
    ),
    check(
      cachedKiB(on) <= cachedKiB(off) + 0.05,
      'read-your-own-writes and the priority queue on: memory per cached object no worse than off (within 0.05 KiB)',
      `on ${kib(on)}, off ${kib(off)}`,
    ),
  ];
}

/** The lean-start targets (issue 24): a bare Node start is the yardstick, measured in the same run. */
function startTargets() {
  const [bare, runtimeImport, clientNodeImport, manager, floor, go] = startRows;
  return [
    `Lean-start targets, against a bare Node start of this run (${seconds(bare.ms)}, ${mebibytes(bare.rssMiB)}):`,
    check(
      runtimeImport.ms - bare.ms <= 60,
      "import('@kubesmith/runtime') within 60 ms of a bare Node start",
      `+${Math.round(runtimeImport.ms - bare.ms)} ms; client-node's import +${Math.round(clientNodeImport.ms - bare.ms)} ms`,
    ),
    check(
      manager.ms <= 1.5 * bare.ms,
      'manager process start to caches synced at N=0 within 1.5x of a bare Node start',
      `${(manager.ms / bare.ms).toFixed(2)}x, ${seconds(manager.ms)}; the floor (the runtime imported, one ` +
        `HTTPS list) ${(floor.ms / bare.ms).toFixed(2)}x; controller-runtime ${(go.ms / bare.ms).toFixed(2)}x, ${seconds(go.ms)}`,
    ),
    check(
      manager.rssMiB <= 60,
      'idle RSS (the manager synced at N=0, after a GC) at most 60 MiB',
      `${mebibytes(manager.rssMiB)}; client-node's import ${mebibytes(clientNodeImport.rssMiB)}, ` +
        `controller-runtime ${mebibytes(go.rssMiB)}`,
    ),
  ];
}

const startTable = onlyOptions
  ? []
  : [
      `Lean starts, from the spawn to the process's first line, with no Widget yet; median of ${startRounds} each:`,
      '',
      '| start | wall | CPU (user + system) | RSS there (after a GC) |',
      '| --- | ---: | ---: | ---: |',
      ...startRows.map(
        (r) =>
          `| ${r.start} | ${Math.round(r.ms)} ms | ${Math.round(r.cpuMs)} ms | ${r.rssMiB.toFixed(1)} MiB |`,
      ),
    ];
const onlyStartLines = () => [
  `Node ${process.version}, ${os.cpus().length} CPUs, kube-apiserver from envtest on loopback; ` +
    `controller-runtime ${controllerRuntimeVersion()} (${goVersion}).`,
  '',
  ...startTable,
  '',
  ...startTargets(),
];
const optionsLines = () => [
  `Node ${process.version}, ${os.cpus().length} CPUs, kube-apiserver from envtest on loopback.`,
  '',
  ...optionsTable(),
  '',
  ...optionTargets(),
];
const lines = onlyStart
  ? onlyStartLines()
  : onlyOptions
    ? optionsLines()
    : [
        `Node ${process.version}, ${os.cpus().length} CPUs, kube-apiserver from envtest on loopback; median of ${rounds} runs each.`,
        `controller-runtime ${controllerRuntimeVersion()} (${goVersion}): the same manager and reconciler in Go, with its`,
        'defaults (test/bench/controller-runtime/main.go, a typed Widget, its cache dropping managedFields as the',
        "runtime's does); its heap per object is the Go heap (runtime.MemStats.HeapAlloc).",
        '',
        ...startTable,
        '',
        'runtime: a Manager as generated projects run it (metrics and probes served, logger at info, rate-limited',
        'queue), its reconciler reading each object through mgr.client.get, 4 workers; its list streamed.',
        'runtime-pages: the same, its list read in pages of 500 (streamingList: false). floor: a plain client-node',
        'informer, a de-duplicating queue, 4 workers reading from the informer store (test/bench/floor-child.mjs).',
        "controller-runtime: the runtime's manager and reconciler in Go (mgr.GetClient().Get, 4 workers).",
        "floor+copy: the floor, each read a deep copy awaited as a promise (a cache read's semantics, no framework).",
        'runtime-plain and runtime-metadata: the runtime with two of its options changed (the table after the next).',
        '',
        '| objects | contender | cache synced | all reconciled once | reconcile throughput | CPU per reconcile | GC in the drain | RSS idle -> loaded | heap per object | RSS per object | cached get |',
        '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
        ...rows.map(
          (r) =>
            `| ${r.count} | ${r.contender} | ${(r.syncMs / 1000).toFixed(2)} s | ${(r.reconcileAllMs / 1000).toFixed(2)} s | ` +
            `${Math.round(drainPerSec(r))}/s | ${(r.drainCpuUs / r.count).toFixed(1)} us | ${Math.round(r.drainGcMs)} ms | ` +
            `${Math.round(r.rssIdleMiB)} -> ${Math.round(r.rssLoadedMiB)} MiB | ` +
            `${perObjectKiB(r).toFixed(1)} KiB | ` +
            `${(((r.rssLoadedMiB - r.rssIdleMiB) * 1024) / r.count).toFixed(1)} KiB | ` +
            `${(r.cacheGetNs / 1000).toFixed(1)} us |`,
        ),
        '',
        "The API server's time to send the whole list to a client that does nothing with it (server-floor.mjs):",
        'no informer syncs faster than its way of listing here.',
        '',
        '| objects | one list (the floor) | pages of 500 | streamed list (to its end bookmark) |',
        '| ---: | ---: | ---: | ---: |',
        ...serverRows.map(
          (r) =>
            `| ${r.count} | ${(r['one list'] / 1000).toFixed(2)} s | ${(r['pages of 500'] / 1000).toFixed(2)} s | ` +
            `${(r['streamed list'] / 1000).toFixed(2)} s |`,
        ),
        '',
        ...optionsTable(),
        '',
        ...targets(),
        '',
        ...optionTargets(),
        '',
        ...startTargets(),
        '',
        `Work queue alone: ${perItem.toFixed(0)} ns per item (add, get, done; 1,000,000 distinct keys).`,
      ];
process.stdout.write(`${lines.join('\n')}\n`);
