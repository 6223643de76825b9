/** The metrics server's HTTP versions on real sockets: HTTP/2 only with enableHttp2 (no API server needed). */
import http2 from 'node:http2';
import tls from 'node:tls';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { MetricsServer } from '../src/metrics-server.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function serve(enableHttp2: boolean): Promise<number> {
  const server = new MetricsServer(
    { bindAddress: '127.0.0.1:0', secureServing: true, enableHttp2 },
    async () => ({ contentType: 'text/plain', body: 'up 1\n' }),
    createLogger({ write: () => {} }),
    new KubeConfig(),
  );
  const address = await server.start('127.0.0.1', 0);
  cleanup.push(() => server.stop());
  return address.port;
}

/** The protocol the server picks when offered HTTP/2 and HTTP/1.1. */
function negotiated(port: number): Promise<string | false | null> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect(
      { host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['h2', 'http/1.1'] },
      () => {
        resolve(socket.alpnProtocol);
        socket.destroy();
      },
    );
    socket.once('error', reject);
  });
}

describe('MetricsServer with secure serving', () => {
  it('speaks HTTP/1.1 only by default, and HTTP/2 too with enableHttp2 (authentication unchanged)', async () => {
    expect(await negotiated(await serve(false))).toBe('http/1.1');

    const port = await serve(true);
    expect(await negotiated(port)).toBe('h2');
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false });
    session.on('error', () => {});
    cleanup.push(() => void session.destroy());
    const status = await new Promise<number>((resolve, reject) => {
      const stream = session.request({ ':path': '/metrics' });
      stream.on('response', (headers) => resolve(Number(headers[':status'])));
      stream.on('error', reject);
      stream.resume();
      stream.end();
    });
    // No bearer token: refused before any review, over HTTP/2 as over HTTP/1.1.
    expect(status).toBe(401);
  });
});
