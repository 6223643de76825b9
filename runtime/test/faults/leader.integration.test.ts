/**
 * A leader whose Lease renewals fail while its other requests still go through (the Lease's RBAC revoked,
 * an admission webhook refusing Lease updates, a flaky path to the API server), on the real API server:
 * once its renew deadline passes it must stop writing at once, before another replica takes the Lease, and
 * exit. The issue measured, before the fence: leadership lost at 9.8 s, a new leader at 16.3 s, and the old
 * leader's last write at 19.0 s (its in-flight reconcile ran on until the graceful shutdown timeout).
 */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../../src/builder.js';
import { HttpClient, type Client, type RequestOptions } from '../../src/client.js';
import type { Envtest } from '../../src/envtest/index.js';
import { ApiError, isLeadershipLost } from '../../src/errors.js';
import type { ResourceKind } from '../../src/kinds.js';
import { LeaseKind } from '../../src/leaderelection.js';
import {
  ConfigMapKind,
  createNamespace,
  eventually,
  runManager,
  startTestEnv,
  type RunningManager,
} from '../integration/helpers.js';

let env: Envtest;

beforeAll(async () => {
  env = await startTestEnv();
}, 90_000);
afterAll(async () => {
  await env?.stop();
}, 30_000);

/** An HttpClient whose Lease updates fail with 403 once `failLeases` is set; everything else passes. */
class LeaseFaultClient extends HttpClient {
  failLeases = false;

  override update<T>(kind: ResourceKind<T>, object: T, options?: RequestOptions): Promise<T> {
    if (this.failLeases && kind.kind === LeaseKind.kind) {
      return Promise.reject(new ApiError(403, 'Forbidden', 'leases.coordination.k8s.io is forbidden'));
    }
    return super.update(kind, object, options);
  }
}

const timing = { leaseDurationMs: 2_000, renewDeadlineMs: 1_000, retryPeriodMs: 200 };

describe('a leader whose Lease renewals fail', () => {
  it('stops writing the moment it loses the Lease, before a new leader, and start() rejects', async () => {
    const ns = await createNamespace(env, 'fence');
    const api: Client = new HttpClient(env.kubeConfig);
    await api.create(ConfigMapKind, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'target', namespace: ns },
    });
    const leaderClient = new LeaseFaultClient(env.kubeConfig);
    /** When (performance.now) each write of the old leader succeeded, and how its reconcile ended. */
    const writes: number[] = [];
    let ended: { signalAborted: boolean; error: unknown } | undefined;

    let old: RunningManager | undefined;
    let next: RunningManager | undefined;
    try {
      old = await runManager(
        env,
        (mgr) => {
          controllerManagedBy(mgr)
            .for(ConfigMapKind)
            .complete({
              // A long reconcile that writes every 50 ms, as one that works through many objects would.
              async reconcile(request, context) {
                let error: unknown;
                for (let beat = 0; !context.signal.aborted && beat < 1_000; beat++) {
                  try {
                    await mgr.client.patch(ConfigMapKind, request.name, request.namespace, {
                      metadata: { annotations: { beat: String(beat) } },
                    });
                    writes.push(performance.now());
                  } catch (err) {
                    error = err;
                    break;
                  }
                  await new Promise((resolve) => setTimeout(resolve, 50));
                }
                ended = { signalAborted: context.signal.aborted, error };
              },
            });
        },
        {
          newClient: () => leaderClient,
          leaderElection: { enabled: true, id: 'fenced', namespace: ns, identity: 'old', ...timing },
          gracefulShutdownTimeoutMs: 10_000,
        },
      );
      await eventually(() => writes.length >= 3, 'the leader to be writing');

      let lostAt = 0;
      old.mgr.leadership.addEventListener('abort', () => (lostAt = performance.now()));
      const cut = performance.now();
      leaderClient.failLeases = true;
      // The other replica, a candidate from now on.
      next = await runManager(env, () => {}, {
        leaderElection: { enabled: true, id: 'fenced', namespace: ns, identity: 'new', ...timing },
        waitReady: false,
        ...timing,
      });

      const outcome = await old.result;
      expect(outcome).toBeInstanceOf(Error);
      expect((outcome as Error).message).toBe('leader election lost');
      await next.mgr.ready();
      const newLeaderAt = performance.now();

      const after = writes.filter((at) => at > lostAt);
      const last = Math.max(...writes);
      console.info(
        `renewals failing from 0 s: leadership lost at ${((lostAt - cut) / 1000).toFixed(2)} s, ` +
          `the old leader's last write at ${((last - cut) / 1000).toFixed(2)} s, ` +
          `a new leader at ${((newLeaderAt - cut) / 1000).toFixed(2)} s, the old manager stopped by then`,
      );
      expect(lostAt).toBeGreaterThan(0);
      expect(lostAt - cut).toBeLessThan(timing.renewDeadlineMs + 2 * timing.retryPeriodMs + 500);
      expect(after).toEqual([]);
      expect(last).toBeLessThan(newLeaderAt);
      // The reconcile in flight saw its signal aborted, and its next write was refused.
      expect(ended?.signalAborted).toBe(true);
      if (ended?.error !== undefined) expect(isLeadershipLost(ended.error)).toBe(true);
      await expect(
        old.mgr.client.patch(ConfigMapKind, 'target', ns, { metadata: { annotations: { late: 'yes' } } }),
      ).rejects.toSatisfy(isLeadershipLost);
      const target = await api.get(ConfigMapKind, 'target', ns);
      expect(target.metadata?.annotations?.['late']).toBeUndefined();
    } finally {
      await old?.mgr.stop();
      await next?.mgr.stop();
    }
  }, 30_000);
});
