import { PerformanceObserver } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';

/**
 * Every garbage collection of this process from now on (start it before the measured work), until the
 * process exits; `between` may be asked again and again (runtime-inprocess.mjs asks once per round).
 */
export function watchCollections() {
  const entries = [];
  const observer = new PerformanceObserver((list) => entries.push(...list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  return {
    /** Milliseconds of GC pauses that started between two performance.now() readings. */
    async between(from, to) {
      await setImmediate();
      entries.push(...observer.takeRecords()); // those not reported yet
      return entries
        .filter((entry) => entry.startTime >= from && entry.startTime < to)
        .reduce((sum, entry) => sum + entry.duration, 0);
    },
  };
}

/**
 * The one line a bench child prints (runtime-child.mjs, floor-child.mjs): what runtime.mjs compares.
 * Times are performance.now() readings; `idle` and `loaded` are process.memoryUsage() after a GC;
 * `drainGcMs` the GC pauses between the first reconcile and the last, `drainCpuUs` the CPU time
 * (user and system, all threads) the process used meanwhile; `cachedBytes`, where the child can tell, the
 * cache's own estimate of what it holds (the runtime's mgr.cache.stats()).
 */
export function writeMeasurement({
  count,
  started,
  synced,
  firstReconcile,
  reconciled,
  idle,
  loaded,
  cacheGetNs,
  drainGcMs,
  drainCpuUs,
  cachedBytes = 0,
}) {
  process.stdout.write(
    `${JSON.stringify({
      count,
      syncMs: synced - started,
      reconcileAllMs: reconciled - started,
      drainMs: reconciled - (firstReconcile ?? synced),
      rssIdleMiB: idle.rss / 2 ** 20,
      rssLoadedMiB: loaded.rss / 2 ** 20,
      heapIdleMiB: idle.heapUsed / 2 ** 20,
      heapLoadedMiB: loaded.heapUsed / 2 ** 20,
      cacheGetNs,
      drainGcMs,
      drainCpuUs,
      cachedBytes,
    })}\n`,
  );
}
