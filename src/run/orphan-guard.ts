/**
 * Loaded into the manager `kubesmith run` starts (`node --import`): when run itself ends without stopping
 * it (killed with SIGKILL), the IPC channel to run closes, and the manager stops as on SIGTERM, gracefully,
 * rather than serving on as an orphan. The channel does not keep the manager alive.
 */
if (process.channel) {
  process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}
export {};
