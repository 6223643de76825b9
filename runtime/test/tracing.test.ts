/**
 * The runtime's OpenTelemetry spans, captured in memory: a reconcile's span with its outcome, the API calls
 * it makes as its children, and a tracer, span processor or exporter that throws costing its span only.
 */
import fs from 'node:fs';
import http from 'node:http';
import { context, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SamplingDecision,
  SimpleSpanProcessor,
  type ReadableSpan,
  type Sampler,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient, resourceOfPath } from '../src/client.js';
import { Controller } from '../src/controller.js';
import { groupVersion } from '../src/kinds.js';
import { createLogger } from '../src/logger.js';
import { webhookServerConfig, withDefaults } from '../src/options.js';
import type { ReconcileContext, Reconciler, Request, Result } from '../src/reconcile.js';
import { createTracing, type Tracing } from '../src/tracing.js';
import { ValidationError, fieldError, validating } from '../src/webhook/admission.js';
import { validatePath } from '../src/webhook/paths.js';
import { WebhookServer } from '../src/webhook/server.js';
import { localKubeConfig } from './local-server.js';
import { admissionReview, makeCertificates, post, tempDir } from './webhook/helpers.js';

const Widget = groupVersion('example.com', 'v1').kind('Widget', { plural: 'widgets' });

/** An API server stand-in: GET answers a Widget, PUT echoes it, a name `missing` is a 404. */
let server: http.Server;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.url?.includes('/missing')) {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound', message: 'not found' }));
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        body ||
          JSON.stringify({
            apiVersion: Widget.apiVersion,
            kind: 'Widget',
            metadata: { name: 'a', namespace: 'default' },
          }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A tracer provider whose spans end in memory; `processors` go before the exporting one. */
function capture(processors: SpanProcessor[] = []) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [...processors, new SimpleSpanProcessor(exporter)],
  });
  return { provider, spans: () => exporter.getFinishedSpans() };
}

/** The OpenTelemetry Node SDK's context manager: spans made inside a reconcile see it as their parent. */
const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});

const lines: string[] = [];
const logger = createLogger({ write: (line) => lines.push(line), level: 'info' });
afterEach(() => {
  lines.length = 0;
});

function tracingOf(provider: { getTracer(name: string): unknown }): Tracing {
  const tracing = createTracing({ enabled: true, tracerProvider: provider }, logger);
  if (!tracing) throw new Error('no tracing');
  return tracing;
}

/** Runs `reconcile` once for default/a on a controller with `tracing`; resolves with its context. */
async function reconcileOnce(
  tracing: Tracing | undefined,
  reconcile: (request: Request, ctx: ReconcileContext) => Promise<Result | void>,
): Promise<ReconcileContext> {
  let seen: ReconcileContext | undefined;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const reconciler: Reconciler = {
    async reconcile(request, ctx) {
      seen = ctx;
      try {
        return await reconcile(request, ctx);
      } finally {
        setImmediate(finished);
      }
    },
  };
  const controller = new Controller({
    name: 'widget',
    kind: 'Widget',
    reconciler,
    logger,
    ...(tracing ? { tracing } : {}),
  });
  controller.queue.add('default/a');
  const running = controller.start();
  await done;
  await controller.stop(1_000);
  await running;
  return seen as ReconcileContext;
}

const byName = (spans: ReadableSpan[], name: string) => {
  const span = spans.find((s) => s.name === name);
  if (!span) throw new Error(`no span ${name} among ${spans.map((s) => s.name).join(', ')}`);
  return span;
};

describe('tracing: reconciles', () => {
  it('makes a span per reconcile with the controller, the object, its reconcileID and its result', async () => {
    const { provider, spans } = capture();
    const ctx = await reconcileOnce(tracingOf(provider), async () => ({ requeueAfter: 5_000 }));
    const span = byName(spans(), 'reconcile Widget');
    expect(span.attributes).toMatchObject({
      'kubesmith.controller': 'widget',
      'kubesmith.namespace': 'default',
      'kubesmith.name': 'a',
      'kubesmith.reconcile_id': ctx.reconcileID,
      'kubesmith.result': 'requeue_after',
      'kubesmith.requeue_after_ms': 5_000,
    });
    expect(span.status.code).toBe(0); // UNSET
    expect(span.parentSpanContext).toBeUndefined();
  });

  it('a failed reconcile is an error span carrying the error message', async () => {
    const { provider, spans } = capture();
    await reconcileOnce(tracingOf(provider), async () => {
      throw new TypeError('the widget is broken');
    });
    const span = byName(spans(), 'reconcile Widget');
    expect(span.status).toEqual({ code: 2, message: 'the widget is broken' }); // ERROR
    expect(span.attributes).toMatchObject({ 'kubesmith.result': 'error', 'error.type': 'TypeError' });
  });

  it('is not a child of the span active where the controller started', async () => {
    const { provider, spans } = capture();
    const outer = provider.getTracer('test').startSpan('main');
    await context.with(trace.setSpan(context.active(), outer), () =>
      reconcileOnce(tracingOf(provider), async () => {}),
    );
    outer.end();
    expect(byName(spans(), 'reconcile Widget').parentSpanContext).toBeUndefined();
  });
});

describe('tracing: API calls', () => {
  it("the reconcile's API calls are its children, with the HTTP client span attributes", async () => {
    const { provider, spans } = capture();
    const tracing = tracingOf(provider);
    const client = new HttpClient(localKubeConfig(server), { tracing });
    const port = (server.address() as { port: number }).port;
    await reconcileOnce(tracing, async (request) => {
      const widget = await client.get(Widget, request.name, request.namespace);
      await client.updateStatus(Widget, { ...widget, metadata: { name: 'a', namespace: 'default' } });
      await client.get(Widget, 'missing', 'default').catch(() => undefined);
    });
    client.close();
    const all = spans();
    const reconcile = byName(all, 'reconcile Widget');
    const get = byName(all, 'GET widgets');
    const put = byName(all, 'PUT widgets/status');
    for (const child of [get, put]) {
      expect(child.parentSpanContext?.spanId).toBe(reconcile.spanContext().spanId);
      expect(child.spanContext().traceId).toBe(reconcile.spanContext().traceId);
      expect(child.kind).toBe(2); // CLIENT
    }
    expect(get.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.full': `http://127.0.0.1:${port}/apis/example.com/v1/namespaces/default/widgets/a`,
      'server.address': '127.0.0.1',
      'server.port': port,
      'http.response.status_code': 200,
    });
    const missing = all.find((s) => s.attributes['url.full']?.toString().endsWith('/missing'));
    expect(missing?.status.code).toBe(2);
    expect(missing?.attributes).toMatchObject({ 'http.response.status_code': 404, 'error.type': '404' });
  });

  it('a reconcile a sampler dropped takes its API calls with it (they are not orphan roots)', async () => {
    const exporter = new InMemorySpanExporter();
    // Drops reconciles, and whatever a dropped span is the parent of; records the rest.
    const sampler: Sampler = {
      shouldSample: (parent, _traceId, name) => {
        const parentSpan = trace.getSpanContext(parent);
        const dropped = parentSpan ? (parentSpan.traceFlags & 1) === 0 : name.startsWith('reconcile');
        return { decision: dropped ? SamplingDecision.NOT_RECORD : SamplingDecision.RECORD_AND_SAMPLED };
      },
      toString: () => 'drop reconciles',
    };
    const provider = new BasicTracerProvider({
      sampler,
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const tracing = tracingOf(provider);
    const client = new HttpClient(localKubeConfig(server), { tracing });
    await reconcileOnce(tracing, async () => {
      await client.get(Widget, 'a', 'default');
    });
    expect(exporter.getFinishedSpans()).toEqual([]);
    await client.get(Widget, 'a', 'default');
    client.close();
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['GET widgets']);
  });

  it('a call outside a reconcile is a root span', async () => {
    const { provider, spans } = capture();
    const client = new HttpClient(localKubeConfig(server), { tracing: tracingOf(provider) });
    await client.list(Widget, { namespace: 'default' }).catch(() => undefined);
    client.close();
    expect(byName(spans(), 'GET widgets').parentSpanContext).toBeUndefined();
  });

  it('names a span by the resource, not by the object', () => {
    expect(resourceOfPath('/api/v1/namespaces/default/pods/web-1')).toBe('pods');
    expect(resourceOfPath('/api/v1/namespaces/default')).toBe('namespaces');
    expect(resourceOfPath('/api/v1/namespaces')).toBe('namespaces');
    expect(resourceOfPath('/apis/apps/v1/namespaces/x/deployments/web/scale')).toBe('deployments/scale');
    expect(resourceOfPath('/apis/example.com/v1/widgets?limit=500')).toBe('widgets');
    expect(resourceOfPath('/apis/example.com/v1/clusterwidgets/a/status')).toBe('clusterwidgets/status');
  });
});

describe('tracing: every OpenTelemetry callback is an exception boundary', () => {
  const throwing: SpanProcessor = {
    onStart: () => {
      throw new Error('onStart exploded');
    },
    onEnd: () => {
      throw new Error('onEnd exploded');
    },
    forceFlush: async () => {},
    shutdown: async () => {},
  };

  it('a span processor that throws costs its span, not the reconcile or its API calls', async () => {
    const { provider } = capture([throwing]);
    const tracing = tracingOf(provider);
    const client = new HttpClient(localKubeConfig(server), { tracing });
    let got: unknown;
    await reconcileOnce(tracing, async () => {
      got = await client.get(Widget, 'a', 'default');
      return {};
    });
    client.close();
    expect(got).toMatchObject({ metadata: { name: 'a' } });
    const errors = lines.filter((line) => line.includes('tracing failed'));
    expect(errors).toHaveLength(1); // logged once, not per span
    expect(lines.some((line) => line.includes('Reconciler error'))).toBe(false);
  });

  it('a tracer that throws costs nothing but its spans', async () => {
    const tracer = {
      startSpan: () => {
        throw new Error('startSpan exploded');
      },
    } as unknown as Tracer;
    const tracing = tracingOf({ getTracer: () => tracer });
    let ran = 0;
    await reconcileOnce(tracing, async () => {
      ran++;
    });
    expect(ran).toBe(1);
    expect(lines.some((line) => line.includes('Reconciler error'))).toBe(false);
  });

  it('an exporter that throws costs nothing but its spans', async () => {
    const exporter = new InMemorySpanExporter();
    exporter.export = () => {
      throw new Error('export exploded');
    };
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    let ran = 0;
    await reconcileOnce(tracingOf(provider), async () => {
      ran++;
    });
    expect(ran).toBe(1);
    expect(lines.some((line) => line.includes('Reconciler error'))).toBe(false);
  });
});

describe('tracing: the option', () => {
  it('is off by default, on with a tracerProvider, and `enabled` decides', () => {
    expect(withDefaults({}).tracing).toEqual({ enabled: false, tracerProvider: undefined });
    const { provider } = capture();
    expect(withDefaults({ tracing: { tracerProvider: provider } }).tracing.enabled).toBe(true);
    expect(withDefaults({ tracing: { tracerProvider: provider, enabled: false } }).tracing.enabled).toBe(
      false,
    );
    expect(withDefaults({ tracing: { enabled: true } }).tracing.enabled).toBe(true);
  });

  it('off, nothing is made: the controller and the client have no tracer', () => {
    expect(createTracing({ enabled: false, tracerProvider: undefined }, logger)).toBeUndefined();
  });
});

describe('tracing: webhook requests', () => {
  const Guestbook = groupVersion('webapp.example.com', 'v1').kind<{ spec: { replicas?: number } }>(
    'Guestbook',
    { plural: 'guestbooks' },
  );
  const VALIDATE = validatePath(Guestbook);
  const object = {
    apiVersion: 'webapp.example.com/v1',
    kind: 'Guestbook',
    metadata: { name: 'g' },
    spec: {},
  };

  async function serve(tracing: Tracing) {
    const dir = tempDir();
    const certs = makeCertificates(dir);
    const server = new WebhookServer(
      webhookServerConfig({ host: '127.0.0.1', port: 0, certDir: dir, logger, tracing, shutdownDelayMs: 0 }),
    );
    server.register(
      VALIDATE,
      validating(Guestbook, {
        validateCreate: (obj) => {
          if (obj.spec.replicas === undefined)
            throw new ValidationError(fieldError.required('spec.replicas'));
          if (obj.spec.replicas < 0) throw new RangeError('the webhook broke');
        },
      }),
    );
    await server.start();
    const call = (body: unknown, headers?: Record<string, string>) =>
      post(server.address!.port, VALIDATE, body, { ca: certs.ca, ...(headers ? { headers } : {}) });
    const stop = async () => {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    };
    return { call, stop };
  }

  it('a review is a server span with its uid, kind, operation and whether it was allowed', async () => {
    const { provider, spans } = capture();
    const { call, stop } = await serve(tracingOf(provider));
    try {
      expect((await call(admissionReview({ object }))).status).toBe(200);
      expect((await call('{}', { 'Content-Type': 'text/plain' })).status).toBe(400);
      expect((await call(admissionReview({ object: { ...object, spec: { replicas: -1 } } }))).status).toBe(
        200,
      );
    } finally {
      await stop();
    }
    const [review, refused, broken] = spans();
    // A denial is the webhook's answer, not an error; a webhook that threw is one.
    expect(review?.status.code).toBe(0);
    expect(broken?.status).toMatchObject({ code: 2, message: expect.stringMatching(/the webhook broke/) });
    expect(broken?.attributes).toMatchObject({ 'error.type': '500', 'http.response.status_code': 200 });
    expect(review?.name).toBe(`AdmissionReview ${VALIDATE}`);
    expect(review?.kind).toBe(1); // SERVER
    expect(review?.attributes).toMatchObject({
      'kubesmith.webhook': VALIDATE,
      'kubesmith.webhook.uid': 'a2b4c6d8-0000-4000-8000-000000000001',
      'kubesmith.webhook.kind': 'Guestbook',
      'kubesmith.webhook.operation': 'CREATE',
      'kubesmith.webhook.allowed': false,
      'kubesmith.namespace': 'default',
      'kubesmith.name': 'g',
      'http.response.status_code': 200,
    });
    expect(refused?.attributes).toMatchObject({ 'http.response.status_code': 400 });
    expect(refused?.attributes['kubesmith.webhook.refused']).toMatch(/expected application\/json/);
  });

  it('a span processor that throws costs the span, not the answer', async () => {
    const failing: SpanProcessor = {
      onStart: () => {
        throw new Error('onStart exploded');
      },
      onEnd: () => {},
      forceFlush: async () => {},
      shutdown: async () => {},
    };
    const { provider } = capture([failing]);
    const { call, stop } = await serve(tracingOf(provider));
    try {
      const reply = await call(admissionReview({ object: { ...object, spec: { replicas: 1 } } }));
      expect(reply.status).toBe(200);
      expect(reply.json).toMatchObject({ response: { allowed: true } });
    } finally {
      await stop();
    }
  });
});
