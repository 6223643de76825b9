/**
 * The drain of `npm run bench:runtime` without an API server, for profiling
 * (`node --cpu-prof test/bench/runtime-inprocess.mjs`): a Manager as runtime-child.mjs makes it (metrics
 * and probes served, the logger at info, the default rate-limited queue, 4 workers whose reconciler reads
 * each object through mgr.client.get), fed by a ManualInformer holding `--objects` Widgets shaped as the
 * API server returns them (managedFields dropped, as the cache does), beside the floor's loop
 * (floor-child.mjs: a de-duplicating queue, 4 workers reading a Map). Each round re-delivers every object
 * as an update, so each key is reconciled once per round; round 1 runs on cold code, as in the envtest
 * benchmark's fresh processes. Options: --objects 10000 --rounds 5 --only runtime|floor, and
 * --profile <file.cpuprofile> to profile the runtime's rounds alone (from the manager's start), without
 * the module loading that `node --cpu-prof` would count too. `--tracing` turns the manager's tracing on:
 * `noop` (the global provider, no SDK: non-recording spans), `sdk` (a BasicTracerProvider whose processor
 * drops the spans), `sdk-als` (the same, with the Node SDK's AsyncLocalStorage context manager
 * registered, so that the cost of the context propagation shows).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { controllerManagedBy, createLogger, groupVersion, Manager } from '@kubesmith/runtime';
import { FakeClient, ManualInformer } from '@kubesmith/runtime/testing';
import { watchCollections } from './measurement.mjs';

const { values } = parseArgs({
  options: {
    objects: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '5' },
    only: { type: 'string' },
    profile: { type: 'string' },
    tracing: { type: 'string', default: 'off' },
  },
});
const count = Number(values.objects);
const rounds = Number(values.rounds);

/** The manager's `tracing` option that --tracing names (its packages loaded only when asked). */
async function tracingOption(mode) {
  if (mode === 'off') return {};
  if (mode === 'noop') return { tracing: { enabled: true } };
  const { BasicTracerProvider } = await import('@opentelemetry/sdk-trace-base');
  const dropping = { onStart() {}, onEnd() {}, forceFlush: async () => {}, shutdown: async () => {} };
  if (mode === 'sdk-als') {
    const { context } = await import('@opentelemetry/api');
    const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  }
  return { tracing: { tracerProvider: new BasicTracerProvider({ spanProcessors: [dropping] }) } };
}
const tracing = await tracingOption(values.tracing);

/** Garbage collections, to count those within a round's drain. */
const collections = watchCollections();

/** A round's figures: reconciles per second, CPU us per reconcile, ms of GC pauses. */
async function roundFigures(first, [ended, used]) {
  return [
    count / ((ended - first) / 1000),
    (used.user + used.system) / count,
    await collections.between(first, ended),
  ];
}

/** The inspector's CPU profiler, started and stopped around the runtime's rounds with --profile. */
const profiler = values.profile ? new Session() : undefined;
const post = (method, params = {}) =>
  new Promise((resolve, reject) =>
    profiler.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
  );
if (profiler) {
  profiler.connect();
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 100 });
}

const Widget = groupVersion('bench.example.com', 'v1').kind('Widget', { plural: 'widgets' });

/** A Widget as the API server returns it (~1.1 KB without managedFields). */
function widget(i, generation = 1) {
  return {
    apiVersion: Widget.apiVersion,
    kind: 'Widget',
    metadata: {
      name: `widget-${i}`,
      namespace: 'default',
      uid: `0b4a3c5e-1f2d-4e6f-8a9b-${String(i).padStart(12, '0')}`,
      resourceVersion: String(1000 + i + generation * count),
      generation,
      creationTimestamp: '2026-11-24T12:00:00Z',
      labels: { app: 'bench', shard: String(i % 16) },
    },
    spec: { replicas: i % 7, image: `registry.example.com/bench/widget:${i}`, note: 'x'.repeat(800) },
  };
}

/** Rounds of `count` reconciles; resolves with the drain rate of each, in reconciles/s. */
async function runtimeRounds() {
  const informer = new ManualInformer(Array.from({ length: count }, (_, i) => widget(i)));
  const mgr = Manager.create({
    newClient: () => new FakeClient(),
    newInformer: () => informer,
    metrics: { bindAddress: '127.0.0.1:0' },
    healthProbeBindAddress: '127.0.0.1:0',
    handleSignals: false,
    logger: createLogger({ level: 'info', format: 'json', write: () => {} }),
    ...tracing,
  });
  let seen = 0;
  let first;
  let cpu;
  let allSeen;
  controllerManagedBy(mgr)
    .for(Widget)
    .withOptions({ maxConcurrentReconciles: 4 })
    .complete({
      reconcile: async (request) => {
        if (first === undefined) {
          first = performance.now();
          cpu = process.cpuUsage();
        }
        await mgr.client.get(Widget, request.name, request.namespace);
        if (++seen === count) allSeen([performance.now(), process.cpuUsage(cpu)]);
      },
    });
  const rates = [];
  const round = () => new Promise((resolve) => (allSeen = resolve));
  let done = round();
  if (profiler) await post('Profiler.start');
  const running = mgr.start();
  for (let r = 0; r < rounds; r++) {
    const outcome = await done; // `first` is set meanwhile
    rates.push(await roundFigures(first, outcome));
    seen = 0;
    first = undefined;
    done = round();
    if (r + 1 < rounds) for (let i = 0; i < count; i++) informer.apply(widget(i, r + 2));
  }
  if (profiler) writeFileSync(values.profile, JSON.stringify((await post('Profiler.stop')).profile));
  await mgr.stop();
  await running;
  return rates;
}

/** floor-child.mjs's queue and workers, reading a Map. */
async function floorRounds() {
  const store = new Map();
  const keys = [];
  let head = 0;
  const queued = new Set();
  const waiters = [];
  const add = (key) => {
    if (queued.has(key)) return;
    queued.add(key);
    const waiter = waiters.shift();
    if (waiter) waiter(key);
    else keys.push(key);
  };
  const get = () =>
    head < keys.length ? Promise.resolve(keys[head++]) : new Promise((resolve) => waiters.push(resolve));
  let seen = 0;
  let first;
  let cpu;
  let allSeen;
  let stopping = false;
  const worker = async () => {
    while (!stopping) {
      const key = await get();
      if (key === undefined) return;
      if (first === undefined) {
        first = performance.now();
        cpu = process.cpuUsage();
      }
      const slash = key.indexOf('/');
      if (store.get(`${key.slice(0, slash)}/${key.slice(slash + 1)}`)) seen++;
      queued.delete(key);
      if (seen === count) allSeen([performance.now(), process.cpuUsage(cpu)]);
    }
  };
  const rates = [];
  let workers = [];
  for (let r = 0; r < rounds; r++) {
    const done = new Promise((resolve) => (allSeen = resolve));
    for (let i = 0; i < count; i++) {
      const object = widget(i, r + 1);
      store.set(`default/${object.metadata.name}`, object);
      add(`default/${object.metadata.name}`);
    }
    // Started once, when the first round's keys are queued; they serve every round.
    if (r === 0) workers = Array.from({ length: 4 }, worker);
    const outcome = await done; // `first` is set meanwhile
    rates.push(await roundFigures(first, outcome));
    seen = 0;
    first = undefined;
  }
  stopping = true;
  for (const waiter of waiters.splice(0)) waiter(undefined);
  await Promise.all(workers);
  return rates;
}

/**
 * Per round: the drain rate (wall clock), the CPU time per reconcile (steadier on a busy machine), and
 * the time spent in garbage collection.
 */
const format = (rates) =>
  rates
    .map(([rate, us, gc]) => `${Math.round(rate / 1000)}k/s ${us.toFixed(1)} us gc ${gc.toFixed(0)} ms`)
    .join(', ');
if (values.only !== 'floor') process.stdout.write(`runtime: ${format(await runtimeRounds())}\n`);
if (values.only !== 'runtime') process.stdout.write(`floor:   ${format(await floorRounds())}\n`);
