/**
 * One measurement of the runtime, in a process of its own so that its memory figures are its own: a
 * manager as a generated project runs it (metrics and probes served, the logger at info, the default
 * rate-limited queue) with a controller for the Widget kind whose reconciler reads each object through
 * mgr.client.get (from the cache), 4 at a time, against the API server of the kubeconfig given (which
 * the manager loads itself, from $KUBECONFIG). A third argument changes one thing:
 *
 * - `pages`: its informers read their list in pages (`cache: { streamingList: false }`) instead of
 *   streaming it;
 * - `plain`: read-your-own-writes and the priority queue off (`client: { readYourWrites: false }`,
 *   `controller: { usePriorityQueue: false }`), both on by default: what they cost;
 * - `metadata`: the Widget informer metadata-only (`for(Widget, { metadataOnly: true })`), each read
 *   `{ metadataOnly: true }`: what a cached object costs without its spec.
 *
 * With a count of 0 it stops once the caches have synced: its `loaded` memory is then the runtime's own,
 * which runtime.mjs subtracts to give the memory per cached object.
 * Prints JSON: ms to a synced cache, ms until every object was reconciled once, memory, the cost of a
 * read through the manager's client (from the cache, with its deep copy), and the cache's own estimate
 * of the bytes it holds (mgr.cache.stats()).
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
const metadataOnly = mode === 'metadata';
const mgr = Manager.create({
  metrics: { bindAddress: '127.0.0.1:0' },
  healthProbeBindAddress: '127.0.0.1:0',
  handleSignals: false,
  ...(mode === 'pages' ? { cache: { streamingList: false } } : {}),
  ...(mode === 'plain' ? { client: { readYourWrites: false }, controller: { usePriorityQueue: false } } : {}),
  logger: createLogger({ level: 'info', format: 'json', write: () => {} }),
});
const readOptions = metadataOnly ? { metadataOnly: true } : undefined;
const started = performance.now();
let firstReconcile;
/** process.cpuUsage() at the first reconcile: CPU time is steadier than wall time on a shared machine. */
let firstCpu;

controllerManagedBy(mgr)
  .for(Widget, { metadataOnly })
  .withOptions({ maxConcurrentReconciles: 4 })
  .complete({
    reconcile: async (request) => {
      if (firstReconcile === undefined) {
        firstReconcile = performance.now();
        firstCpu = process.cpuUsage();
      }
      await mgr.client.get(Widget, request.name, request.namespace, readOptions);
      seen.add(`${request.namespace}/${request.name}`);
      if (seen.size === count) allSeen();
    },
  });
const running = mgr.start();
await mgr.ready();
const synced = performance.now();
if (count === 0) allSeen();
await reconciledAll;
const reconciled = performance.now();
const drainCpu = process.cpuUsage(firstCpu);
const drainGcMs = await collections.between(firstReconcile, reconciled);
// The bench's own record of what was reconciled is not the contender's memory.
seen.clear();
globalThis.gc?.();
const loaded = process.memoryUsage();
const cachedBytes = mgr.cache.stats().reduce((sum, informer) => sum + informer.estimatedBytes, 0);
// Reads through mgr.client: from the cache, each a deep copy of a ~1.4 KB object.
const reads = count === 0 ? 0 : 20_000;
const readStarted = process.hrtime.bigint();
for (let i = 0; i < reads; i++) await mgr.client.get(Widget, `widget-${i % count}`, 'default', readOptions);
const cacheGetNs = reads === 0 ? 0 : Number(process.hrtime.bigint() - readStarted) / reads;
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
  cachedBytes,
});
