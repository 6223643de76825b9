import { describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../src/builder.js';
import { ManualInformer } from '../src/testing/informer.js';
import { groupVersion } from '../src/kinds.js';
import { inClusterNamespace, LeaseKind, type LeaderElectionOptions } from '../src/leaderelection.js';
import { createLogger } from '../src/logger.js';
import { LeadershipLostError } from '../src/errors.js';
import type { RequestOptions } from '../src/client.js';
import type { ResourceKind } from '../src/kinds.js';
import { Manager } from '../src/manager.js';
import type { Request } from '../src/reconcile.js';
import { FakeClient } from '../src/testing/index.js';

const Guestbook = groupVersion('webapp.example.com', 'v1').kind('Guestbook', { plural: 'guestbooks' });

/** A replica: a manager with leader election on short timings, sharing `client` with the others. */
function replica(client: FakeClient, identity: string, leaderElection: LeaderElectionOptions = {}) {
  const calls: Request[] = [];
  const mgr = Manager.create({
    newClient: () => client,
    newInformer: () =>
      new ManualInformer([
        {
          apiVersion: Guestbook.apiVersion,
          kind: 'Guestbook',
          metadata: { name: 'g', namespace: 'default' },
        },
      ]),
    metrics: { bindAddress: '0' },
    healthProbeBindAddress: '0',
    handleSignals: false,
    logger: createLogger({ write: () => {} }),
    leaderElection: {
      enabled: true,
      id: 'op.example.com',
      namespace: 'system',
      identity,
      leaseDurationMs: 1_000,
      renewDeadlineMs: 200,
      retryPeriodMs: 20,
      ...leaderElection,
    },
  });
  controllerManagedBy(mgr)
    .for(Guestbook)
    .complete({ reconcile: async (request) => void calls.push(request) });
  return { mgr, calls };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await sleep(5);
}

/** A FakeClient whose creates of Guestbooks wait for `open()`: a write the API server is still answering. */
class SlowWrites extends FakeClient {
  open: () => void = () => {};
  private readonly gate = new Promise<void>((resolve) => (this.open = resolve));
  override async create<T>(kind: ResourceKind<T>, object: T, options?: RequestOptions): Promise<T> {
    if (kind.kind === 'Guestbook') await this.gate;
    return super.create(kind, object, options);
  }
}

describe('Manager with leader election', () => {
  it("lands a stopping leader's writes in flight, refuses new ones, and only then gives its Lease up", async () => {
    // Leader-only work outside the controllers (the self-signed certificates' loop) writes with mgr.client.
    // Had the Lease gone first, the next leader could write before this replica's late write undid it.
    const client = new SlowWrites();
    const one = replica(client, 'one');
    const running = one.mgr.start();
    await one.mgr.ready();
    const guestbook = (name: string) => ({
      apiVersion: Guestbook.apiVersion,
      kind: 'Guestbook',
      metadata: { name, namespace: 'default' },
    });
    const inFlight = one.mgr.client.create(Guestbook, guestbook('written-while-leading'));
    const stopping = one.mgr.stop();
    await sleep(100);
    const holder = async () => (await client.get(LeaseKind, 'op.example.com', 'system')).spec?.holderIdentity;
    expect(await holder()).toBe('one');
    expect(one.mgr.leadership.aborted).toBe(false);
    await expect(one.mgr.client.create(Guestbook, guestbook('late'))).rejects.toBeInstanceOf(
      LeadershipLostError,
    );

    client.open();
    await expect(inFlight).resolves.toMatchObject({ metadata: { name: 'written-while-leading' } });
    await stopping;
    await running;
    expect(one.mgr.leadership.aborted).toBe(true);
    expect(await holder()).toBe('');
    expect((await client.list(Guestbook)).map((g) => g.metadata?.name)).toEqual(['written-while-leading']);
  });

  it('runs the controllers on one replica only, and hands over on a graceful stop', async () => {
    const client = new FakeClient();
    const one = replica(client, 'one');
    const two = replica(client, 'two');
    const runningOne = one.mgr.start();
    await one.mgr.ready();
    const runningTwo = two.mgr.start();
    await waitFor(() => one.calls.length > 0);
    await sleep(150);
    expect(one.calls).toEqual([{ namespace: 'default', name: 'g' }]);
    expect(two.calls).toEqual([]);
    expect(await one.mgr.metrics.value('leader_election_master_status', { name: 'op.example.com' })).toBe(1);
    expect(await two.mgr.metrics.value('leader_election_master_status', { name: 'op.example.com' })).toBe(0);

    await one.mgr.stop();
    await runningOne;
    await two.mgr.ready(); // well before the 1 s lease would have expired: one released it
    await waitFor(() => two.calls.length > 0);
    expect(two.calls).toEqual([{ namespace: 'default', name: 'g' }]);
    expect((await client.get(LeaseKind, 'op.example.com', 'system')).spec?.holderIdentity).toBe('two');
    await two.mgr.stop();
    await runningTwo;
  });

  it('stops, and start() rejects, when the leader cannot renew its Lease', async () => {
    const client = new FakeClient();
    const one = replica(client, 'one');
    const running = one.mgr.start();
    await one.mgr.ready();
    const lease = await client.get(LeaseKind, 'op.example.com', 'system');
    await client.update(LeaseKind, { ...lease, spec: { ...lease.spec, holderIdentity: 'intruder' } });
    await expect(running).rejects.toThrow('leader election lost');
  });

  it('a standby replica stops cleanly while it waits for the Lease', async () => {
    const client = new FakeClient();
    const one = replica(client, 'one');
    const two = replica(client, 'two');
    const runningOne = one.mgr.start();
    await one.mgr.ready();
    const runningTwo = two.mgr.start();
    await sleep(50);
    await two.mgr.stop();
    await runningTwo;
    expect(two.calls).toEqual([]);
    expect((await client.get(LeaseKind, 'op.example.com', 'system')).spec?.holderIdentity).toBe('one');
    await one.mgr.stop();
    await runningOne;
  });

  it('needs a Lease name', () => {
    expect(() => replica(new FakeClient(), 'x', { id: undefined })).toThrow(/leaderElection needs an id/);
  });

  it.skipIf(inClusterNamespace() !== undefined)('needs a Lease namespace outside a cluster', () => {
    expect(() => replica(new FakeClient(), 'x', { namespace: undefined })).toThrow(
      /set leaderElection\.namespace/,
    );
  });
});
