/**
 * The runtime's OpenTelemetry spans on a real API server (envtest): a reconcile that reads its object from
 * the API server and updates its status is a span whose children are those two API calls, and a
 * validating webhook called by kube-apiserver is a span of its own. The spans are captured in memory,
 * with the context manager the OpenTelemetry Node SDK registers.
 */
import fs from 'node:fs';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../../src/builder.js';
import { HttpClient } from '../../src/client.js';
import type { Envtest } from '../../src/envtest/index.js';
import { resourceKind } from '../../src/kinds.js';
import type { KubernetesObject } from '../../src/types.js';
import { validatePath, validating } from '../../src/webhook/index.js';
import { makeCertificates, tempDir } from '../webhook/helpers.js';
import {
  createNamespace,
  eventually,
  runManager,
  startTestEnv,
  WidgetKind,
  type RunningManager,
  type Widget,
} from './helpers.js';

const ValidatingWebhookConfiguration = resourceKind<KubernetesObject & { webhooks: unknown[] }>({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
});

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();

let env: Envtest;
let client: HttpClient;
let running: RunningManager;
let certDir: string;

beforeAll(async () => {
  context.setGlobalContextManager(contextManager.enable());
  env = await startTestEnv();
  client = new HttpClient(env.kubeConfig);
  certDir = tempDir();
  const caBundle = Buffer.from(makeCertificates(certDir).ca).toString('base64');
  running = await runManager(
    env,
    (mgr) => {
      mgr.webhookServer.register(
        validatePath(WidgetKind),
        validating(WidgetKind, { validateCreate: () => ({}) }),
      );
      controllerManagedBy(mgr)
        .for(WidgetKind)
        .complete({
          async reconcile(request) {
            // From the API server, not the cache: a span of its own.
            const widget = await mgr.apiReader.get(WidgetKind, request.name, request.namespace);
            if (widget.status?.ready) return {};
            await mgr.client.updateStatus(WidgetKind, { ...widget, status: { ready: true } });
            return {};
          },
        });
    },
    {
      webhookServer: { host: '127.0.0.1', port: 0, certDir },
      tracing: { tracerProvider: provider },
    },
  );
  await client.create(ValidatingWebhookConfiguration, {
    metadata: { name: 'tracing-test' },
    webhooks: [
      {
        name: 'vwidget.envtest.kubesmith.dev',
        clientConfig: {
          url: `https://127.0.0.1:${running.mgr.webhookServer.address!.port}${validatePath(WidgetKind)}`,
          caBundle,
        },
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        rules: [
          {
            apiGroups: ['envtest.kubesmith.dev'],
            apiVersions: ['v1'],
            operations: ['CREATE'],
            resources: ['widgets'],
          },
        ],
      },
    ],
  });
}, 120_000);

afterAll(async () => {
  await running?.mgr.stop();
  client?.close();
  await env?.stop();
  if (certDir) fs.rmSync(certDir, { recursive: true, force: true });
  context.disable();
}, 30_000);

const spans = () => exporter.getFinishedSpans();
const childrenOf = (parent: ReadableSpan) =>
  spans().filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId);

describe('tracing on a real API server', () => {
  it("a reconcile is a span whose children are its API calls; the webhook's request is a span", async () => {
    const ns = await createNamespace(env, 'tracing');
    // The API server picks the webhook configuration up through an informer: until then, creates pass
    // by the webhook. Probes are created until one is reviewed.
    let probes = 0;
    await eventually(
      async () => {
        const probe: Widget = {
          apiVersion: WidgetKind.apiVersion,
          kind: 'Widget',
          metadata: { name: `probe-${probes++}`, namespace: ns },
        };
        await client.create(WidgetKind, probe);
        return spans().some((span) => span.name === `AdmissionReview ${validatePath(WidgetKind)}`);
      },
      'the webhook configuration to take effect',
      20_000,
    );

    await client.create(WidgetKind, {
      apiVersion: WidgetKind.apiVersion,
      kind: 'Widget',
      metadata: { name: 'traced', namespace: ns },
      spec: { size: 1 },
    });
    const reconcile = await eventually(
      () =>
        spans().find(
          (span) =>
            span.name === 'reconcile Widget' &&
            span.attributes['kubesmith.name'] === 'traced' &&
            childrenOf(span).some((child) => child.name === 'PUT widgets/status'),
        ),
      'a reconcile span of the Widget with its status update',
      20_000,
    );
    expect(reconcile.attributes).toMatchObject({
      'kubesmith.controller': 'widget',
      'kubesmith.namespace': ns,
      'kubesmith.result': 'success',
    });
    expect(reconcile.attributes['kubesmith.reconcile_id']).toMatch(/^[0-9a-f-]{36}$/);
    const calls = childrenOf(reconcile);
    expect(calls.map((span) => span.name)).toEqual(['GET widgets', 'PUT widgets/status']);
    for (const call of calls) {
      expect(call.spanContext().traceId).toBe(reconcile.spanContext().traceId);
      expect(call.attributes).toMatchObject({
        'server.address': '127.0.0.1',
        'http.response.status_code': 200,
      });
    }
    expect(calls[1]?.attributes['url.full']).toMatch(
      new RegExp(`/apis/envtest\\.kubesmith\\.dev/v1/namespaces/${ns}/widgets/traced/status$`),
    );

    const review = spans().find(
      (span) =>
        span.name === `AdmissionReview ${validatePath(WidgetKind)}` &&
        span.attributes['kubesmith.name'] === 'traced',
    );
    expect(review?.kind).toBe(1); // SERVER
    expect(review?.attributes).toMatchObject({
      'kubesmith.webhook.kind': 'Widget',
      'kubesmith.webhook.operation': 'CREATE',
      'kubesmith.webhook.allowed': true,
      'kubesmith.namespace': ns,
      'http.response.status_code': 200,
    });
    expect(review?.attributes['kubesmith.webhook.uid']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
