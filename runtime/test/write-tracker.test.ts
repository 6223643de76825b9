/**
 * Read-your-own-writes bookkeeping (internal/write-tracker.ts): which writes are remembered, when a read
 * waits, when it stops waiting, and that the memory stays bounded.
 */
import { describe, expect, it } from 'vitest';
import { hasSeen, WriteTracker } from '../src/internal/write-tracker.js';
import type { KubernetesObject } from '../src/types.js';
import { ManualClock } from './fake-clock.js';

const KIND = 'v1/ConfigMap';

function object(name: string, resourceVersion: string, namespace = 'ns'): KubernetesObject {
  return { metadata: { name, namespace, resourceVersion } };
}

/** A tracker over a hand-held cache: `cache` maps `namespace/name` to what the informer holds. */
function tracker(options: { timeoutMs?: number; maxEntries?: number } = {}) {
  const clock = new ManualClock();
  const cache = new Map<string, KubernetesObject>();
  const waits: [string, boolean][] = [];
  const writes = new WriteTracker({
    timeoutMs: options.timeoutMs ?? 5_000,
    clock,
    cached: (kind, namespace, name) => (kind === KIND ? cache.get(`${namespace}/${name}`) : 'untracked'),
    ...(options.maxEntries ? { maxEntries: options.maxEntries } : {}),
    onWait: (kind, timedOut) => waits.push([kind, timedOut]),
  });
  /** The informer reports `o`: the cache holds it and the tracker is told. */
  const see = (o: KubernetesObject, deleted = false) => {
    const key = `${o.metadata?.namespace}/${o.metadata?.name}`;
    if (deleted) cache.delete(key);
    else cache.set(key, o);
    writes.observe(KIND, o, deleted);
  };
  return { clock, cache, writes, waits, see };
}

/** Whether `promise` has settled after the pending microtasks ran. */
async function settled(promise: Promise<unknown> | undefined): Promise<boolean> {
  if (promise === undefined) return true;
  let done = false;
  void promise.then(() => (done = true));
  for (let i = 0; i < 10; i++) await Promise.resolve();
  return done;
}

describe('resourceVersions', () => {
  it('are seen when equal, or when both are integers and the cached one is newer', () => {
    expect(hasSeen('42', '42')).toBe(true);
    expect(hasSeen('43', '42')).toBe(true);
    expect(hasSeen('41', '42')).toBe(false);
    // Integers, not strings: "9" < "10".
    expect(hasSeen('10', '9')).toBe(true);
    expect(hasSeen('9', '10')).toBe(false);
    // Opaque ones only when equal.
    expect(hasSeen('b', 'a')).toBe(false);
    expect(hasSeen(undefined, '1')).toBe(false);
  });
});

describe('a write of the manager', () => {
  it('makes a get of its object wait until the informer has seen it, and a get of others not', async () => {
    const { writes, waits, see } = tracker();
    see(object('a', '5'));
    writes.recordWrite(KIND, object('a', '7'));
    expect(writes.isPending(KIND, 'ns', 'a')).toBe(true);
    expect(writes.waitForObject(KIND, 'ns', 'b')).toBeUndefined();
    const waiting = writes.waitForObject(KIND, 'ns', 'a');
    expect(await settled(waiting)).toBe(false);
    see(object('a', '6')); // an older write of someone else's: not ours yet
    expect(await settled(waiting)).toBe(false);
    see(object('a', '8')); // past ours: ours was seen, and overwritten
    expect(await settled(waiting)).toBe(true);
    expect(writes.isPending(KIND, 'ns', 'a')).toBe(false);
    expect(writes.size).toBe(0);
    expect(waits).toEqual([[KIND, false]]);
  });

  it('is not remembered when the informer has seen it already, or the kind has no informer', () => {
    const { writes, see } = tracker();
    see(object('a', '7'));
    writes.recordWrite(KIND, object('a', '7'));
    writes.recordWrite('v1/Secret', object('s', '9'));
    expect(writes.size).toBe(0);
  });

  it('makes a list of its kind wait for the writes in its namespace scope only', async () => {
    const { writes, see } = tracker();
    writes.recordWrite(KIND, object('a', '7', 'one'));
    writes.recordWrite(KIND, object('b', '8', 'two'));
    expect(writes.waitForKind(KIND, 'three')).toBeUndefined();
    expect(writes.waitForKind('v1/Secret', undefined)).toBeUndefined();
    const one = writes.waitForKind(KIND, 'one');
    const all = writes.waitForKind(KIND, undefined);
    see(object('a', '7', 'one'));
    expect(await settled(one)).toBe(true);
    expect(await settled(all)).toBe(false);
    see(object('b', '8', 'two'));
    expect(await settled(all)).toBe(true);
  });

  it('is waited for at most timeoutMs after it returned, then forgotten and counted', async () => {
    const { clock, writes, waits } = tracker({ timeoutMs: 1_000 });
    writes.recordWrite(KIND, object('a', '7'));
    clock.advance(400);
    const waiting = writes.waitForObject(KIND, 'ns', 'a');
    clock.advance(599);
    expect(await settled(waiting)).toBe(false);
    clock.advance(1);
    expect(await settled(waiting)).toBe(true);
    expect(waits).toEqual([[KIND, true]]);
    // The next read does not wait again for a write the informer may never report.
    expect(writes.waitForObject(KIND, 'ns', 'a')).toBeUndefined();
    expect(writes.size).toBe(0);
  });

  it('older than timeoutMs defers nothing more, even when no read waited', () => {
    const { clock, writes } = tracker({ timeoutMs: 1_000 });
    writes.recordWrite(KIND, object('a', '7'));
    clock.advance(1_000);
    expect(writes.isPending(KIND, 'ns', 'a')).toBe(false);
    expect(writes.size).toBe(0);
  });

  it('keeps at most maxEntries writes, the newest, and lets waits on the dropped ones go', async () => {
    const { writes } = tracker({ maxEntries: 3 });
    writes.recordWrite(KIND, object('first', '1'));
    const waiting = writes.waitForObject(KIND, 'ns', 'first');
    for (let i = 2; i <= 5; i++) writes.recordWrite(KIND, object(`o${i}`, String(i)));
    expect(writes.size).toBe(3);
    expect(writes.isPending(KIND, 'ns', 'first')).toBe(false);
    expect(writes.isPending(KIND, 'ns', 'o5')).toBe(true);
    expect(await settled(waiting)).toBe(true);
  });
});

describe('a delete of the manager', () => {
  it('waits until the informer has lost the object', async () => {
    const { writes, see } = tracker();
    see(object('a', '5'));
    writes.recordDelete(KIND, 'ns', 'a');
    const waiting = writes.waitForObject(KIND, 'ns', 'a');
    see(object('a', '5')); // a resync: still there
    expect(await settled(waiting)).toBe(false);
    see(object('a', '5'), true);
    expect(await settled(waiting)).toBe(true);
  });

  it('with finalizers: waits for a newer version (the deletionTimestamp), counting an own write before it', async () => {
    const { writes, see } = tracker();
    see(object('a', '5'));
    writes.recordWrite(KIND, object('a', '6')); // our update, unseen
    writes.recordDelete(KIND, 'ns', 'a');
    see(object('a', '6'));
    expect(writes.isPending(KIND, 'ns', 'a')).toBe(true);
    see(object('a', '7'));
    expect(writes.isPending(KIND, 'ns', 'a')).toBe(false);
  });

  it('of an object the cache does not hold is not remembered', () => {
    const { writes } = tracker();
    writes.recordDelete(KIND, 'ns', 'gone');
    expect(writes.size).toBe(0);
  });
});
