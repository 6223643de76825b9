/** Free TCP ports, for the control plane and the test's webhook server. */
import { createServer } from 'node:net';

/** `count` distinct free TCP ports on `host`, held open together so they differ. */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject).listen(0, host, () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}
