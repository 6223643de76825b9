import { describe, expect, it } from 'vitest';
import { LeaderElector, LeaseKind } from '../src/leader.js';
import { createLogger } from '../src/logger.js';
import { FakeClient } from '../src/testing/index.js';
import { ManualClock } from './fake-clock.js';

const logger = createLogger({ write: () => {} });

function elector(client: FakeClient, clock: ManualClock, identity: string) {
  return new LeaderElector(client, { name: 'op.example.com', namespace: 'system', identity, clock, logger });
}

/** Runs the manual clock forward in steps, letting promises settle between them. */
async function run(clock: ManualClock, ms: number, step = 100): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    clock.advance(step);
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('LeaderElector', () => {
  it('takes a free lease, and a second candidate waits until the lease expires', async () => {
    const client = new FakeClient();
    const clock = new ManualClock();
    const a = elector(client, clock, 'a');
    const b = elector(client, clock, 'b');
    expect(await a.acquire()).toBe(true);
    let bLeads = false;
    void b.acquire().then((won) => (bLeads = won));
    await run(clock, 14_000);
    expect(bLeads).toBe(false);
    // a never renews (it is not renewing in this test): 15 s after b first saw the lease, b takes it.
    await run(clock, 3_000);
    expect(bLeads).toBe(true);
    const lease = await client.get(LeaseKind, 'op.example.com', 'system');
    expect(lease.spec).toMatchObject({ holderIdentity: 'b', leaseDurationSeconds: 15, leaseTransitions: 1 });
  });

  it('keeps the lease while renewing, and hands it over at once when released', async () => {
    const client = new FakeClient();
    const clock = new ManualClock();
    const a = elector(client, clock, 'a');
    const b = elector(client, clock, 'b');
    await a.acquire();
    a.keepRenewing(() => expect.fail('a lost its lease'));
    let bLeads = false;
    void b.acquire().then((won) => (bLeads = won));
    await run(clock, 60_000, 500);
    expect(bLeads).toBe(false);
    await a.release();
    await run(clock, 2_500);
    expect(bLeads).toBe(true);
  });

  it('reports the lease lost when renewals fail for the renew deadline', async () => {
    const client = new FakeClient();
    const clock = new ManualClock();
    const a = elector(client, clock, 'a');
    await a.acquire();
    let lost = false;
    a.keepRenewing(() => (lost = true));
    // Someone else takes the lease over by force: every renewal of a now fails.
    const lease = await client.get(LeaseKind, 'op.example.com', 'system');
    await client.update(LeaseKind, { ...lease, spec: { ...lease.spec, holderIdentity: 'intruder' } });
    await run(clock, 9_000, 500);
    expect(lost).toBe(false);
    await run(clock, 3_000, 500);
    expect(lost).toBe(true);
    expect(a.isLeader).toBe(false);
  });
});
