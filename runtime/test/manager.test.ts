import { Counter } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { controllerManagedBy } from '../src/builder.js';
import { ManualInformer } from '../src/testing/informer.js';
import { groupVersion } from '../src/kinds.js';
import { createLogger } from '../src/logger.js';
import { Manager, parseBindAddress } from '../src/manager.js';
import type { Request } from '../src/reconcile.js';
import { FakeClient } from '../src/testing/index.js';

const Guestbook = groupVersion('webapp.example.com', 'v1').kind('Guestbook', { plural: 'guestbooks' });

/** A manager on loopback ports, with informers whose first list completes when `sync()` is called. */
function testManager() {
  const informer = new ManualInformer([
    { apiVersion: Guestbook.apiVersion, kind: 'Guestbook', metadata: { name: 'g', namespace: 'default' } },
  ]);
  let sync!: () => void;
  const synced = new Promise<void>((resolve) => (sync = resolve));
  const start = informer.start.bind(informer);
  informer.start = async () => {
    await synced;
    await start();
  };
  const mgr = Manager.create({
    newClient: () => new FakeClient(),
    newInformer: () => informer,
    metrics: { bindAddress: '127.0.0.1:0' },
    healthProbeBindAddress: '127.0.0.1:0',
    logger: createLogger({ write: () => {} }),
  });
  return { mgr, informer, sync };
}

/** A manager on `informer` with a Guestbook controller, its servers on 127.0.0.1 (metrics at `metricsAddress`). */
function guestbookManager(informer: ManualInformer, metricsAddress = '127.0.0.1:0'): Manager {
  const mgr = Manager.create({
    newClient: () => new FakeClient(),
    newInformer: () => informer,
    metrics: { bindAddress: metricsAddress },
    healthProbeBindAddress: '127.0.0.1:0',
    handleSignals: false,
    logger: createLogger({ write: () => {} }),
  });
  controllerManagedBy(mgr)
    .for(Guestbook)
    .complete({ reconcile: async () => {} });
  return mgr;
}

async function get(port: number | undefined, path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, body: await response.text() };
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('Manager', () => {
  it('is alive at once, ready once the caches have synced, and reconciles', async () => {
    const { mgr, sync } = testManager();
    const calls: Request[] = [];
    controllerManagedBy(mgr)
      .for(Guestbook)
      .complete({ reconcile: async (request) => void calls.push(request) });
    const running = mgr.start();
    await waitFor(() => mgr.addresses.healthProbe !== undefined);
    const probes = mgr.addresses.healthProbe?.port;
    expect(await get(probes, '/healthz')).toEqual({ status: 200, body: 'ok\n' });
    expect((await get(probes, '/readyz')).status).toBe(503);
    sync();
    await mgr.ready();
    expect(await get(probes, '/readyz')).toEqual({ status: 200, body: 'ok\n' });
    await waitFor(() => calls.length > 0);
    expect(calls).toEqual([{ namespace: 'default', name: 'g' }]);
    const metrics = await get(mgr.addresses.metrics?.port, '/metrics');
    expect(metrics.body).toMatch(
      /^controller_runtime_reconcile_total\{controller="guestbook",result="success"\} 1$/m,
    );
    expect(metrics.body).toMatch(/^# TYPE workqueue_adds_total counter$/m);
    await mgr.stop();
    await running;
  });

  it('stops on SIGTERM: start() resolves and the servers are closed', async () => {
    const { mgr, sync } = testManager();
    sync();
    const running = mgr.start();
    await mgr.ready();
    const port = mgr.addresses.healthProbe?.port;
    process.emit('SIGTERM', 'SIGTERM');
    await running;
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    expect(process.listenerCount('SIGTERM')).toBe(0);
  });

  it('says which address it cannot bind', async () => {
    const { mgr: first, sync } = testManager();
    sync();
    const running = first.start();
    await first.ready();
    const taken = first.addresses.healthProbe?.port;
    const second = Manager.create({
      newClient: () => new FakeClient(),
      newInformer: () => new ManualInformer(),
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: `127.0.0.1:${taken}`,
      handleSignals: false,
      logger: createLogger({ write: () => {} }),
    });
    await expect(second.start()).rejects.toThrow(`cannot serve healthProbe on 127.0.0.1:${taken}`);
    await first.stop();
    await running;
  });

  it('starts its caches while its probe and metrics servers bind, and is ready once both listen', async () => {
    // The informers' first connection and list need not wait for the servers (controller-runtime starts
    // its HTTP servers in goroutines of their own): a start to synced caches is that much shorter.
    const { mgr, informer, sync } = testManager();
    const listeningAtCacheStart: unknown[] = [];
    const start = informer.start.bind(informer);
    informer.start = () => {
      listeningAtCacheStart.push(mgr.addresses.healthProbe, mgr.addresses.metrics);
      return start();
    };
    controllerManagedBy(mgr)
      .for(Guestbook)
      .complete({ reconcile: async () => {} });
    sync();
    const running = mgr.start();
    await mgr.ready();
    expect(listeningAtCacheStart).toEqual([undefined, undefined]);
    expect(mgr.addresses.healthProbe?.port).toBeGreaterThan(0);
    expect((await get(mgr.addresses.metrics?.port, '/metrics')).status).toBe(200);
    expect(await get(mgr.addresses.healthProbe?.port, '/readyz')).toEqual({ status: 200, body: 'ok\n' });
    await mgr.stop();
    await running;
  });

  it('stops the informers it started when a server cannot bind', async () => {
    const { mgr: first, sync } = testManager();
    sync();
    const running = first.start();
    await first.ready();
    const taken = first.addresses.metrics?.port;
    // An informer that never syncs: the failed bind must not wait for it.
    const informer = new ManualInformer();
    informer.start = () => {
      informer.started = true;
      return new Promise<void>(() => {});
    };
    const second = guestbookManager(informer, `127.0.0.1:${taken}`);
    await expect(second.start()).rejects.toThrow(`127.0.0.1:${taken}`);
    expect(informer.started).toBe(false);
    await first.stop();
    await running;
  });

  it('closes the probe and metrics servers still binding when its caches fail to start', async () => {
    // The caches do not wait for the servers: a cache that fails at once must not leave a server to
    // start listening after the stop, keeping the process alive.
    const informer = new ManualInformer();
    informer.start = () => Promise.reject(new Error('cannot list guestbooks'));
    const mgr = guestbookManager(informer);
    await expect(mgr.start()).rejects.toThrow('cannot list guestbooks');
    // Both servers bound (by the time start() failed, or just after): both must be closed.
    await waitFor(() => mgr.addresses.healthProbe !== undefined && mgr.addresses.metrics !== undefined);
    for (const address of [mgr.addresses.healthProbe, mgr.addresses.metrics]) {
      expect(address?.port).toBeGreaterThan(0);
      await expect(fetch(`http://127.0.0.1:${address?.port}/healthz`)).rejects.toThrow();
    }
  });

  it('keeps a registry per manager: two managers in one process, user metrics and process metrics on /metrics', async () => {
    const one = testManager();
    const two = testManager();
    for (const { mgr } of [one, two]) {
      controllerManagedBy(mgr)
        .for(Guestbook)
        .complete({ reconcile: async () => {} });
    }
    const synced = new Counter({
      name: 'guestbooks_synced_total',
      help: 'Guestbooks synced.',
      registers: [one.mgr.metrics.registry],
    });
    synced.inc(3);
    one.sync();
    two.sync();
    const running = [one.mgr.start(), two.mgr.start()];
    await Promise.all([one.mgr.ready(), two.mgr.ready()]);
    for (const { mgr } of [one, two]) {
      await vi.waitFor(async () =>
        expect(
          await mgr.metrics.value('controller_runtime_reconcile_total', {
            controller: 'guestbook',
            result: 'success',
          }),
        ).toBe(1),
      );
    }
    const body = async (mgr: Manager) => (await get(mgr.addresses.metrics?.port, '/metrics')).body;
    const first = await body(one.mgr);
    const second = await body(two.mgr);
    for (const text of [first, second]) {
      expect(text).toMatch(
        /^controller_runtime_reconcile_total\{controller="guestbook",result="success"\} 1$/m,
      );
      expect(text).toMatch(
        /^controller_runtime_reconcile_total\{controller="guestbook",result="error"\} 0$/m,
      );
      expect(text).toMatch(/^controller_runtime_max_concurrent_reconciles\{controller="guestbook"\} 1$/m);
      expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    }
    expect(first).toMatch(/^guestbooks_synced_total 3$/m);
    expect(second).not.toContain('guestbooks_synced_total');
    await Promise.all([one.mgr.stop(), two.mgr.stop()]);
    await Promise.all(running);
  });

  it('parses bind addresses', () => {
    expect(parseBindAddress(':8080')).toEqual({ host: undefined, port: 8080 });
    expect(parseBindAddress('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(() => parseBindAddress('localhost')).toThrow(/invalid bind address/);
  });
});
