/**
 * A webhook server that cannot be knocked over, on real sockets (no API server needed: these are the
 * faults of its clients). The issue measured, before these limits: connections of slow clients held 73 to
 * 313 s, no limit on connections, and 16 concurrent 6.8 MB reviews took the server down (out of memory).
 */
import fs from 'node:fs';
import http2 from 'node:http2';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { closedAfter, silentSockets } from '../sockets.js';
import { groupVersion } from '../../src/kinds.js';
import { validating } from '../../src/webhook/admission.js';
import { validatePath } from '../../src/webhook/paths.js';
import { webhookServerConfig } from '../../src/options.js';
import { WebhookServer, type WebhookServerOptions } from '../../src/webhook/server.js';
import { admissionReview, makeCertificates, memoryLogger, post, tempDir } from '../webhook/helpers.js';

const Guestbook = groupVersion('webapp.example.com', 'v1').kind('Guestbook', { plural: 'guestbooks' });
const VALIDATE = validatePath(Guestbook);
const object = { apiVersion: 'webapp.example.com/v1', kind: 'Guestbook', metadata: { name: 'g' }, spec: {} };

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** A server whose validating webhook takes `delayMs` per review. */
async function serve(options: WebhookServerOptions, delayMs = 0, leafKey: 'ec' | 'rsa' = 'ec') {
  const dir = tempDir();
  cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const certs = makeCertificates(dir, 'webhook-test', leafKey);
  const { logger, lines } = memoryLogger();
  const server = new WebhookServer(
    // No drain: these tests are not about stop() (drain.test.ts is).
    webhookServerConfig({ host: '127.0.0.1', port: 0, certDir: dir, logger, shutdownDelayMs: 0, ...options }),
  );
  server.register(
    VALIDATE,
    validating(Guestbook, {
      validateCreate: async () => {
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      },
    }),
  );
  await server.start();
  cleanup.push(() => server.stop());
  const port = server.address!.port;
  const call = (body: unknown) => post(port, VALIDATE, body, { ca: certs.ca });
  return { port, certs, call, lines };
}

/** A TLS connection to the server; resolves once it is up, or with the error that ended it. */
function connect(port: number, ca: string, options: tls.ConnectionOptions = {}): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca, servername: 'localhost', ...options }, () =>
      resolve(socket),
    );
    socket.once('error', reject);
    cleanup.push(() => void socket.destroy());
  });
}

describe('slow clients', () => {
  it('are cut off: headers that never end, a body that trickles, an idle kept-alive connection', async () => {
    const { port, certs } = await serve({
      headersTimeoutMs: 1_000,
      readTimeoutMs: 2_000,
      keepAliveTimeoutMs: 1_000,
    });

    const headers = await connect(port, certs.ca);
    headers.write(`POST ${VALIDATE} HTTP/1.1\r\nHost: localhost\r\n`); // and never the blank line
    const trickle = await connect(port, certs.ca);
    trickle.write(
      `POST ${VALIDATE} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`,
    );
    const dripping = setInterval(() => trickle.write(' '), 100);
    cleanup.push(() => clearInterval(dripping));
    const idle = await connect(port, certs.ca);

    const [headersMs, trickleMs, idleMs] = await Promise.all([
      closedAfter(headers),
      closedAfter(trickle),
      closedAfter(idle),
    ]);
    console.info(
      `slow clients cut after: headers ${Math.round(headersMs)} ms, body ${Math.round(trickleMs)} ms, ` +
        `idle ${Math.round(idleMs)} ms`,
    );
    // Node enforces them when it checks its connections (every second): allow for that.
    expect(headersMs).toBeLessThan(1_000 + 1_500);
    expect(trickleMs).toBeLessThan(2_000 + 1_500);
    expect(idleMs).toBeLessThan(1_000 + 1_500);
  }, 30_000);
});

describe('floods', () => {
  it('serves a real client at once with maxConnections silent sockets open, and closes them after handshakeTimeoutMs', async () => {
    const { port, call } = await serve({ maxConnections: 4, handshakeTimeoutMs: 1_000 });
    // TCP connections that never send a TLS ClientHello, as many as the cap.
    const silent = await silentSockets(port, 4, cleanup);
    const closed = silent.map((socket) => closedAfter(socket));
    const started = performance.now();
    const reply = await call(admissionReview({ object }));
    const servedMs = performance.now() - started;
    const closedMs = await Promise.all(closed);
    console.info(
      `a real client with 4 silent sockets open (maxConnections 4): served in ${Math.round(servedMs)} ms; ` +
        `silent sockets closed after ${closedMs.map(Math.round).join(', ')} ms (handshakeTimeoutMs 1000)`,
    );
    expect(reply.status).toBe(200);
    // Well within the handshake bound: it did not wait for a silent socket to time out.
    expect(servedMs).toBeLessThan(1_000);
    // One was shed to make room for the client; the others went at the handshake timeout, not Node's 120 s.
    for (const ms of closedMs) expect(ms).toBeLessThan(1_000 + 1_000);
  }, 30_000);

  it('closes the longest idle kept-alive connection for a new client over maxConnections', async () => {
    const { port, certs, call } = await serve({ maxConnections: 2 });
    const body = JSON.stringify(admissionReview({ object }));
    // Two clients, one after the other, that got their answer and keep their connection open, idle.
    const idle: tls.TLSSocket[] = [];
    for (let i = 0; i < 2; i++) {
      const socket = await connect(port, certs.ca);
      const answered = new Promise((resolve) => socket.once('data', resolve));
      socket.write(
        `POST ${VALIDATE} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await answered;
      idle.push(socket);
    }
    const closed = idle.map((socket) => closedAfter(socket));
    expect((await call(admissionReview({ object }))).status).toBe(200);
    // The first to go idle was closed to make room; the other stays.
    expect(
      await Promise.race([closed[0], new Promise((resolve) => setTimeout(() => resolve('open'), 500))]),
    ).not.toBe('open');
    expect(idle[1]!.destroyed).toBe(false);
  });

  it('refuses a new connection only when every connection is busy with a request, and serves again after', async () => {
    const { port, certs, call } = await serve({ maxConnections: 2 }, 1_000);
    const busy = [call(admissionReview({ object })), call(admissionReview({ object }))];
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = await connect(port, certs.ca).then(
      () => 'connected',
      (error: Error) => error.message,
    );
    expect(refused).not.toBe('connected');
    expect((await Promise.all(busy)).map((reply) => reply.status)).toEqual([200, 200]);
    expect((await call(admissionReview({ object }))).status).toBe(200);
  });

  it('answers requests over maxConcurrentRequests with a fast 429, never queueing them', async () => {
    const { call } = await serve({ maxConcurrentRequests: 2 }, 1_000);
    const slow = [call(admissionReview({ object })), call(admissionReview({ object }))];
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = performance.now();
    const extra = await call(admissionReview({ object }));
    const extraMs = performance.now() - started;
    expect(extra.status).toBe(429);
    expect(extra.headers['retry-after']).toBe('1');
    expect(extraMs).toBeLessThan(500);
    expect((await Promise.all(slow)).map((reply) => reply.status)).toEqual([200, 200]);
  });

  it('bounds the bytes of concurrent large reviews: 16 of 6.8 MB, the excess refused, the server still up', async () => {
    const { call } = await serve({}, 300);
    // A review of 6.8 MB: an object with a large field, as a big ConfigMap would be.
    const big = JSON.stringify(
      admissionReview({ object: { ...object, spec: { blob: 'x'.repeat(6_800_000) } } }),
    );
    globalThis.gc?.();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 10);
    const replies = await Promise.all(Array.from({ length: 16 }, () => call(big)));
    clearInterval(sampler);
    const statuses = replies.map((reply) => reply.status);
    const served = statuses.filter((status) => status === 200).length;
    const refused = statuses.filter((status) => status === 429).length;
    console.info(
      `16 concurrent 6.8 MB reviews: ${served} answered, ${refused} refused with 429 (maxInFlightBytes 24 MiB); ` +
        `heap peak ${Math.round((peak - before) / 2 ** 20)} MiB above the start (clients included)`,
    );
    expect(served + refused).toBe(16);
    expect(served).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
    // The budget is given back: a small review is served afterwards.
    expect((await call(admissionReview({ object }))).status).toBe(200);
  }, 30_000);
});

describe('TLS', () => {
  it('refuses TLS 1.1 and ciphers without forward secrecy, accepts TLS 1.2 with ECDHE, and speaks no HTTP/2', async () => {
    // An RSA key, as cert-manager's: with it, RSA key exchange (no forward secrecy) is possible to offer.
    const { port, certs } = await serve({}, 0, 'rsa');
    const old = await connect(port, certs.ca, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1' }).then(
      () => 'connected',
      () => 'refused',
    );
    expect(old).toBe('refused');
    const staticRsa = await connect(port, certs.ca, {
      maxVersion: 'TLSv1.2',
      ciphers: 'AES128-GCM-SHA256',
    }).then(
      () => 'connected',
      () => 'refused',
    );
    expect(staticRsa).toBe('refused');
    const modern = await connect(port, certs.ca, {
      maxVersion: 'TLSv1.2',
      ALPNProtocols: ['h2', 'http/1.1'],
    });
    expect(modern.getProtocol()).toBe('TLSv1.2');
    expect(modern.getCipher().name).toMatch(/^ECDHE-/);
    expect(modern.alpnProtocol).toBe('http/1.1');
    const h2only = await connect(port, certs.ca, { ALPNProtocols: ['h2'] }).then(
      (socket) => socket.alpnProtocol,
      () => 'refused',
    );
    expect(h2only).not.toBe('h2');
  });
});

describe('HTTP/2', () => {
  /** The answer to one review over HTTP/2, on a session of its own. */
  function postHttp2(port: number, ca: string, body: unknown): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const session = http2.connect(`https://localhost:${port}`, { ca, host: '127.0.0.1' });
      session.on('error', reject);
      cleanup.push(() => void session.destroy());
      const stream = session.request({
        ':method': 'POST',
        ':path': VALIDATE,
        'content-type': 'application/json',
      });
      let status = 0;
      const chunks: Buffer[] = [];
      stream.on('response', (headers) => (status = Number(headers[':status'])));
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        session.close();
        resolve({ status, body: Buffer.concat(chunks).toString('utf8') });
      });
      stream.on('error', reject);
      stream.end(JSON.stringify(body));
    });
  }

  it('is offered (ALPN h2) only with enableHttp2, which still serves HTTP/1.1 under the same TLS rules', async () => {
    const off = await serve({});
    const offered = await connect(off.port, off.certs.ca, { ALPNProtocols: ['h2', 'http/1.1'] });
    expect(offered.alpnProtocol).toBe('http/1.1');
    await expect(postHttp2(off.port, off.certs.ca, admissionReview({ object }))).rejects.toThrow();

    const on = await serve({ enableHttp2: true });
    const h2 = await connect(on.port, on.certs.ca, { ALPNProtocols: ['h2', 'http/1.1'] });
    expect(h2.alpnProtocol).toBe('h2');
    const answer = await postHttp2(on.port, on.certs.ca, admissionReview({ object }));
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ response: { allowed: true } });
    // HTTP/1.1 clients are served as before, and a too large review is refused on both.
    const http1 = await connect(on.port, on.certs.ca, { ALPNProtocols: ['http/1.1'] });
    expect(http1.alpnProtocol).toBe('http/1.1');
    expect((await on.call(admissionReview({ object }))).status).toBe(200);
    const large = admissionReview({ object: { ...object, spec: { note: 'x'.repeat(8 * 1024 * 1024) } } });
    expect((await on.call(large)).status).toBe(413);
    expect((await postHttp2(on.port, on.certs.ca, large)).status).toBe(413);
    const old = await connect(on.port, on.certs.ca, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1' }).then(
      () => 'connected',
      () => 'refused',
    );
    expect(old).toBe('refused');
  }, 30_000);

  it('stops after its drain with HTTP/2 and HTTP/1.1 connections open, without waiting for them to go idle', async () => {
    const on = await serve({ enableHttp2: true, keepAliveTimeoutMs: 60_000, shutdownDelayMs: 1_000 });
    const session = http2.connect(`https://localhost:${on.port}`, { ca: on.certs.ca, host: '127.0.0.1' });
    session.on('error', () => {});
    cleanup.push(() => void session.destroy());
    await new Promise((resolve) => session.once('connect', resolve));
    const kept = await connect(on.port, on.certs.ca, { ALPNProtocols: ['http/1.1'] });
    const keptClosed = closedAfter(kept);
    expect((await on.call(admissionReview({ object }))).status).toBe(200);
    const started = performance.now();
    await cleanup.splice(1, 1)[0]!(); // the server's stop()
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await keptClosed).toBeLessThan(5_000);
  }, 30_000);
});
