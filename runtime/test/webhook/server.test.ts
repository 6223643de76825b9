import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { groupVersion } from '../../src/kinds.js';
import { Metrics } from '../../src/metrics.js';
import {
  ValidationError,
  defaulting,
  fieldError,
  validating,
  type AdmissionReview,
} from '../../src/webhook/admission.js';
import { mutatePath, validatePath } from '../../src/webhook/paths.js';
import { webhookServerConfig } from '../../src/options.js';
import { WebhookServer, type WebhookServerOptions } from '../../src/webhook/server.js';
import {
  admissionReview,
  makeCertificates,
  memoryLogger,
  post,
  tempDir,
  waitFor,
  type TestCertificates,
} from './helpers.js';

interface Guestbook {
  metadata: { name?: string };
  spec: { replicas?: number };
}
const Guestbook = groupVersion('webapp.example.com', 'v1').kind<Guestbook>('Guestbook', {
  plural: 'guestbooks',
});
const MUTATE = mutatePath(Guestbook);
const VALIDATE = validatePath(Guestbook);
const object = { apiVersion: 'webapp.example.com/v1', kind: 'Guestbook', metadata: { name: 'g' }, spec: {} };

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function serve(options: WebhookServerOptions = {}, setUp?: (server: WebhookServer) => void) {
  const dir = tempDir();
  cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const certs = makeCertificates(dir);
  const { logger, lines } = memoryLogger();
  const server = new WebhookServer(
    // No drain: these tests are not about stop() (drain.test.ts is).
    webhookServerConfig({ host: '127.0.0.1', port: 0, certDir: dir, logger, shutdownDelayMs: 0, ...options }),
  );
  server.register(
    MUTATE,
    defaulting(Guestbook, {
      default: (obj) => void (obj.spec.replicas ??= 1),
    }),
  );
  setUp?.(server);
  await server.start();
  cleanup.push(() => server.stop());
  const port = server.address!.port;
  const call = (
    urlPath: string,
    body: unknown,
    extra: { headers?: Record<string, string>; method?: string } = {},
  ) => post(port, urlPath, body, { ca: certs.ca, ...extra });
  const failures = () => lines.filter((l) => l['msg'] === 'webhook request failed');
  return { server, certs, lines, failures, call, port, dir };
}

describe('WebhookServer', () => {
  it('answers a defaulting review over TLS with a patch, and counts it', async () => {
    const { call, server } = await serve();
    const reply = await call(MUTATE, admissionReview({ object }));
    expect(reply.status).toBe(200);
    const review = reply.json as AdmissionReview;
    expect(review.response).toMatchObject({ uid: 'a2b4c6d8-0000-4000-8000-000000000001', allowed: true });
    expect(JSON.parse(Buffer.from(review.response!.patch!, 'base64').toString())).toEqual([
      { op: 'add', path: '/spec/replicas', value: 1 },
    ]);
    const metrics = server.metrics;
    expect(
      await metrics.value('controller_runtime_webhook_requests_total', { webhook: MUTATE, code: '200' }),
    ).toBe(1);
    expect(
      await metrics.value('controller_runtime_webhook_requests_total', { webhook: MUTATE, code: '500' }),
    ).toBe(0);
    expect(await metrics.value('controller_runtime_webhook_requests_in_flight', { webhook: MUTATE })).toBe(0);
    expect(
      await metrics.value('controller_runtime_webhook_latency_seconds', { webhook: MUTATE, le: '+Inf' }),
    ).toBe(1);
    const text = await metrics.render();
    expect(text).toContain('# TYPE controller_runtime_webhook_latency_seconds histogram');
    expect(text).toContain(`controller_runtime_webhook_latency_seconds_count{webhook="${MUTATE}"} 1`);
    expect(text).toContain(`controller_runtime_webhook_requests_total{code="200",webhook="${MUTATE}"} 1`);
  });

  it('answers malformed JSON with a 400 that says so, logs one line, and keeps serving', async () => {
    const { call, failures, server } = await serve();
    const reply = await call(MUTATE, '{"apiVersion": "admission.k8s.io/v1", ');
    expect(reply.status).toBe(400);
    expect((reply.json as AdmissionReview).response?.status?.message).toMatch(
      /^request body is not valid JSON: /,
    );
    expect(failures()).toHaveLength(1);
    expect(failures()[0]).toMatchObject({ level: 'error', webhook: MUTATE, code: 400 });
    expect((await call(MUTATE, admissionReview({ object }))).status).toBe(200);
    expect(
      await server.metrics.value('controller_runtime_webhook_requests_total', {
        webhook: MUTATE,
        code: '400',
      }),
    ).toBe(1);
  });

  it('answers a review of the wrong kind, an empty body, a wrong content type and a GET with 4xx', async () => {
    const { call, failures } = await serve();
    const conversion = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { uid: 'u' },
    };
    const wrong = await call(MUTATE, conversion);
    expect(wrong.status).toBe(400);
    expect((wrong.json as AdmissionReview).response?.status?.message).toBe(
      'expected a admission.k8s.io/v1 AdmissionReview review, got apiextensions.k8s.io/v1 ConversionReview',
    );
    expect((await call(MUTATE, '[1]')).status).toBe(400);
    const noRequest = await call(MUTATE, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
    expect(noRequest.status).toBe(400);
    expect((noRequest.json as AdmissionReview).response?.status?.message).toBe(
      'the AdmissionReview has no request',
    );
    expect((await call(MUTATE, '')).json).toMatchObject({
      response: { status: { message: 'request body is empty' } },
    });
    const text = await call(MUTATE, admissionReview({ object }), {
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(text.status).toBe(400);
    expect((text.json as AdmissionReview).response?.status?.message).toBe(
      'contentType=text/plain, expected application/json',
    );
    expect((await call(MUTATE, '', { method: 'GET' })).status).toBe(405);
    expect((await call('/nothing-here', admissionReview({ object }))).status).toBe(404);
    expect(failures()).toHaveLength(6); // 404s are not webhook failures
  });

  it('refuses a body over the limit with a 413, whether announced or streamed', async () => {
    const { call, failures, server, port, certs } = await serve({ maxRequestBytes: 1024 });
    const big = admissionReview({
      object: { ...object, metadata: { name: 'g', annotations: { a: 'x'.repeat(2000) } } },
    });
    const announced = await call(MUTATE, big);
    expect(announced.status).toBe(413);
    expect((announced.json as AdmissionReview).response?.status?.message).toBe(
      'request entity is too large; limit is 1024 bytes',
    );
    const streamed = await post(port, MUTATE, big, {
      ca: certs.ca,
      headers: { 'Content-Length': '' },
    });
    expect(streamed.status).toBe(413);
    expect(failures()).toHaveLength(2);
    expect((await call(MUTATE, admissionReview({ object }))).status).toBe(200);
    expect(
      await server.metrics.value('controller_runtime_webhook_requests_total', {
        webhook: MUTATE,
        code: '413',
      }),
    ).toBe(2);
  });

  it('answers a throwing handler with allowed=false and code 500, logs it once with its stack, and keeps serving', async () => {
    let calls = 0;
    const { call, failures } = await serve({}, (server) =>
      server.register(
        VALIDATE,
        validating(Guestbook, {
          validateCreate: () => {
            calls++;
            if (calls === 1) throw new Error('database on fire');
            throw new ValidationError(fieldError.invalid('spec.replicas', 0, 'must be at least 1'));
          },
        }),
      ),
    );
    const broken = await call(VALIDATE, admissionReview({ object }));
    expect(broken.status).toBe(200);
    expect((broken.json as AdmissionReview).response).toMatchObject({
      uid: 'a2b4c6d8-0000-4000-8000-000000000001',
      allowed: false,
      status: { code: 500, message: 'internal error in the webhook: database on fire' },
    });
    expect(failures()).toHaveLength(1);
    expect(failures()[0]).toMatchObject({
      webhook: VALIDATE,
      code: 500,
      requestID: 'a2b4c6d8-0000-4000-8000-000000000001',
    });
    expect((failures()[0]?.['error'] as { stack: string }).stack).toContain('database on fire');
    const denied = await call(VALIDATE, admissionReview({ object }));
    expect((denied.json as AdmissionReview).response).toMatchObject({
      allowed: false,
      status: { code: 422, details: { causes: [{ field: 'spec.replicas', reason: 'FieldValueInvalid' }] } },
    });
    expect(failures()).toHaveLength(1); // a denial is an answer, not a failure
  });

  it("aborts the handler's signal when the caller goes away before the answer", async () => {
    let signal: AbortSignal | undefined;
    const { port, certs } = await serve({ requestTimeoutMs: 60_000 }, (s) =>
      s.register(
        VALIDATE,
        validating(Guestbook, {
          validateCreate: (_obj, context) => {
            signal = context.signal;
            return new Promise(() => {});
          },
        }),
      ),
    );
    const body = JSON.stringify(admissionReview({ object }));
    const socket = tls.connect({ host: '127.0.0.1', port, ca: certs.ca, servername: 'localhost' });
    socket.on('error', () => {});
    cleanup.push(() => void socket.destroy());
    socket.write(
      `POST ${VALIDATE} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await waitFor(() => signal !== undefined);
    expect(signal?.aborted).toBe(false);
    socket.destroy();
    await waitFor(() => signal?.aborted === true);
  });

  it('answers for a handler that hangs once the time limit passes, and aborts its signal', async () => {
    let signal: AbortSignal | undefined;
    const { call, failures, server } = await serve({ requestTimeoutMs: 200 }, (s) =>
      s.register(
        VALIDATE,
        validating(Guestbook, {
          validateCreate: (_obj, context) => {
            signal = context.signal;
            return new Promise(() => {});
          },
        }),
      ),
    );
    const started = Date.now();
    const reply = await call(VALIDATE, admissionReview({ object }));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(reply.status).toBe(200);
    expect((reply.json as AdmissionReview).response).toEqual({
      uid: 'a2b4c6d8-0000-4000-8000-000000000001',
      allowed: false,
      status: {
        status: 'Failure',
        code: 504,
        reason: 'Timeout',
        message: 'the webhook did not answer within 200 ms',
      },
    });
    expect(signal?.aborted).toBe(true);
    expect(failures()).toEqual([expect.objectContaining({ webhook: VALIDATE, code: 504 })]);
    expect(
      await server.metrics.value('controller_runtime_webhook_requests_in_flight', { webhook: VALIDATE }),
    ).toBe(0);
    expect((await call(MUTATE, admissionReview({ object }))).status).toBe(200);
  });

  it('refuses to start without certificate files, naming the file and the fix', async () => {
    const dir = tempDir();
    cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const server = new WebhookServer(
      webhookServerConfig({ port: 0, certDir: dir, logger: memoryLogger().logger }),
    );
    await expect(server.start()).rejects.toThrow(
      `webhook server: cannot read ${path.join(dir, 'tls.crt')}: no such file. The serving certificate and key ` +
        `must be in ${dir} (mount the Secret cert-manager fills there, or set certDir)`,
    );
    fs.writeFileSync(path.join(dir, 'tls.crt'), 'not a certificate');
    fs.writeFileSync(path.join(dir, 'tls.key'), 'not a key');
    await expect(
      new WebhookServer(
        webhookServerConfig({ port: 0, certDir: dir, logger: memoryLogger().logger }),
      ).start(),
    ).rejects.toThrow(/do not form a usable pair/);
  });

  it('defaults to port 9443 and controller-runtime’s certificate directory', async () => {
    const { logger } = memoryLogger();
    const server = new WebhookServer(webhookServerConfig({ logger }));
    cleanup.push(() => server.stop());
    await expect(server.start()).rejects.toThrow(/k8s-webhook-server\/serving-certs\/tls\.crt/);
  });

  it('picks up a rotated certificate without a restart', async () => {
    const { dir, port, certs, lines } = await serve({ certPollIntervalMs: 60_000 });
    const issuer = (ca: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = tls.connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
          resolve(socket.getPeerCertificate().issuer.CN as string);
          socket.end();
        });
        socket.on('error', reject);
      });
    expect(await issuer(certs.ca)).toBe('webhook-test-ca');
    const rotated: TestCertificates = makeCertificates(dir, 'rotated');
    await waitFor(async () => (await issuer(rotated.ca).catch(() => '')) === 'rotated-ca');
    await expect(issuer(certs.ca)).rejects.toThrow(/certificate/);
    expect(lines.some((l) => l['msg'] === 'Updated current TLS certificate')).toBe(true);
    expect((await post(port, MUTATE, admissionReview({ object }), { ca: rotated.ca })).status).toBe(200);
  });

  it('keeps the current certificate while the files are half replaced, and polls when no watch event comes', async () => {
    const { dir, port, certs, server } = await serve({ certPollIntervalMs: 100 });
    // Simulate a watcher that misses events: the poll alone must pick the change up.
    (server as unknown as { certs: { watcher?: { close(): void } } }).certs.watcher?.close();
    fs.writeFileSync(path.join(dir, 'tls.key'), 'garbage');
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect((await post(port, MUTATE, admissionReview({ object }), { ca: certs.ca })).status).toBe(200);
    const rotated = makeCertificates(dir, 'polled');
    await waitFor(
      async () =>
        (await post(port, MUTATE, admissionReview({ object }), { ca: rotated.ca }).catch(() => undefined))
          ?.status === 200,
    );
  });

  it('shares the registry it is given, and refuses a path twice or a malformed path', async () => {
    const metrics = new Metrics();
    const server = new WebhookServer(webhookServerConfig({ metrics, logger: memoryLogger().logger }));
    server.register(VALIDATE, validating(Guestbook, {}));
    expect(await metrics.render()).toContain(
      `controller_runtime_webhook_requests_total{code="500",webhook="${VALIDATE}"} 0`,
    );
    expect(() => server.register(VALIDATE, validating(Guestbook, {}))).toThrow(
      `webhook server: a webhook is already registered at ${VALIDATE}`,
    );
    expect(() => server.register('mutate guestbook', validating(Guestbook, {}))).toThrow(
      /invalid webhook path/,
    );
    expect(server.paths()).toEqual([VALIDATE]);
  });
});
