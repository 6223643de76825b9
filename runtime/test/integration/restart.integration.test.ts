/**
 * kube-apiserver restarts under a running operator: objects changed after the restart but before the
 * operator's informers have reconnected are all reconciled, none is lost. The operator reaches the API
 * server through a TCP relay the test opens and closes, so "before the watch reconnects" is certain, not
 * a matter of timing.
 */
import net from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../../src/builder.js';
import { reflectorInformerFactory, watchWithBookmarks } from '../../src/cache.js';
import { HttpClient, type Client } from '../../src/client.js';
import type { Envtest } from '../../src/envtest/index.js';
import { isNotFound } from '../../src/errors.js';
import type { ResourceKind } from '../../src/kinds.js';
import { withDefaults } from '../../src/options.js';
import { Reflector } from '../../src/reflector.js';
import type { KubernetesObject } from '../../src/types.js';
import {
  ConfigMapKind,
  createNamespace,
  eventually,
  httpGet,
  memoryLogger,
  runManager,
  startTestEnv,
  WidgetKind,
  type RunningManager,
  type Widget,
} from './helpers.js';

/**
 * A TCP relay to `port` that can refuse connections and cut the ones it carries (block), or carry nothing
 * while keeping every connection open, as a network partition looks to a client (blackhole).
 */
class Relay {
  private readonly server = net.createServer((socket) => this.accept(socket));
  private readonly sockets = new Set<net.Socket>();
  private open = true;
  private silent = false;
  port = 0;

  constructor(private readonly target: number) {}

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  /** Cuts every connection and refuses new ones. */
  block(): void {
    this.open = false;
    for (const socket of this.sockets) socket.destroy();
  }

  unblock(): void {
    this.open = true;
    this.silent = false;
  }

  /** Stops carrying bytes; connections stay open and new ones are accepted, then hang. */
  blackhole(): void {
    this.silent = true;
    for (const socket of this.sockets) {
      socket.unpipe();
      socket.pause();
    }
  }

  async close(): Promise<void> {
    this.block();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: net.Socket): void {
    if (!this.open) {
      client.destroy();
      return;
    }
    if (this.silent) {
      this.sockets.add(client);
      client.pause();
      client.on('error', () => {});
      client.on('close', () => this.sockets.delete(client));
      return;
    }
    const upstream = net.connect(this.target, '127.0.0.1');
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.sockets.add(a);
      a.pipe(b);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        this.sockets.delete(a);
        b.destroy();
      });
    }
  }
}

let env: Envtest;
let client: Client;
let relay: Relay;

beforeAll(async () => {
  env = await startTestEnv();
  client = new HttpClient(env.kubeConfig);
  relay = new Relay(Number(new URL(env.server).port));
  await relay.listen();
}, 90_000);
afterAll(async () => {
  await relay?.close();
  await env?.stop();
}, 30_000);

/** env.kubeConfig with the relay as the server (the certificate names 127.0.0.1, the port does not matter). */
function throughRelay(): KubeConfig {
  const kc = new KubeConfig();
  const cluster = env.kubeConfig.getCurrentCluster()!;
  kc.loadFromOptions({
    clusters: [{ ...cluster, server: `https://127.0.0.1:${relay.port}` }],
    users: env.kubeConfig.getUsers(),
    contexts: env.kubeConfig.getContexts(),
    currentContext: env.kubeConfig.getCurrentContext(),
  });
  return kc;
}

describe('an API server restart', () => {
  let running: RunningManager | undefined;
  afterAll(async () => {
    await running?.mgr.stop();
  });

  it('loses no change made after the restart and before the watch reconnected', async () => {
    const ns = await createNamespace(env, 'restart');
    /** What the reconciler last saw of each widget: its size, or gone. */
    const seen = new Map<string, number | 'gone'>();
    running = await runManager(
      env,
      (mgr) => {
        controllerManagedBy(mgr)
          .for(WidgetKind)
          .complete({
            async reconcile(request) {
              if (request.namespace !== ns) return;
              try {
                const object = await mgr.client.get(WidgetKind, request.name, request.namespace);
                seen.set(request.name, object.spec?.size ?? 0);
              } catch (error) {
                if (!isNotFound(error)) throw error;
                seen.set(request.name, 'gone');
              }
            },
          });
      },
      { kubeConfig: throughRelay() },
    );
    const widget = (name: string, size: number): Widget => ({
      apiVersion: WidgetKind.apiVersion,
      kind: 'Widget',
      metadata: { name, namespace: ns },
      spec: { size },
    });
    const names = Array.from({ length: 10 }, (_, i) => `w${i}`);
    for (const name of names) await client.create(WidgetKind, widget(name, 1));
    await eventually(() => names.every((name) => seen.get(name) === 1), 'every widget reconciled once');

    const down = Date.now();
    // Killed, as a crash (a graceful stop with watches open takes kube-apiserver ~10 s here).
    await env.stopApiServer({ kill: true });
    const stopMs = Date.now() - down;
    relay.block(); // the operator stays disconnected until the test says so
    await env.startApiServer();
    const restartMs = Date.now() - down;

    // Changes the operator's watch cannot have seen: updates, deletes, creates.
    for (const name of names.slice(0, 5)) await client.patch(WidgetKind, name, ns, { spec: { size: 2 } });
    for (const name of names.slice(5, 8)) await client.delete(WidgetKind, name, ns);
    for (const name of ['n0', 'n1', 'n2']) await client.create(WidgetKind, widget(name, 4));
    const changedAt = Date.now();
    relay.unblock();

    const expected = new Map<string, number | 'gone'>([
      ...names.slice(0, 5).map((name) => [name, 2] as const),
      ...names.slice(5, 8).map((name) => [name, 'gone'] as const),
      ...names.slice(8).map((name) => [name, 1] as const),
      ...['n0', 'n1', 'n2'].map((name) => [name, 4] as const),
    ]);
    await eventually(
      () => [...expected].every(([name, value]) => seen.get(name) === value),
      `every change reconciled (seen: ${JSON.stringify(Object.fromEntries(seen))})`,
      40_000,
    );
    const catchUpMs = Date.now() - changedAt;
    console.info(
      `apiserver restart took ${restartMs} ms (stop ${stopMs} ms); the operator caught up ${catchUpMs} ms after unblocking`,
    );

    // And the informer watches again: a new change arrives as an event.
    await client.patch(WidgetKind, 'w9', ns, { spec: { size: 7 } });
    await eventually(() => seen.get('w9') === 7, 'a change after the reconnection to be reconciled');
  }, 90_000);
});

describe('an API server that is away', () => {
  let running: RunningManager | undefined;
  afterEach(async () => {
    await running?.mgr.stop();
    running = undefined;
    await env.startApiServer(); // a no-op when it runs
  }, 60_000);

  it('at start: the manager retries, /readyz says 503, and it runs once the API server is back', async () => {
    const ns = await createNamespace(env, 'late');
    await client.create(WidgetKind, {
      apiVersion: WidgetKind.apiVersion,
      kind: 'Widget',
      metadata: { name: 'waiting', namespace: ns },
    });
    await env.stopApiServer({ kill: true });
    const reconciled: string[] = [];
    running = await runManager(
      env,
      (mgr) => {
        controllerManagedBy(mgr)
          .for(WidgetKind)
          .complete({
            async reconcile(request) {
              if (request.namespace === ns) reconciled.push(request.name);
            },
          });
      },
      { waitReady: false },
    );
    const { mgr, lines } = running;
    await eventually(
      () => lines.some((line) => line['msg'] === 'list or watch failed, restarting'),
      'a logged list failure',
    );
    expect((await httpGet(mgr.addresses.healthProbe, '/readyz')).status).toBe(503);
    expect((await httpGet(mgr.addresses.healthProbe, '/healthz')).status).toBe(200);
    await env.startApiServer();
    await mgr.ready();
    await eventually(() => reconciled.includes('waiting'), 'the widget to be reconciled');
    expect((await httpGet(mgr.addresses.healthProbe, '/readyz')).status).toBe(200);
  }, 60_000);

  it('a leader that cannot renew its Lease within renewDeadline stops: start() rejects', async () => {
    const ns = await createNamespace(env, 'lost');
    running = await runManager(env, () => {}, {
      leaderElection: {
        enabled: true,
        id: 'lost-lease',
        namespace: ns,
        leaseDurationMs: 2_000,
        renewDeadlineMs: 1_000,
        retryPeriodMs: 200,
      },
    });
    expect(running.mgr.leaderElector?.isLeader).toBe(true);
    const down = Date.now();
    await env.stopApiServer({ kill: true });
    const outcome = await running.result;
    const took = Date.now() - down;
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toBe('leader election lost');
    expect(took).toBeLessThan(3_000);
  }, 60_000);
});

describe('a network partition', () => {
  it('a leader whose renewals hang gives up leadership within renewDeadline', async () => {
    const ns = await createNamespace(env, 'partition');
    const run = await runManager(env, () => {}, {
      kubeConfig: throughRelay(),
      leaderElection: {
        enabled: true,
        id: 'partitioned',
        namespace: ns,
        leaseDurationMs: 2_000,
        renewDeadlineMs: 1_000,
        retryPeriodMs: 200,
      },
      gracefulShutdownTimeoutMs: 500,
    });
    try {
      expect(run.mgr.leaderElector?.isLeader).toBe(true);
      const cut = Date.now();
      relay.blackhole();
      // Requests neither fail nor answer. Another replica takes the Lease over after leaseDuration: this
      // one must have stopped reconciling before, or two leaders run at once.
      const outcome = await Promise.race([
        run.result,
        new Promise((resolve) => setTimeout(() => resolve('still running'), 5_000)),
      ]);
      expect(outcome).toBeInstanceOf(Error);
      expect((outcome as Error).message).toBe('leader election lost');
      expect(Date.now() - cut).toBeLessThan(2_000);
    } finally {
      relay.block();
      relay.unblock();
      await run.mgr.stop();
    }
  }, 30_000);
});

describe('watches', () => {
  it('ask for bookmarks, are ended by the server after timeoutSeconds and resumed', async () => {
    const ns = await createNamespace(env, 'bookmarks');
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const watch = watchWithBookmarks(new HttpClient(env.kubeConfig), { timeoutSeconds: 1 });
    const types: string[] = [];
    let ended = false;
    await watch.watch(
      path,
      {},
      (type) => types.push(type),
      () => (ended = true),
    );
    await eventually(() => ended, 'the server to end the watch', 5_000);
    expect(types).toContain('BOOKMARK');

    // A Reflector on it opens a new watch each time the server ends one, from where it was.
    let connects = 0;
    const reflector = new Reflector({
      client: new HttpClient(env.kubeConfig),
      kind: ConfigMapKind as ResourceKind<KubernetesObject>,
      path,
      watcher: {
        watch: (...args) => {
          connects++;
          return watch.watch(...args);
        },
      },
      list: { namespace: ns },
      streamingList: true,
      streamTimeoutMs: 30_000,
    });
    const added: string[] = [];
    reflector.on('add', (object) => added.push(object.metadata?.name ?? ''));
    await reflector.start();
    try {
      await eventually(() => connects >= 2, 'a watch ended by the server and resumed', 5_000);
      await client.create(ConfigMapKind, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'late', namespace: ns },
      });
      await eventually(() => added.includes('late'), 'the object created after the resumptions');
    } finally {
      await reflector.stop();
    }
  }, 30_000);
});

describe('a watch that goes silent', () => {
  it('is given up after its timeout and a grace period, and the informer reconnects', async () => {
    const ns = await createNamespace(env, 'silent');
    // timeoutSeconds 1, grace 500 ms: a watch still open after 1.5 s is dead.
    const informer = reflectorInformerFactory(throughRelay(), memoryLogger().logger, {
      ...withDefaults(),
      watch: { timeoutSeconds: 1, graceMs: 500 },
    })(ConfigMapKind, { namespace: ns });
    const added: string[] = [];
    informer.on('add', (object) => added.push(object.metadata?.name ?? ''));
    await informer.start();
    try {
      // The partition: the open watch and every new connection carry nothing, nothing is closed.
      relay.blackhole();
      await client.create(ConfigMapKind, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'unseen', namespace: ns },
      });
      // It heals for new connections; the old ones stay silent for good.
      relay.unblock();
      await eventually(() => added.includes('unseen'), 'the object created during the partition', 10_000);
    } finally {
      await informer.stop();
      relay.block();
      relay.unblock();
    }
  }, 30_000);
});
