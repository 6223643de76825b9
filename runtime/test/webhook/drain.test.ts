/**
 * The webhook server's stop() raced by real clients on kept-alive connections, as kube-apiserver holds
 * them: a stopping manager must not fail a request. Node's clients stand in for Go's: neither sends a POST
 * again once it was written on a reused connection that then closes (Go's net/http: a POST is not
 * replayable), and both send again a stream that an HTTP/2 GOAWAY says was not processed (here by hand,
 * as Go's http2 transport does).
 */
import fs from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { groupVersion } from '../../src/kinds.js';
import { validating } from '../../src/webhook/admission.js';
import { validatePath } from '../../src/webhook/paths.js';
import { webhookServerConfig } from '../../src/options.js';
import { WebhookServer, type WebhookServerOptions } from '../../src/webhook/server.js';
import { admissionReview, makeCertificates, memoryLogger, tempDir } from './helpers.js';

const Guestbook = groupVersion('webapp.example.com', 'v1').kind('Guestbook', { plural: 'guestbooks' });
const VALIDATE = validatePath(Guestbook);
const object = { apiVersion: 'webapp.example.com/v1', kind: 'Guestbook', metadata: { name: 'g' }, spec: {} };
const BODY = JSON.stringify(admissionReview({ object }));

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function serve(options: WebhookServerOptions) {
  const dir = tempDir();
  cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const certs = makeCertificates(dir);
  const server = new WebhookServer(
    webhookServerConfig({
      host: '127.0.0.1',
      port: 0,
      certDir: dir,
      logger: memoryLogger().logger,
      ...options,
    }),
  );
  server.register(VALIDATE, validating(Guestbook, {}));
  await server.start();
  cleanup.push(() => server.stop());
  return { server, port: server.address!.port, ca: certs.ca };
}

interface Answer {
  status: number;
  connection: string | undefined;
  reused: boolean;
}

/** One POST of a review on `agent` (kept-alive connections); rejects as Node's client does, never retried. */
function post(agent: https.Agent, port: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: VALIDATE,
        method: 'POST',
        servername: 'localhost',
        agent,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(BODY) },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            connection: res.headers.connection,
            reused: req.reusedSocket,
          }),
        );
      },
    );
    req.on('error', (error) => reject(new Error(`${req.reusedSocket ? 'reused' : 'new'}: ${error.message}`)));
    req.end(BODY);
  });
}

/** The requests sent back to back on `agent` by `loops` clients while `sending()`. */
async function load(agent: https.Agent, port: number, loops: number, sending: () => boolean) {
  const answers: Answer[] = [];
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (sending()) {
        await post(agent, port).then(
          (answer) => answers.push(answer),
          (error: Error) => failures.push(error.message),
        );
      }
    }),
  );
  return { answers, failures };
}

describe('WebhookServer.stop() with clients on kept-alive connections', () => {
  it('fails no HTTP/1.1 request: it answers through the drain with Connection: close, then closes the idle connections', async () => {
    const { server, port, ca } = await serve({ shutdownDelayMs: 1_000, keepAliveTimeoutMs: 60_000 });
    const agent = new https.Agent({ keepAlive: true, maxSockets: 4, ca });
    cleanup.push(() => agent.destroy());
    // An idle kept-alive connection of another client, which no request uses again.
    const idle = new https.Agent({ keepAlive: true, ca });
    cleanup.push(() => idle.destroy());
    expect((await post(idle, port)).status).toBe(200);
    const idleSocket = Object.values(idle.freeSockets).flat()[0]!;
    let idleClosedAt = 0;
    idleSocket.once('close', () => (idleClosedAt = performance.now()));

    // The race that failed a request: a request written on a kept-alive connection, and stop() called in
    // the same turn of the event loop, before the server has read it (its connection still looks idle).
    expect((await post(agent, port)).status).toBe(200);
    const raced = post(agent, port);
    let stopStarted = 0;
    const stopping = new Promise<void>((resolve) =>
      setImmediate(() => {
        stopStarted = performance.now();
        void server.stop().then(resolve);
      }),
    );
    // And clients that keep sending on their kept-alive connections for a while after (the endpoint
    // leaving the Service), each answer during the drain closing its connection.
    const during = load(agent, port, 4, () => stopStarted === 0 || performance.now() - stopStarted < 500);
    const first = await raced.catch((error: Error) => error.message);
    const { answers, failures } = await during;
    expect(first).toMatchObject({ status: 200, connection: 'close', reused: true });
    expect(failures).toEqual([]);
    expect(answers.length).toBeGreaterThan(4);
    expect(answers.every((answer) => answer.status === 200 && answer.connection === 'close')).toBe(true);

    await stopping;
    const stoppedAfter = performance.now() - stopStarted;
    expect(stoppedAfter).toBeGreaterThanOrEqual(990);
    expect(stoppedAfter).toBeLessThan(3_000);
    // The connection idle through the whole drain is closed at its end, not before.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(idleClosedAt - stopStarted, String(idleClosedAt)).toBeGreaterThanOrEqual(990);
    await expect(post(new https.Agent({ ca }), port)).rejects.toThrow(/ECONNREFUSED/);
  }, 30_000);

  it('fails no HTTP/2 request: a graceful GOAWAY at once, and new connections served through the drain', async () => {
    const { server, port, ca } = await serve({ enableHttp2: true, shutdownDelayMs: 1_000 });
    let session = http2.connect(`https://localhost:${port}`, { ca, host: '127.0.0.1' });
    const sessions = [session];
    cleanup.push(() => sessions.forEach((s) => s.destroy()));
    const connectionsFailed: string[] = [];
    /** A stream on the current session; a new session when it has gone away (as Go's transport does). */
    const stream = (): Promise<number | 'refused'> => {
      if (session.closed || session.destroyed) {
        session = http2.connect(`https://localhost:${port}`, { ca, host: '127.0.0.1' });
        sessions.push(session);
      }
      const current = session;
      current.on('error', (error: Error) => connectionsFailed.push(error.message));
      return new Promise((resolve, reject) => {
        const req = current.request({
          ':method': 'POST',
          ':path': VALIDATE,
          'content-type': 'application/json',
        });
        let status = 0;
        req.on('response', (headers) => (status = Number(headers[':status'])));
        req.resume();
        req.on('close', () => {
          // REFUSED_STREAM: a stream after the GOAWAY's last stream id, not processed; Go sends it again.
          if (req.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM) resolve('refused');
          else if (status !== 0) resolve(status);
          else reject(new Error(`stream closed without an answer (code ${req.rstCode})`));
        });
        req.on('error', () => {});
        req.end(BODY);
      });
    };
    const send = async (): Promise<number> => {
      for (let attempt = 0; attempt < 5; attempt++) {
        const outcome = await stream();
        if (outcome !== 'refused') return outcome;
      }
      throw new Error('refused five times');
    };
    expect(await send()).toBe(200);

    let stopStarted = 0;
    const stopping = new Promise<void>((resolve) =>
      setImmediate(() => {
        stopStarted = performance.now();
        void server.stop().then(resolve);
      }),
    );
    const statuses: number[] = [];
    const failures: string[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (stopStarted === 0 || performance.now() - stopStarted < 500) {
          await send().then(
            (status) => statuses.push(status),
            (error: Error) => failures.push(error.message),
          );
        }
      }),
    );
    expect(failures).toEqual([]);
    expect(statuses.length).toBeGreaterThan(4);
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(connectionsFailed).toEqual([]);
    await stopping;
    expect(performance.now() - stopStarted).toBeLessThan(3_000);
  }, 30_000);

  it('stops at once with shutdownDelayMs 0', async () => {
    const { server } = await serve({ shutdownDelayMs: 0 });
    const started = performance.now();
    await server.stop();
    expect(performance.now() - started).toBeLessThan(500);
  });
});
