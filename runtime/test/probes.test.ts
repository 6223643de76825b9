/**
 * The health probe server on real sockets: the port is reachable from the pod network, so silent and
 * slow connections are cut and cannot lock kubelet's probes out.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { ProbeServer } from '../src/probes.js';
import { closedAfter, silentSockets } from './sockets.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function serve(): Promise<number> {
  const server = new ProbeServer({
    bindAddress: '127.0.0.1:0',
    ready: () => true,
    logger: createLogger({ write: () => {} }),
    headersTimeoutMs: 1_000,
    maxConnections: 3,
  });
  const address = await server.start('127.0.0.1', 0);
  cleanup.push(() => server.stop());
  return address.port;
}

describe('ProbeServer limits', () => {
  it('answers /healthz with maxConnections silent sockets open, and closes them after headersTimeoutMs', async () => {
    const port = await serve();
    const silent = await silentSockets(port, 3, cleanup);
    const closed = silent.map((socket) => closedAfter(socket));
    const answer = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) });
    expect(answer.status).toBe(200);
    // The one the probe pushed out closed at once; the others within the header timeout and one check.
    for (const ms of await Promise.all(closed)) expect(ms).toBeLessThan(2_500);
  });

  it('cuts a client whose headers trickle', async () => {
    const port = await serve();
    const slow = (await silentSockets(port, 1, cleanup))[0]!;
    const closed = closedAfter(slow);
    slow.write('GET /healthz HTTP/1.1\r\n');
    const timer = setInterval(() => slow.write('X-Slow: 1\r\n'), 200);
    cleanup.push(() => clearInterval(timer));
    const ms = await closed;
    expect(ms).toBeGreaterThan(800);
    expect(ms).toBeLessThan(2_500);
  });
});
