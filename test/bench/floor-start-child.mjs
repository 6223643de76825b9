/**
 * The floor under the manager's lean start (lean-start.mjs): a process that imports the runtime, loads the
 * kubeconfig of $KUBECONFIG with it, and sends one HTTPS list of Widgets with its CA and credentials
 * through Node's https, nothing else: no manager, no servers, no informer, no watch. It prints `synced`
 * when the list's answer has ended, then {"rssMiB": ..., "cpuMs": ...} as start-child.mjs does, and exits.
 * What a manager's start takes over this row is the runtime's own; what this row takes over a bare start
 * is Node's (its ES loader, its HTTPS client and TLS) and the API server's.
 */
const { loadKubeConfig } = await import('@kubesmith/runtime');

const connection = await loadKubeConfig().connection();
const https = process.getBuiltinModule('node:https');
await new Promise((resolve, reject) => {
  const request = https.get(
    new URL('/apis/bench.example.com/v1/widgets?limit=500', connection.server),
    { ...connection.tls, headers: connection.headers, timeout: 30_000 },
    (response) => {
      response.resume();
      response.on('end', resolve);
    },
  );
  request.on('timeout', () => request.destroy(new Error('no answer in 30 s')));
  request.on('error', reject);
});
const cpu = process.cpuUsage();
process.stdout.write('synced\n');
globalThis.gc?.();
const rssMiB = process.memoryUsage().rss / 2 ** 20;
process.stdout.write(`${JSON.stringify({ rssMiB, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
process.exit(0);
