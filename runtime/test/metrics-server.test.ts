/**
 * The metrics server on real sockets: its HTTP versions, its bounds on slow and silent clients, its TLS
 * policy, and its reviews counted on a local stand-in for the API server (the envtest integration test,
 * metrics-auth, proves 401/403/200 against a real one).
 */
import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { closedAfter, silentSockets } from './sockets.js';
import { createLogger } from '../src/logger.js';
import { MetricsServer, type MetricsServingOptions } from '../src/metrics-server.js';
import { metricsConfig } from '../src/options.js';
import { localKubeConfig } from './local-server.js';
import { makeCertificates } from './webhook/helpers.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function serve(
  enableHttp2: boolean,
  options: MetricsServingOptions = {},
  kubeConfig = new KubeConfig(),
): Promise<number> {
  const server = new MetricsServer(
    metricsConfig({ bindAddress: '127.0.0.1:0', secureServing: true, enableHttp2, ...options }),
    async () => ({ contentType: 'text/plain', body: 'up 1\n' }),
    createLogger({ write: () => {} }),
    kubeConfig,
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

/**
 * A stand-in for the API server's TokenReview and SubjectAccessReview: `scraper-token` is the service
 * account `scraper`, allowed; every other token is unauthenticated. It counts the reviews and the most in
 * flight at once, and answers each after `delayMs`.
 */
async function fakeApiServer(delayMs: number) {
  const counts = { tokenReviews: 0, accessReviews: 0, inFlight: 0, maxInFlight: 0, aborted: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        spec: { token?: string; user?: string };
      };
      const tokenReview = req.url === '/apis/authentication.k8s.io/v1/tokenreviews';
      if (tokenReview) counts.tokenReviews++;
      else counts.accessReviews++;
      counts.inFlight++;
      counts.maxInFlight = Math.max(counts.maxInFlight, counts.inFlight);
      let answered = false;
      res.once('close', () => {
        counts.inFlight--;
        if (!answered) counts.aborted++;
      });
      setTimeout(() => {
        answered = true;
        const status = tokenReview
          ? review.spec.token === 'scraper-token'
            ? { authenticated: true, user: { username: 'system:serviceaccount:default:scraper' } }
            : { authenticated: false }
          : { allowed: review.spec.user === 'system:serviceaccount:default:scraper' };
        res.writeHead(201, { 'Content-Type': 'application/json' }).end(JSON.stringify({ ...review, status }));
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { counts, kubeConfig: localKubeConfig(server) };
}

/** GET /metrics with `token` on `agent`: the status. */
function scrape(port: number, token: string, agent: https.Agent | false = false): Promise<number> {
  return new Promise((resolve, reject) => {
    https
      .get(
        {
          host: '127.0.0.1',
          port,
          path: '/metrics',
          agent,
          rejectUnauthorized: false,
          headers: { Authorization: `Bearer ${token}` },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      )
      .on('error', reject);
  });
}

describe('MetricsServer reviews', () => {
  it('300 distinct made-up tokens: at most maxConcurrentReviews TokenReviews at once, the excess a fast 429; answers cached', async () => {
    const api = await fakeApiServer(100);
    const port = await serve(false, { maxConcurrentReviews: 4 }, api.kubeConfig);
    const agent = new https.Agent({ keepAlive: true, maxSockets: 32 });
    cleanup.push(() => agent.destroy());
    const started = performance.now();
    const statuses = await Promise.all(
      Array.from({ length: 300 }, (_, i) => scrape(port, `made-up-${i}`, agent)),
    );
    const floodMs = performance.now() - started;
    const unauthorized = statuses.filter((status) => status === 401).length;
    const busy = statuses.filter((status) => status === 429).length;
    console.info(
      `300 distinct made-up tokens over 32 connections in ${Math.round(floodMs)} ms: ${unauthorized} x 401 ` +
        `(${api.counts.tokenReviews} TokenReviews, at most ${api.counts.maxInFlight} at once), ${busy} x 429`,
    );
    expect(unauthorized + busy).toBe(300);
    expect(api.counts.maxInFlight).toBeLessThanOrEqual(4);
    expect(busy).toBeGreaterThan(0);
    expect(api.counts.tokenReviews).toBe(unauthorized);

    // A token refused once is refused again without a review; the scraper's is reviewed once, then cached.
    const refusedToken = `made-up-${statuses.indexOf(401)}`;
    const reviews = api.counts.tokenReviews;
    expect(await scrape(port, refusedToken)).toBe(401);
    expect(api.counts.tokenReviews).toBe(reviews);
    expect(await scrape(port, 'scraper-token')).toBe(200);
    expect(await scrape(port, 'scraper-token')).toBe(200);
    expect(api.counts).toMatchObject({ tokenReviews: reviews + 1, accessReviews: 1 });
  }, 30_000);

  it('keeps at most maxCachedReviews answers, and each only for its time to live', async () => {
    const api = await fakeApiServer(0);
    const port = await serve(
      false,
      { maxCachedReviews: 2, authenticationFailureCacheTtlMs: 300 },
      api.kubeConfig,
    );
    for (const token of ['a', 'b', 'b', 'c']) expect(await scrape(port, token)).toBe(401);
    expect(api.counts.tokenReviews).toBe(3); // b was cached
    expect(await scrape(port, 'a')).toBe(401); // a was dropped for c: reviewed again
    expect(api.counts.tokenReviews).toBe(4);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await scrape(port, 'c')).toBe(401); // expired
    expect(api.counts.tokenReviews).toBe(5);
  });

  it('a client that goes away aborts its TokenReview', async () => {
    const api = await fakeApiServer(10_000);
    const port = await serve(false, {}, api.kubeConfig);
    const req = https.get({
      host: '127.0.0.1',
      port,
      path: '/metrics',
      agent: false,
      rejectUnauthorized: false,
      headers: { Authorization: 'Bearer slow-token' },
    });
    req.on('error', () => {});
    while (api.counts.inFlight === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    req.destroy();
    const started = performance.now();
    while (api.counts.aborted === 0 && performance.now() - started < 3_000) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(api.counts).toMatchObject({ tokenReviews: 1, inFlight: 0, aborted: 1 });
  });
});

describe('MetricsServer limits', () => {
  it('serves with maxConnections silent sockets open, and cuts silent sockets and slow headers', async () => {
    const port = await serve(false, {
      maxConnections: 3,
      handshakeTimeoutMs: 1_000,
      headersTimeoutMs: 1_000,
    });
    const silent = await silentSockets(port, 3, cleanup);
    const silentClosed = silent.map((socket) => closedAfter(socket));
    // No token: a 401 without a review, so the answer shows the connection was served.
    expect(await scrape(port, '')).toBe(401);
    const slow = await new Promise<tls.TLSSocket>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () =>
        resolve(socket),
      );
      socket.once('error', reject);
      cleanup.push(() => void socket.destroy());
    });
    slow.write('GET /metrics HTTP/1.1\r\nHost: localhost\r\n'); // and never the blank line
    const [slowMs, ...silentMs] = await Promise.all([closedAfter(slow), ...silentClosed]);
    console.info(
      `metrics: silent sockets closed after ${silentMs.map(Math.round).join(', ')} ms, ` +
        `slow headers after ${Math.round(slowMs!)} ms (timeouts 1000 ms)`,
    );
    for (const ms of silentMs) expect(ms).toBeLessThan(1_000 + 1_000);
    expect(slowMs).toBeLessThan(1_000 + 1_500);
  }, 30_000);

  it('refuses TLS 1.1 and ciphers without forward secrecy with an RSA key, as the webhook server', async () => {
    // An RSA key, as cert-manager's: with it, RSA key exchange (no forward secrecy) is possible to offer.
    const certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'metrics-certs-'));
    cleanup.push(() => fs.rmSync(certDir, { recursive: true, force: true }));
    makeCertificates(certDir, 'metrics-test', 'rsa');
    const port = await serve(false, { certDir });
    const attempt = (options: tls.ConnectionOptions) =>
      new Promise<string>((resolve) => {
        const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...options }, () => {
          resolve(socket.getCipher().name);
          socket.destroy();
        });
        socket.once('error', () => resolve('refused'));
      });
    expect(await attempt({ maxVersion: 'TLSv1.2', ciphers: 'AES128-GCM-SHA256' })).toBe('refused');
    expect(await attempt({ minVersion: 'TLSv1', maxVersion: 'TLSv1.1' })).toBe('refused');
    expect(await attempt({ maxVersion: 'TLSv1.2' })).toMatch(/^ECDHE-/);
  });
});
