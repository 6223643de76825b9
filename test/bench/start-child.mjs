/**
 * The manager's lean-start row of `npm run bench:runtime` (lean-start.mjs): a process that starts a
 * manager as runtime-child.mjs makes it (metrics and probes served, the logger at info, a controller for
 * the Widget kind with 4 workers), on the kubeconfig of $KUBECONFIG, loaded by the runtime itself. It
 * prints `synced` once the manager's caches have synced (the parent times the process from its spawn to
 * that line), then {"rssMiB": ..., "cpuMs": ...} (its RSS after a GC, its CPU time until that line), and
 * exits.
 */
// $KUBESMITH_BENCH_RUNTIME: another build of the runtime to start instead (its dist/index.js), for the
// before-and-after rows of `--compare-runtime` (lean-start.mjs).
const { controllerManagedBy, createLogger, groupVersion, Manager } = await import(
  process.env.KUBESMITH_BENCH_RUNTIME ?? '@kubesmith/runtime'
);

const Widget = groupVersion('bench.example.com', 'v1').kind('Widget', { plural: 'widgets' });
const mgr = Manager.create({
  metrics: { bindAddress: '127.0.0.1:0' },
  healthProbeBindAddress: '127.0.0.1:0',
  handleSignals: false,
  logger: createLogger({ level: 'info', format: 'json', write: () => {} }),
});
controllerManagedBy(mgr)
  .for(Widget)
  .withOptions({ maxConcurrentReconciles: 4 })
  .complete({ reconcile: async () => {} });
void mgr.start();
await mgr.ready();
const cpu = process.cpuUsage();
process.stdout.write('synced\n');
globalThis.gc?.();
const rssMiB = process.memoryUsage().rss / 2 ** 20;
process.stdout.write(`${JSON.stringify({ rssMiB, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
process.exit(0);
