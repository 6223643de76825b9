/** Raw TCP clients for the tests of the runtime's servers: connections that stay silent, and when they close. */
import net from 'node:net';
import { performance } from 'node:perf_hooks';

/**
 * `count` TCP connections to 127.0.0.1:`port` that never send a byte; resolves once all are connected.
 * `cleanup` receives what destroys each.
 */
export function silentSockets(
  port: number,
  count: number,
  cleanup: { push(step: () => void): unknown },
): Promise<net.Socket[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Socket>((resolve, reject) => {
          const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
          socket.once('error', reject);
          cleanup.push(() => void socket.destroy());
        }),
    ),
  );
}

/** How long until the server closes `socket`, in ms from now. */
export function closedAfter(socket: net.Socket): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    socket.on('error', () => {});
    socket.once('close', () => resolve(performance.now() - started));
  });
}
