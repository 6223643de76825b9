/**
 * Faults of watches, through a TCP proxy between an informer and the real API server: a watch that is
 * closed as soon as it opens is reopened with a growing backoff, not in a tight loop; a watch whose
 * connection goes silent (a partition) is given up and reopened within 60 s.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clientNodeInformerFactory, type Informer } from '../../src/cache.js';
import { HttpClient, type Client } from '../../src/client.js';
import type { Envtest } from '../../src/envtest/index.js';
import {
  ConfigMapKind,
  createNamespace,
  eventually,
  memoryLogger,
  startTestEnv,
} from '../integration/helpers.js';
import { FaultProxy } from './proxy.js';

let env: Envtest;
let client: Client;
let proxy: FaultProxy;
let informer: Informer | undefined;

beforeAll(async () => {
  env = await startTestEnv();
  client = new HttpClient(env.kubeConfig);
  proxy = new FaultProxy(Number(new URL(env.server).port));
  await proxy.listen();
}, 90_000);
afterEach(async () => {
  await informer?.stop();
  informer = undefined;
  proxy.cutAfter(undefined);
  proxy.heal();
  proxy.reset();
});
afterAll(async () => {
  await proxy?.close();
  await env?.stop();
}, 30_000);

/** An informer of the ConfigMaps of `ns`, through the proxy, with the runtime's defaults. */
async function startInformer(
  ns: string,
): Promise<{ informer: Informer; added: string[]; lines: Record<string, unknown>[] }> {
  const { logger, lines } = memoryLogger();
  const made = clientNodeInformerFactory(proxy.kubeConfig(env.kubeConfig), logger)(ConfigMapKind, {
    namespace: ns,
  });
  informer = made;
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

describe('a watch closed as soon as it opens', () => {
  it('is reopened with a growing backoff, not in a loop', async () => {
    const ns = await createNamespace(env, 'short');
    const { added, lines } = await startInformer(ns);
    proxy.reset(); // the synced informer's watch ends; from now on every connection lives 30 ms
    proxy.cutAfter(30);
    const before = proxy.connections;
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const connections = proxy.connections - before;
    console.info(`a watch closed at once: ${connections} connections in 10 s (${connections / 10}/s)`);
    // 100 ms doubling, jittered: at most 8 restarts in 10 s (0.05+0.1+0.2+...+6.4 s at the shortest).
    expect(connections).toBeLessThanOrEqual(10);
    expect(lines.some((line) => line['msg'] === 'list or watch failed, restarting')).toBe(true);
    // And once connections live again, the informer catches up.
    proxy.cutAfter(undefined);
    await client.create(ConfigMapKind, configMap(ns, 'after'));
    await eventually(() => added.includes('after'), 'the object created after the fault', 40_000);
  }, 70_000);
});

describe('a watch whose connection goes silent', () => {
  it('is given up and reopened within 60 s, with the default timeouts', async () => {
    const ns = await createNamespace(env, 'silent');
    const { added } = await startInformer(ns);
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
