import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeServingCertificates } from '../../runtime/src/internal/certs.js';
import { FetchError, fetchUrl, RefusedFetch, type FetchOptions } from '../../src/envtest/http.js';

/** What the server answers, in turn, per path; the last answer repeats. */
let script: Record<string, ((response: http.ServerResponse) => void)[]> = {};
const hits: Record<string, number> = {};
let server: http.Server;
let base: string;
/** The same answers over https, with a certificate for 127.0.0.1 and localhost from a CA of the test's. */
let secureServer: https.Server;
let secureBase: string;
const certs = makeServingCertificates(['127.0.0.1', 'localhost']);

beforeAll(async () => {
  const answer = (request: http.IncomingMessage, response: http.ServerResponse): void => {
    const url = request.url ?? '/';
    const n = (hits[url] = (hits[url] ?? 0) + 1);
    const answers = script[url] ?? [(r: http.ServerResponse) => r.writeHead(404).end()];
    answers[Math.min(n, answers.length) - 1]?.(response);
  };
  server = http.createServer(answer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  secureServer = https.createServer({ cert: certs.cert, key: certs.key }, answer);
  await new Promise<void>((resolve) => secureServer.listen(0, '127.0.0.1', resolve));
  secureBase = `https://127.0.0.1:${(secureServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of [server, secureServer]) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});
beforeEach(() => {
  script = {};
  for (const key of Object.keys(hits)) delete hits[key];
});

const ok = (body: string) => (r: http.ServerResponse) => r.writeHead(200).end(body);
const status = (code: number) => (r: http.ServerResponse) => r.writeHead(code).end();

async function text(
  url: string,
  maxBytes = 1024,
  retries?: number,
  options: Partial<FetchOptions> = {},
): Promise<string> {
  const { body } = await fetchUrl(new URL(url), {
    maxBytes,
    ca: certs.caCert,
    ...(retries !== undefined ? { retries } : {}),
    ...options,
  });
  let all = '';
  for await (const chunk of body) all += chunk.toString();
  return all;
}

describe('fetchUrl', () => {
  it('retries 5xx and 429 with backoff, up to the cap, and then reports the last answer', async () => {
    script['/flaky'] = [status(503), status(429), ok('index')];
    const started = Date.now();
    expect(await text(`${base}/flaky`)).toBe('index');
    expect(hits['/flaky']).toBe(3);
    // Two pauses of 0.25-0.5 s and 0.5-1 s (jittered).
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);

    script['/down'] = [status(502)];
    const error = await text(`${base}/down`, 1024, 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchError);
    expect((error as FetchError).message).toBe(`${base}/down answered 502 Bad Gateway`);
    expect(hits['/down']).toBe(2);
  });

  it('does not retry a 404 or a refused connection', async () => {
    await expect(text(`${base}/missing`)).rejects.toThrow(`${base}/missing answered 404 Not Found`);
    expect(hits['/missing']).toBe(1);
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const started = Date.now();
    await expect(text(`http://127.0.0.1:${port}/x`)).rejects.toThrow(
      `127.0.0.1:${port} refused the connection`,
    );
    expect(Date.now() - started).toBeLessThan(200);
  });

  it('follows redirects, relative ones too, up to five', async () => {
    script['/a'] = [(r) => r.writeHead(302, { location: '/b' }).end()];
    script['/b'] = [(r) => r.writeHead(301, { location: `${base}/c` }).end()];
    script['/c'] = [ok('there')];
    expect(await text(`${base}/a`)).toBe('there');
    script['/loop'] = [(r) => r.writeHead(302, { location: '/loop' }).end()];
    await expect(text(`${base}/loop`)).rejects.toThrow(`more than 5 redirects from ${base}/loop`);
    expect(hits['/loop']).toBe(6);
  });

  it('bounds the size: by Content-Length before reading, and while reading a body without one', async () => {
    script['/big'] = [(r) => r.writeHead(200, { 'content-length': 2000 }).end('x'.repeat(2000))];
    await expect(text(`${base}/big`)).rejects.toThrow(
      `${base}/big has 2000 bytes, more than the 1024 allowed`,
    );
    script['/chunked'] = [
      (r) => {
        r.writeHead(200);
        for (let i = 0; i < 20; i++) r.write('x'.repeat(100));
        r.end();
      },
    ];
    await expect(text(`${base}/chunked`)).rejects.toThrow(
      `${base}/chunked sends more than the 1024 bytes allowed`,
    );
  });

  it('gives up a body that trickles, though each byte comes within the idle timeout', async () => {
    script['/trickle'] = [
      (r) => {
        r.writeHead(200);
        const timer = setInterval(() => r.write('x'), 50);
        r.on('close', () => clearInterval(timer));
      },
    ];
    const started = performance.now();
    await expect(text(`${base}/trickle`, 1024, 0, { paceWindowMs: 500 })).rejects.toThrow(
      /^127\.0\.0\.1:\d+ sends too slowly \(\d+ bytes in 500 ms\)$/,
    );
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('refuses schemes other than http, https and file', async () => {
    await expect(text('ftp://example.com/index.yaml')).rejects.toThrow(
      'unsupported URL scheme ftp: in ftp://example.com/index.yaml (use https:, http: or file:)',
    );
  });

  it('never follows a redirect from https to plain http', async () => {
    script['/plain'] = [ok('tampered')];
    script['/down'] = [(r) => r.writeHead(302, { location: `${base}/plain` }).end()];
    const error = await text(`${secureBase}/down`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RefusedFetch);
    expect((error as Error).message).toBe(
      `${secureBase}/down redirects to ${base}/plain, from https to http`,
    );
    expect(hits['/plain']).toBeUndefined();
    // https to https is followed.
    script['/up'] = [(r) => r.writeHead(302, { location: `${secureBase}/there` }).end()];
    script['/there'] = [ok('there')];
    expect(await text(`${secureBase}/up`)).toBe('there');
  });

  it('does not read the body of a redirect: the connection closes at once', async () => {
    let closed = false;
    script['/endless'] = [
      (r) => {
        r.writeHead(302, { location: '/c' });
        const timer = setInterval(() => r.write('x'.repeat(1024)), 5);
        r.on('close', () => {
          clearInterval(timer);
          closed = true;
        });
      },
    ];
    script['/c'] = [ok('there')];
    expect(await text(`${base}/endless`)).toBe('there');
    for (let i = 0; i < 100 && !closed; i++) await sleep(20);
    expect(closed).toBe(true);
  });

  it('applies the address rule to literal addresses, resolved names and redirects, before connecting', async () => {
    const loopback = { addressRule: () => 'a loopback address, and the index is on disk' };
    script['/c'] = [ok('there')];
    await expect(text(`${secureBase}/c`, 1024, 0, loopback)).rejects.toThrow(
      new RefusedFetch(`${secureBase}/c: 127.0.0.1 is a loopback address, and the index is on disk`),
    );
    const port = new URL(secureBase).port;
    await expect(text(`https://localhost:${port}/c`, 1024, 0, loopback)).rejects.toThrow(
      /^https:\/\/localhost:\d+\/c: localhost resolves to (127\.0\.0\.1|::1), a loopback address, and the index is on disk$/,
    );
    expect(hits['/c']).toBeUndefined();
    const only2 = { addressRule: (ip: string) => (ip === '127.0.0.2' ? 'refused' : undefined) };
    script['/hop'] = [(r) => r.writeHead(302, { location: `https://127.0.0.2:${port}/c` }).end()];
    await expect(text(`${secureBase}/hop`, 1024, 0, only2)).rejects.toThrow(
      `https://127.0.0.2:${port}/c: 127.0.0.2 is refused`,
    );
    expect(await text(`${secureBase}/c`, 1024, 0, only2)).toBe('there');
  });

  it('does not reuse a pooled connection that was opened without the address rule', async () => {
    script['/c'] = [ok('there')];
    const port = new URL(secureBase).port;
    // Kept alive in Node's pool after this answer...
    expect(await text(`https://localhost:${port}/c`)).toBe('there');
    // ...but a request under a rule connects afresh, so the rule sees the address.
    const loopback = { addressRule: () => 'a loopback address, and the index is on disk' };
    await expect(text(`https://localhost:${port}/c`, 1024, 0, loopback)).rejects.toThrow(RefusedFetch);
    expect(hits['/c']).toBe(1);
  });

  it('says which address the body came from', async () => {
    script['/c'] = [ok('there')];
    const fetched = await fetchUrl(new URL(`${secureBase}/c`), { maxBytes: 1024, ca: certs.caCert });
    for await (const _ of fetched.body) void _;
    expect(fetched.address).toBe('127.0.0.1');
  });
});
