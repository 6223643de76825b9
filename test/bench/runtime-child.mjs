/**
 * One measurement of the runtime, in a process of its own so that its memory figures are its own: a
 * manager as a generated project runs it (metrics and probes served, the logger at info, the default
 * rate-limited queue) with a controller for the Widget kind whose reconciler reads each object through
 * mgr.client.get (from the cache), 4 at a time, against the API server of the kubeconfig given (which
 * the manager loads itself, from $KUBECONFIG). With a third argument `pages`, its informers read their
 * list in pages (`cache: { streamingList: false }`) instead of streaming it.
 * Prints JSON: ms to a synced cache, ms until every object was reconciled once, memory, and the cost of
 * a read through the manager's client (from the cache, with its deep copy).
 */
import { performance } from 'node:perf_hooks';
import { controllerManagedBy, createLogger, groupVersion, Manager } from '@kubesmith/runtime';
import { watchCollections, writeMeasurement } from './measurement.mjs';

const [kubeconfigPath, countText, mode] = process.argv.slice(2);
const count = Number(countText);
const Widget = groupVersion('bench.example.com', 'v1').kind('Widget', { plural: 'widgets' });

// The manager loads $KUBECONFIG itself, as a generated project's does: the child imports nothing the
// runtime does not, so that its idle memory is the runtime's.
process.env.KUBECONFIG = kubeconfigPath;
globalThis.gc?.();
const idle = process.memoryUsage();
const collections = watchCollections();

const seen = new Set();
let allSeen;
const reconciledAll = new Promise((resolve) => (allSeen = resolve));
const mgr = Manager.create({
  metrics: { bindAddress: '127.0.0.1:0' },
  healthProbeBindAddress: '127.0.0.1:0',
  handleSignals: false,
  ...(mode === 'pages' ? { cache: { streamingList: false } } : {}),
  logger: createLogger({ level: 'info', format: 'json', write: () => {} }),
});
const started = performance.now();
let firstReconcile;
/** process.cpuUsage() at the first reconcile: CPU time is steadier than wall time on a shared machine. */
let firstCpu;

controllerManagedBy(mgr)
  .for(Widget)
  .withOptions({ maxConcurrentReconciles: 4 })
  .complete({
    reconcile: async (request) => {
      if (firstReconcile === undefined) {
        firstReconcile = performance.now();
        firstCpu = process.cpuUsage();
      }
      await mgr.client.get(Widget, request.name, request.namespace);
      seen.add(`${request.namespace}/${request.name}`);
      if (seen.size === count) allSeen();
    },
  });
const running = mgr.start();
await mgr.ready();
const synced = performance.now();
await reconciledAll;
const reconciled = performance.now();
const drainCpu = process.cpuUsage(firstCpu);
const drainGcMs = await collections.between(firstReconcile, reconciled);
globalThis.gc?.();
const loaded = process.memoryUsage();
// Reads through mgr.client: from the cache, each a deep copy of a ~1.4 KB object.
const reads = 20_000;
const readStarted = process.hrtime.bigint();
for (let i = 0; i < reads; i++) await mgr.client.get(Widget, `widget-${i % count}`, 'default');
const cacheGetNs = Number(process.hrtime.bigint() - readStarted) / reads;
await mgr.stop();
await running;
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
