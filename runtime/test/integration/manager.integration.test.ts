/**
 * The manager on a real API server: probes and metrics, readiness only once the caches have synced,
 * graceful shutdown that lets an in-flight reconcile finish, and leader election between two managers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../../src/builder.js';
import { HttpClient, type Client } from '../../src/client.js';
import type { Envtest } from '../../src/envtest/index.js';
import { groupVersion, resourceKind } from '../../src/kinds.js';
import type { Manager } from '../../src/manager.js';
import type { Request } from '../../src/reconcile.js';
import {
  createNamespace,
  eventually,
  gate,
  httpGet,
  runManager,
  startTestEnv,
  WidgetKind,
  type RunningManager,
  type Widget,
} from './helpers.js';

let env: Envtest;
let client: Client;

beforeAll(async () => {
  env = await startTestEnv();
  client = new HttpClient(env.kubeConfig);
}, 90_000);
afterAll(async () => {
  await env?.stop();
}, 30_000);

function widget(ns: string, name: string): Widget {
  return {
    apiVersion: WidgetKind.apiVersion,
    kind: 'Widget',
    metadata: { name, namespace: ns },
    spec: { size: 1 },
  };
}

describe('probes and metrics', () => {
  it('/readyz is 503 until the caches have synced (a CRD installed late), /healthz 200 from the start', async () => {
    const group = 'late.kubesmith.dev';
    const SprocketKind = groupVersion(group, 'v1').kind('Sprocket', { plural: 'sprockets' });
    const reconciled: Request[] = [];
    const run = await runManager(
      env,
      (mgr) => {
        controllerManagedBy(mgr)
          .for(SprocketKind)
          .complete({
            async reconcile(request) {
              reconciled.push(request);
            },
          });
      },
      { waitReady: false },
    );
    try {
      const { mgr } = run;
      await eventually(() => mgr.addresses.healthProbe, 'the probe server to listen');
      expect((await httpGet(mgr.addresses.healthProbe, '/healthz')).status).toBe(200);
      const notReady = await eventually(async () => {
        const answer = await httpGet(mgr.addresses.healthProbe, '/readyz');
        // Wait until the list has failed at least once (404: no such resource yet).
        return run.lines.some((line) => line['msg'] === 'list or watch failed, restarting')
          ? answer
          : undefined;
      }, 'a failed list');
      expect(notReady.status).toBe(503);

      const CrdKind = resourceKind({
        group: 'apiextensions.k8s.io',
        version: 'v1',
        kind: 'CustomResourceDefinition',
        plural: 'customresourcedefinitions',
        namespaced: false,
      });
      await client.create(CrdKind, {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: `sprockets.${group}` },
        spec: {
          group,
          names: { kind: 'Sprocket', listKind: 'SprocketList', plural: 'sprockets', singular: 'sprocket' },
          scope: 'Namespaced',
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            },
          ],
        },
      } as never);
      await mgr.ready();
      expect((await httpGet(mgr.addresses.healthProbe, '/readyz')).status).toBe(200);
      await client.create(SprocketKind, {
        apiVersion: SprocketKind.apiVersion,
        kind: 'Sprocket',
        metadata: { name: 's1', namespace: 'default' },
      });
      await eventually(() => reconciled.length > 0, 'the sprocket to be reconciled');
      expect(reconciled[0]).toEqual({ namespace: 'default', name: 's1' });
    } finally {
      await run.mgr.stop();
    }
  });

  it('/metrics serves controller-runtime series names', async () => {
    const ns = await createNamespace(env, 'metrics');
    let calls = 0;
    const run = await runManager(env, (mgr) => {
      controllerManagedBy(mgr)
        .for(WidgetKind)
        .complete({
          async reconcile(request) {
            if (request.namespace !== ns) return;
            calls++;
            if (calls === 1) throw new Error('first attempt fails');
          },
        });
    });
    try {
      await client.create(WidgetKind, widget(ns, 'measured'));
      await eventually(() => calls >= 2, 'a failed and a successful reconcile');
      const { status, body } = await httpGet(run.mgr.addresses.metrics, '/metrics');
      expect(status).toBe(200);
      for (const series of [
        'controller_runtime_reconcile_total{controller="widget",result="success"}',
        'controller_runtime_reconcile_total{controller="widget",result="error"} 1',
        'controller_runtime_reconcile_errors_total{controller="widget"} 1',
        // prom-client writes `le` first; Prometheus does not care about the order of labels.
        'controller_runtime_reconcile_time_seconds_bucket{le="0.005",controller="widget"}',
        'controller_runtime_reconcile_time_seconds_count{controller="widget"}',
        'workqueue_depth{name="widget"}',
        'workqueue_adds_total{name="widget"}',
        'workqueue_retries_total{name="widget"} 1',
        'workqueue_queue_duration_seconds_bucket{le="+Inf",name="widget"}',
      ]) {
        expect(body).toContain(series);
      }
      expect(body).toContain('# TYPE controller_runtime_reconcile_total counter');
      expect(body).toContain('# TYPE controller_runtime_reconcile_time_seconds histogram');
    } finally {
      await run.mgr.stop();
    }
  });
});

describe('graceful shutdown', () => {
  it('stop() lets an in-flight reconcile finish, including its writes, before it resolves', async () => {
    const ns = await createNamespace(env, 'shutdown');
    const started = gate();
    const release = gate();
    const order: string[] = [];
    const run = await runManager(env, (mgr) => {
      controllerManagedBy(mgr)
        .for(WidgetKind)
        .complete({
          async reconcile(request) {
            if (request.namespace !== ns) return;
            started.open();
            await release.promise;
            const object = await client.get(WidgetKind, request.name, request.namespace);
            await client.updateStatus(WidgetKind, { ...object, status: { ready: true } });
            order.push('reconcile finished');
          },
        });
    });
    await client.create(WidgetKind, widget(ns, 'slow'));
    await started.promise;
    const stopped = run.mgr.stop().then(() => order.push('stop resolved'));
    setTimeout(release.open, 200);
    await stopped;
    expect(order).toEqual(['reconcile finished', 'stop resolved']);
    expect((await client.get(WidgetKind, 'slow', ns)).status?.ready).toBe(true);
    expect(await run.result).toBe('stopped');
  });

  it('gives up on a reconcile that outlives gracefulShutdownTimeoutMs', async () => {
    const ns = await createNamespace(env, 'deadline');
    const started = gate();
    const run = await runManager(
      env,
      (mgr) => {
        controllerManagedBy(mgr)
          .for(WidgetKind)
          .complete({
            async reconcile(request) {
              if (request.namespace !== ns) return;
              started.open();
              await new Promise(() => {}); // never ends
            },
          });
      },
      { gracefulShutdownTimeoutMs: 300 },
    );
    await client.create(WidgetKind, widget(ns, 'stuck'));
    await started.promise;
    const begun = Date.now();
    await run.mgr.stop();
    const took = Date.now() - begun;
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(3_000);
    expect(
      run.lines.some((line) => line['msg'] === 'reconciles still running at the shutdown deadline'),
    ).toBe(true);
  });
});

describe('leader election', () => {
  const leaseDurationMs = 2_000;
  const retryPeriodMs = 200;

  async function candidates(ns: string, id: string, releaseOnCancel: boolean) {
    const calls: Record<'a' | 'b', Request[]> = { a: [], b: [] };
    const start = (name: 'a' | 'b') =>
      runManager(
        env,
        (mgr: Manager) => {
          controllerManagedBy(mgr)
            .for(WidgetKind)
            .complete({
              async reconcile(request) {
                if (request.namespace === ns) calls[name].push(request);
              },
            });
        },
        {
          waitReady: false,
          leaderElection: {
            enabled: true,
            id,
            namespace: ns,
            identity: name,
            leaseDurationMs,
            renewDeadlineMs: 1_500,
            retryPeriodMs,
            releaseOnCancel,
          },
        },
      );
    const a = await start('a');
    await a.mgr.ready();
    const b = await start('b');
    // b's caches sync and its probe says ready, but it does not lead.
    await eventually(
      async () => (await httpGet(b.mgr.addresses.healthProbe, '/readyz')).status === 200,
      'the standby to be ready',
    );
    return { a, b, calls };
  }

  async function stopAll(...runs: RunningManager[]): Promise<void> {
    await Promise.all(runs.map((run) => run.mgr.stop()));
  }

  it('only the leader reconciles; when it stops, the other takes over at once (lease released)', async () => {
    const ns = await createNamespace(env, 'leader');
    const { a, b, calls } = await candidates(ns, 'released', true);
    try {
      for (const name of ['one', 'two', 'three']) await client.create(WidgetKind, widget(ns, name));
      await eventually(() => calls.a.length >= 3, 'the leader to reconcile three widgets');
      expect(b.mgr.leaderElector?.isLeader).toBe(false);
      expect(calls.b).toEqual([]);
      const leaderMetrics = (await httpGet(a.mgr.addresses.metrics, '/metrics')).body;
      expect(leaderMetrics).toContain('leader_election_master_status{name="released"} 1');

      const stoppedAt = Date.now();
      await a.mgr.stop();
      await b.mgr.ready();
      const takeover = Date.now() - stoppedAt;
      expect(takeover).toBeLessThan(leaseDurationMs);
      // The new leader reconciles every object once its controllers start.
      await eventually(() => calls.b.length >= 3, 'the new leader to reconcile the widgets');
      await client.create(WidgetKind, widget(ns, 'four'));
      await eventually(
        () => calls.b.some((c) => c.name === 'four'),
        'the new leader to reconcile a new widget',
      );
      expect(calls.a.some((c) => c.name === 'four')).toBe(false);
    } finally {
      await stopAll(a, b);
    }
  });

  it('a leader that vanishes without releasing is replaced once its lease has expired', async () => {
    const ns = await createNamespace(env, 'expiry');
    const { a, b, calls } = await candidates(ns, 'crashed', false);
    try {
      await client.create(WidgetKind, widget(ns, 'one'));
      await eventually(() => calls.a.length >= 1, 'the leader to reconcile');
      const stoppedAt = Date.now();
      await a.mgr.stop(); // keeps the Lease as a crashed process would
      await b.mgr.ready();
      const takeover = Date.now() - stoppedAt;
      // Not before the lease ran out (less one renewal period), not long after.
      expect(takeover).toBeGreaterThanOrEqual(leaseDurationMs - 2 * retryPeriodMs);
      expect(takeover).toBeLessThan(leaseDurationMs + 4 * retryPeriodMs);
      await eventually(() => calls.b.length >= 1, 'the new leader to reconcile');
    } finally {
      await stopAll(a, b);
    }
  });
});
