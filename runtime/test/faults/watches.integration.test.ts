/**
 * Faults of watches, through a proxy between an informer and the real API server: a watch that is
 * closed as soon as it opens (its connection cut, or its answer ended cleanly by an HTTP proxy) is reopened
 * with client-go's growing backoff, not in a tight loop; a watch whose connection goes silent (a partition)
 * is given up and reopened within 60 s.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, it, type TestContext } from 'vitest';
import { reflectorInformerFactory, type Informer } from '../../src/cache.js';
import { HttpClient, type Client } from '../../src/client.js';
import type { Envtest } from '../../src/envtest/index.js';
import { withDefaults } from '../../src/options.js';
import {
  ConfigMapKind,
  createNamespace,
  eventually,
  memoryLogger,
  startTestEnv,
} from '../integration/helpers.js';
import { FaultProxy, HttpFaultProxy, type ProxiedRequest } from './proxy.js';

// The tests mostly wait (10 s, 12 s, up to 60 s for a timeout): they run at once, each in its own
// namespace, with its own proxies and informer, on the file's one API server.
let env: Envtest;
let client: Client;

beforeAll(async () => {
  env = await startTestEnv();
  client = new HttpClient(env.kubeConfig);
}, 90_000);
afterAll(async () => {
  await env?.stop();
}, 30_000);

/** A TCP fault proxy in front of the API server, closed when the test finishes. */
async function tcpProxy({ onTestFinished }: TestContext): Promise<FaultProxy> {
  const proxy = new FaultProxy(Number(new URL(env.server).port));
  await proxy.listen();
  onTestFinished(() => proxy.close());
  return proxy;
}

/** An HTTP fault proxy in front of the API server, closed when the test finishes. */
async function httpFaultProxy({ onTestFinished }: TestContext): Promise<HttpFaultProxy> {
  const proxy = new HttpFaultProxy(env.kubeConfig);
  await proxy.listen();
  onTestFinished(() => proxy.close());
  return proxy;
}

/**
 * An informer of the ConfigMaps of `ns`, through `through` (a proxy's kubeconfig), with the runtime's
 * defaults; stopped when the test finishes (before its proxy closes).
 */
async function startInformer(
  { onTestFinished }: TestContext,
  ns: string,
  through: KubeConfig,
): Promise<{ informer: Informer; added: string[]; lines: Record<string, unknown>[] }> {
  const { logger, lines } = memoryLogger();
  const made = reflectorInformerFactory(
    through,
    logger,
    withDefaults(),
  )(ConfigMapKind, {
    namespace: ns,
  });
  onTestFinished(() => made.stop());
  const added: string[] = [];
  made.on('add', (object) => added.push(object.metadata?.name ?? ''));
  await made.start();
  return { informer: made, added, lines };
}

const configMap = (ns: string, name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
});

describe.concurrent('a watch closed as soon as it opens', () => {
  it('is reopened with a growing backoff, not in a loop', async (context) => {
    const { expect } = context;
    const ns = await createNamespace(env, 'short');
    const proxy = await tcpProxy(context);
    const { added, lines } = await startInformer(context, ns, proxy.kubeConfig(env.kubeConfig));
    proxy.reset(); // the synced informer's watch ends; from now on every connection lives 30 ms
    proxy.cutAfter(30);
    const before = proxy.connections;
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const connections = proxy.connections - before;
    console.info(`a watch closed at once: ${connections} connections in 10 s (${connections / 10}/s)`);
    // 800 ms doubling, jittered up: at most 4 restarts in 10 s (at 0.8, 2.4, 5.6 and 12 s at the soonest),
    // each on one connection, and the first reconnection.
    expect(connections).toBeLessThanOrEqual(5);
    expect(lines.some((line) => line['msg'] === 'list or watch failed, restarting')).toBe(true);
    // And once connections live again, the informer catches up.
    proxy.cutAfter(undefined);
    await client.create(ConfigMapKind, configMap(ns, 'after'));
    await eventually(() => added.includes('after'), 'the object created after the fault', 40_000);
  }, 70_000);
});

/** The most requests of `requests` within any `windowMs` (each window starting at a request). */
function busiestWindow(requests: readonly ProxiedRequest[], windowMs: number): number {
  return Math.max(
    0,
    ...requests.map((first) => requests.filter((r) => r.at >= first.at && r.at < first.at + windowMs).length),
  );
}

describe.concurrent('a watch the API server answers with an immediate, clean end', () => {
  // The watch that follows the clean end comes at once and is the first ended at once ("very short");
  // then client-go's backoff (0.8 s doubling, each delay up to twice that at random) restarts it at 0.8,
  // 2.4, 5.6 and 12 s at the soonest: 4 requests in the busiest 10 s. Before, 100 ms doubling made 8.
  it('is listed and watched again at most 5 times in the busiest 10 s, as by client-go', async (context) => {
    const { expect } = context;
    const ns = await createNamespace(env, 'ended');
    const httpProxy = await httpFaultProxy(context);
    const { added, lines } = await startInformer(context, ns, httpProxy.kubeConfig());
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const faultAt = performance.now();
    httpProxy.endWatches(path); // the open watch ends (cleanly), and every one after it at once
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    const requests = httpProxy.requests.filter(
      (r) => r.at >= faultAt && r.path === path && r.method === 'GET',
    );
    const busiest = busiestWindow(requests, 10_000);
    console.info(
      `a watch ended at once: ${requests.length} lists and watches in ${((performance.now() - faultAt) / 1000).toFixed(1)} s, ` +
        `${busiest} in the busiest 10 s (${requests.filter((r) => !r.watch).length} lists)`,
    );
    expect(busiest).toBeLessThanOrEqual(5);
    expect(lines.some((line) => line['msg'] === 'list or watch failed, restarting')).toBe(true);
    // Once watches are carried again, the informer catches up.
    httpProxy.endWatches(undefined);
    await client.create(ConfigMapKind, configMap(ns, 'after'));
    await eventually(() => added.includes('after'), 'the object created after the fault', 70_000);
  }, 120_000);
});

describe.concurrent('a watch whose connection goes silent', () => {
  it('is given up and reopened within 60 s, with the default timeouts', async (context) => {
    const { expect } = context;
    const ns = await createNamespace(env, 'silent');
    const proxy = await tcpProxy(context);
    const { added } = await startInformer(context, ns, proxy.kubeConfig(env.kubeConfig));
    // The partition: the open watch carries nothing more, and is not closed.
    proxy.blackhole();
    const silent = performance.now();
    await client.create(ConfigMapKind, configMap(ns, 'unseen'));
    // New connections pass again; the silent one stays silent for good.
    proxy.heal();
    await eventually(() => added.includes('unseen'), 'the object created during the partition', 60_000);
    const noticed = (performance.now() - silent) / 1000;
    console.info(`a silent watch was noticed and reopened after ${noticed.toFixed(1)} s`);
    expect(noticed).toBeLessThan(60);
  }, 90_000);
});
