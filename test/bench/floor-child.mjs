/**
 * The framework-less floor that `npm run bench:runtime` compares the runtime with: what a TypeScript team
 * would write without a framework. A plain @kubernetes/client-node informer (list, then watch) of the
 * Widget kind, a de-duplicating work queue and 4 workers whose reconciler reads the object from the
 * informer's store (no copy). No metrics, no logging, no rate limiting, no leader election.
 * Same output as runtime-child.mjs, in a process of its own so that the memory figures are its own.
 * With a third argument `copy`, each read is a deep copy (the runtime's) awaited as a promise, as a
 * controller-runtime or kubesmith cache read is: what copy semantics cost, without the framework.
 */
import { performance } from 'node:perf_hooks';
import { CustomObjectsApi, KubeConfig, makeInformer } from '@kubernetes/client-node';
import { pathToFileURL } from 'node:url';
import { watchCollections, writeMeasurement } from './measurement.mjs';

// The runtime's deep copy, which its bundle does not export: runtime/src/internal/deepcopy.ts compiled by
// the parent (runtime.mjs, deepCopyModule) into the file $KUBESMITH_BENCH_DEEPCOPY names.
const { deepCopy } = await import(pathToFileURL(process.env.KUBESMITH_BENCH_DEEPCOPY).href);

const [kubeconfigPath, countText, mode] = process.argv.slice(2);
const copy = mode === 'copy';
const count = Number(countText);
const WORKERS = 4;

const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(kubeconfigPath);
globalThis.gc?.();
const idle = process.memoryUsage();
const collections = watchCollections();

/** A queue of keys that holds each key once; `get` waits for the next key. */
class DedupQueue {
  keys = [];
  head = 0;
  queued = new Set();
  waiters = [];
  add(key) {
    if (this.queued.has(key)) return;
    this.queued.add(key);
    const waiter = this.waiters.shift();
    if (waiter) waiter(key);
    else this.keys.push(key);
  }
  get() {
    if (this.head < this.keys.length) {
      const key = this.keys[this.head++];
      if (this.head > 1024 && this.head * 2 > this.keys.length) {
        this.keys = this.keys.slice(this.head);
        this.head = 0;
      }
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  done(key) {
    this.queued.delete(key);
  }
}

const api = kubeConfig.makeApiClient(CustomObjectsApi);
const informer = makeInformer(kubeConfig, '/apis/bench.example.com/v1/namespaces/default/widgets', () =>
  api.listNamespacedCustomObject({
    group: 'bench.example.com',
    version: 'v1',
    namespace: 'default',
    plural: 'widgets',
  }),
);
const queue = new DedupQueue();
const enqueue = (object) => queue.add(`${object.metadata.namespace}/${object.metadata.name}`);
informer.on('add', enqueue);
informer.on('update', enqueue);

const seen = new Set();
let allSeen;
const reconciledAll = new Promise((resolve) => (allSeen = resolve));
let firstReconcile;
/** process.cpuUsage() at the first reconcile: CPU time is steadier than wall time on a shared machine. */
let firstCpu;
let stopping = false;

async function worker() {
  while (!stopping) {
    const key = await queue.get();
    if (key === undefined) return;
    if (firstReconcile === undefined) {
      firstReconcile = performance.now();
      firstCpu = process.cpuUsage();
    }
    const slash = key.indexOf('/');
    const cached = informer.get(key.slice(slash + 1), key.slice(0, slash));
    const object = copy ? await Promise.resolve(deepCopy(cached)) : cached;
    if (object) seen.add(key);
    queue.done(key);
    if (seen.size === count) allSeen();
  }
}

const started = performance.now();
await informer.start();
const synced = performance.now();
const workers = Array.from({ length: WORKERS }, () => worker());
await reconciledAll;
const reconciled = performance.now();
const drainCpu = process.cpuUsage(firstCpu);
const drainGcMs = await collections.between(firstReconcile, reconciled);
// The bench's own record of what was reconciled is not the contender's memory.
seen.clear();
globalThis.gc?.();
const loaded = process.memoryUsage();
// Reads from the informer's store, as the reconciler does.
const reads = 20_000;
const readStarted = process.hrtime.bigint();
for (let i = 0; i < reads; i++) await Promise.resolve(informer.get(`widget-${i % count}`, 'default'));
const cacheGetNs = Number(process.hrtime.bigint() - readStarted) / reads;
stopping = true;
for (const waiter of queue.waiters.splice(0)) waiter(undefined);
await Promise.all(workers);
await informer.stop();
writeMeasurement({
  count,
  started,
  synced,
  firstReconcile,
  reconciled,
  idle,
  loaded,
  cacheGetNs,
  drainGcMs,
  drainCpuUs: drainCpu.user + drainCpu.system,
});
process.exit(0);
