/**
 * Faults of single API requests, through a TCP proxy between the runtime and the real API server:
 * connections are reused (counted at the proxy), a request that never answers fails after its timeout
 * instead of blocking its caller (a reconcile worker) forever, and /readyz stays false while the first
 * list cannot complete.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../../src/builder.js';
import { HttpClient, type Client } from '../../src/client.js';
import type { Envtest } from '../../src/envtest/index.js';
import { RequestTimeoutError } from '../../src/errors.js';
import {
  ConfigMapKind,
  createNamespace,
  eventually,
  httpGet,
  runManager,
  startTestEnv,
  WidgetKind,
  type RunningManager,
  type Widget,
} from '../integration/helpers.js';
import { FaultProxy } from './proxy.js';

let env: Envtest;
let client: Client;
let proxy: FaultProxy;
let running: RunningManager | undefined;

beforeAll(async () => {
  env = await startTestEnv();
  client = new HttpClient(env.kubeConfig);
}, 90_000);
afterEach(async () => {
  await running?.mgr.stop();
  running = undefined;
  await proxy?.close();
}, 30_000);
afterAll(async () => {
  await env?.stop();
}, 30_000);

async function newProxy(): Promise<FaultProxy> {
  proxy = new FaultProxy(Number(new URL(env.server).port));
  await proxy.listen();
  return proxy;
}

describe('connections', () => {
  it('are kept alive: 100 requests in a row take one TCP connection', async () => {
    const ns = await createNamespace(env, 'keepalive');
    const via = new HttpClient((await newProxy()).kubeConfig(env.kubeConfig));
    await via.create(ConfigMapKind, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: ns },
    });
    for (let i = 0; i < 99; i++) await via.get(ConfigMapKind, 'c', ns);
    console.info(`100 requests: ${proxy.connections} TCP connection(s)`);
    expect(proxy.connections).toBe(1);
    via.close();
  });
});

describe('a request that never answers', () => {
  it('fails after its timeout, and the next request does not reuse its silent connection', async () => {
    const ns = await createNamespace(env, 'timeout');
    const via = new HttpClient((await newProxy()).kubeConfig(env.kubeConfig), { timeoutMs: 500 });
    await via.list(ConfigMapKind, { namespace: ns }); // a kept-alive connection, black-holed below
    proxy.blackhole();
    const started = performance.now();
    const error = await via.get(ConfigMapKind, 'c', ns).catch((err: unknown) => err);
    const took = performance.now() - started;
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect((error as Error).message).toBe('get ConfigMap c: no answer from the API server within 500 ms');
    expect(took).toBeGreaterThanOrEqual(490);
    expect(took).toBeLessThan(2_000);
    // A call's own timeout wins over the client's.
    const own = performance.now();
    await expect(via.list(ConfigMapKind, { namespace: ns, timeoutMs: 200 })).rejects.toThrow(/within 200 ms/);
    expect(performance.now() - own).toBeLessThan(1_000);
    proxy.heal();
    await expect(via.list(ConfigMapKind, { namespace: ns })).resolves.toEqual([]);
    via.close();
  });

  it('in a reconcile: fails it, is logged, and the object is requeued and reconciled once it answers', async () => {
    const ns = await createNamespace(env, 'blocked');
    await newProxy();
    const reconciled = new Set<string>();
    // Informers talk to the API server directly; the reconciler's writes go through the proxy.
    running = await runManager(
      env,
      (mgr) => {
        controllerManagedBy(mgr)
          .for(WidgetKind)
          .complete({
            async reconcile(request) {
              if (request.namespace !== ns) return;
              await mgr.client.patch(WidgetKind, request.name, ns, {
                metadata: { annotations: { reconciled: 'true' } },
              });
              reconciled.add(request.name);
            },
          });
      },
      { newClient: () => new HttpClient(proxy.kubeConfig(env.kubeConfig), { timeoutMs: 1_000 }) },
    );
    proxy.blackhole();
    const names = ['w0', 'w1', 'w2', 'w3', 'w4'];
    for (const name of names) {
      await client.create(WidgetKind, {
        apiVersion: WidgetKind.apiVersion,
        kind: 'Widget',
        metadata: { name, namespace: ns },
      } satisfies Widget);
    }
    const { lines } = running;
    await eventually(
      () =>
        lines.filter(
          (line) =>
            line['msg'] === 'Reconciler error' &&
            line['namespace'] === ns &&
            /no answer from the API server within 1000 ms/.test(JSON.stringify(line['error'])),
        ).length >= 2,
      'two reconciles failed by the timeout, logged',
      10_000,
    );
    expect(reconciled.size).toBe(0);
    proxy.heal();
    const healed = performance.now();
    await eventually(() => reconciled.size === names.length, 'every widget reconciled', 30_000);
    console.info(
      `all 5 reconciled ${Math.round(performance.now() - healed)} ms after the API answered again`,
    );
    for (const name of names) {
      const widget = await client.get(WidgetKind, name, ns);
      expect(widget.metadata?.annotations?.['reconciled']).toBe('true');
    }
  }, 60_000);
});

describe('/readyz', () => {
  it('is 503 while the first list cannot complete, and 200 once the caches have synced', async () => {
    await newProxy();
    proxy.blackhole();
    running = await runManager(
      env,
      (mgr) =>
        controllerManagedBy(mgr)
          .for(WidgetKind)
          .complete({ reconcile: async () => {} }),
      {
        kubeConfig: proxy.kubeConfig(env.kubeConfig),
        client: { timeoutMs: 1_000 },
        waitReady: false,
      },
    );
    const { mgr, lines } = running;
    await eventually(
      () => lines.some((line) => line['msg'] === 'list or watch failed, restarting'),
      'a list that timed out, logged',
      10_000,
    );
    expect((await httpGet(mgr.addresses.healthProbe, '/readyz')).status).toBe(503);
    expect((await httpGet(mgr.addresses.healthProbe, '/healthz')).status).toBe(200);
    proxy.heal();
    await Promise.race([
      mgr.ready(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('not ready 20 s after healing')), 20_000)),
    ]);
    expect((await httpGet(mgr.addresses.healthProbe, '/readyz')).status).toBe(200);
  }, 60_000);
});
