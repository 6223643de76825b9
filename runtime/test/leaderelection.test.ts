import { describe, expect, it } from 'vitest';
import { LeaderElector, LeaseKind, microTime } from '../src/leaderelection.js';
import { createLogger } from '../src/logger.js';
import { FakeClient } from '../src/testing/index.js';
import { ManualClock } from './fake-clock.js';

const logger = createLogger({ write: () => {} });

function elector(client: FakeClient, clock: ManualClock, identity: string, releaseOnStop = true) {
  return new LeaderElector({
    client,
    name: 'op.example.com',
    namespace: 'system',
    identity,
    clock,
    logger,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    releaseOnStop,
  });
}

/** Moves the manual clock in steps, letting the client's promises settle between them. */
async function run(clock: ManualClock, ms: number, step = 100): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    clock.advance(step);
    await settle();
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}

function leaseOf(client: FakeClient) {
  return client.get(LeaseKind, 'op.example.com', 'system');
}

describe('LeaderElector', () => {
  it('creates the Lease when there is none and holds it', async () => {
    const client = new FakeClient();
    const clock = new ManualClock();
    clock.advance(1_700_000_000_000);
    const a = elector(client, clock, 'a');
    expect(await a.acquire()).toBe(true);
    expect(a.isLeader).toBe(true);
    expect((await leaseOf(client)).spec).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: '2023-11-14T22:13:20.000000Z',
      renewTime: '2023-11-14T22:13:20.000000Z',
      leaseTransitions: 0,
    });
    await a.stop();
  });

  it('renews every retry period while leading, so a second candidate never takes over', async () => {
    const client = new FakeClient();
    const clock = new ManualClock();
    const a = elector(client, clock, 'a');
    const b = elector(client, clock, 'b');
    await a.acquire();
    let bLeads: boolean | undefined;
    void b.acquire().then((won) => (bLeads = won));
    await settle();
    await run(clock, 60_000, 500);
    expect(bLeads).toBeUndefined();
    const lease = await leaseOf(client);
    expect(lease.spec?.holderIdentity).toBe('a');
    expect(lease.spec?.renewTime).toBe(microTime(60_000)); // renewed at the last 2 s tick
    await b.stop();
    expect(bLeads).toBe(false);
    await a.stop();
  });

  it('takes over a Lease whose holder stopped renewing, a lease duration after it last changed', async () => {
    const client = new FakeClient();
    const clock = new ManualClock();
    const a = elector(client, clock, 'a', false);
    await a.acquire();
    await a.stop(); // a crashes: no release
    expect((await leaseOf(client)).spec?.holderIdentity).toBe('a');
    const b = elector(client, clock, 'b');
    let bLeads = false;
    void b.acquire().then((won) => (bLeads = won));
    await settle();
    await run(clock, 14_000);
    expect(bLeads).toBe(false);
    await run(clock, 2_000);
    expect(bLeads).toBe(true);
    expect((await leaseOf(client)).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    await b.stop();
  });

  it('releases the Lease on stop, so that the next candidate takes it on its next try', async () => {
    const client = new FakeClient();
    const clock = new ManualClock();
    const a = elector(client, clock, 'a');
    const b = elector(client, clock, 'b');
    await a.acquire();
    let bLeads = false;
    void b.acquire().then((won) => (bLeads = won));
    await settle();
    await run(clock, 4_000);
    await a.stop();
    expect((await leaseOf(client)).spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    await run(clock, 2_000);
    expect(bLeads).toBe(true);
    await b.stop();
  });

  it('gives leadership up once renewals have failed for the renew deadline', async () => {
    const client = new FakeClient();
    const clock = new ManualClock();
    const a = elector(client, clock, 'a');
    await a.acquire();
    let lost = 0;
    a.onLost(() => lost++);
    // Another process takes the Lease by force: every renewal by a now finds it held.
    const lease = await leaseOf(client);
    await client.update(LeaseKind, { ...lease, spec: { ...lease.spec, holderIdentity: 'intruder' } });
    await run(clock, 9_000, 500);
    expect(lost).toBe(0);
    expect(a.isLeader).toBe(true);
    await run(clock, 2_000, 500);
    expect(lost).toBe(1);
    expect(a.isLeader).toBe(false);
    await run(clock, 10_000, 500);
    expect(lost).toBe(1); // reported once, and no more attempts
    await a.stop();
    expect((await leaseOf(client)).spec?.holderIdentity).toBe('intruder'); // not released: not ours
  });

  it('refuses timings where renewal could not keep the Lease', () => {
    const client = new FakeClient();
    expect(
      () =>
        new LeaderElector({
          client,
          name: 'x',
          namespace: 'y',
          identity: 'a',
          logger,
          leaseDurationMs: 5_000,
          renewDeadlineMs: 5_000,
          retryPeriodMs: 2_000,
          releaseOnStop: true,
        }),
    ).toThrow(/renewDeadlineMs must be shorter than leaseDurationMs/);
  });

  it('writes MicroTime with six fractional digits', () => {
    expect(microTime(Date.UTC(2026, 10, 23, 8, 0, 0, 123))).toBe('2026-11-23T08:00:00.123000Z');
  });
});
