/**
 * The one line a bench child prints (runtime-child.mjs, floor-child.mjs): what runtime.mjs compares.
 * Times are performance.now() readings; `idle` and `loaded` are process.memoryUsage() after a GC.
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
    })}\n`,
  );
}
