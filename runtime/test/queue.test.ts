import { describe, expect, it } from 'vitest';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ExponentialRateLimiter,
  LOW_PRIORITY,
  WorkQueue,
  type QueueMetrics,
} from '../src/queue.js';
import { ManualClock } from './fake-clock.js';

describe('rate limiters', () => {
  it('back off per key from 5 ms, doubling, capped at 1000 s, and start over when forgotten', () => {
    const limiter = new ExponentialRateLimiter(5, 1000_000);
    const delays = Array.from({ length: 5 }, () => limiter.when('a'));
    expect(delays).toEqual([5, 10, 20, 40, 80]);
    expect(limiter.when('b')).toBe(5);
    for (let i = 0; i < 30; i++) limiter.when('a');
    expect(limiter.when('a')).toBe(1000_000);
    expect(limiter.retries('a')).toBe(36);
    limiter.forget('a');
    expect(limiter.when('a')).toBe(5);
  });

  it('let a burst of 100 through, then 10 a second', () => {
    const clock = new ManualClock();
    const bucket = new BucketRateLimiter(10, 100, clock);
    const delays = Array.from({ length: 102 }, (_, i) => bucket.when(`k${i}`));
    expect(delays.slice(0, 100).every((d) => d === 0)).toBe(true);
    expect(delays[100]).toBeCloseTo(100);
    expect(delays[101]).toBeCloseTo(200);
    clock.advance(1000);
    expect(bucket.when('later')).toBe(0);
  });

  it('take the longer of the two delays by default', () => {
    const clock = new ManualClock();
    const limiter = defaultControllerRateLimiter(clock);
    expect(limiter.when('a')).toBe(5);
    for (let i = 0; i < 200; i++) limiter.when(`other${i}`);
    // The bucket is empty now: its delay (seconds) beats the key's 10 ms.
    expect(limiter.when('a')).toBeGreaterThan(1000);
  });
});

describe('WorkQueue', () => {
  it('holds a key once however often it is added', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    queue.add('b');
    queue.add('a');
    expect(queue.length).toBe(2);
    expect(await queue.get()).toBe('a');
    expect(await queue.get()).toBe('b');
  });

  it('gives a key to one worker at a time and queues it again when added meanwhile', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    const key = await queue.get();
    queue.add('a');
    expect(queue.length).toBe(0); // not handed to a second worker while the first has it
    queue.done(key!);
    expect(queue.length).toBe(1);
    expect(await queue.get()).toBe('a');
  });

  it('keeps first-in first-out order through a long backlog', async () => {
    const queue = new WorkQueue();
    const keys = Array.from({ length: 5000 }, (_, i) => `k${i}`);
    for (const key of keys.slice(0, 3000)) queue.add(key);
    const taken: string[] = [];
    for (let i = 0; i < 2500; i++) taken.push((await queue.get())!);
    for (const key of keys.slice(3000)) queue.add(key);
    while (queue.length > 0) taken.push((await queue.get())!);
    expect(taken).toEqual(keys);
  });

  it('tryGet takes a waiting key at once, with the same rules as get', () => {
    const queue = new WorkQueue();
    expect(queue.tryGet()).toBeUndefined();
    queue.add('a');
    queue.add('b');
    expect(queue.tryGet()).toBe('a');
    queue.add('a'); // re-added while processing: held back until done
    expect(queue.tryGet()).toBe('b');
    expect(queue.tryGet()).toBeUndefined();
    queue.done('a');
    expect(queue.tryGet()).toBe('a');
    queue.shutDown();
    expect(queue.tryGet()).toBeUndefined();
  });

  it('hands keys to workers that were waiting', async () => {
    const queue = new WorkQueue();
    const waiting = queue.get();
    queue.add('x');
    expect(await waiting).toBe('x');
  });

  it('adds a key after a delay, keeping the earliest of several delays', () => {
    const clock = new ManualClock();
    const queue = new WorkQueue({ clock });
    queue.addAfter('a', 1000);
    queue.addAfter('a', 200);
    queue.addAfter('a', 5000);
    clock.advance(199);
    expect(queue.length).toBe(0);
    clock.advance(1);
    expect(queue.length).toBe(1);
    expect(clock.pending).toBe(0);
  });

  it('retries a failing key with growing delays', async () => {
    const clock = new ManualClock();
    const queue = new WorkQueue({ clock });
    const seen: number[] = [];
    for (let i = 0; i < 4; i++) {
      const before = clock.now();
      queue.addRateLimited('a');
      for (let waited = 0; queue.length === 0 && waited < 1000; waited++) clock.advance(1);
      seen.push(clock.now() - before);
      queue.done((await queue.get())!);
    }
    expect(seen).toEqual([5, 10, 20, 40]);
    expect(queue.retries('a')).toBe(4);
    queue.forget('a');
    expect(queue.retries('a')).toBe(0);
  });

  it('on shutdown, releases waiting workers and refuses new keys', async () => {
    const clock = new ManualClock();
    const queue = new WorkQueue({ clock });
    const waiting = queue.get();
    queue.addAfter('later', 100);
    queue.shutDown();
    expect(await waiting).toBeUndefined();
    queue.add('b');
    clock.advance(1000);
    expect(queue.length).toBe(0);
    expect(await queue.get()).toBeUndefined();
  });
});

/** Every key the queue hands out, in order, each marked done at once. */
function drain(queue: WorkQueue): string[] {
  const taken: string[] = [];
  for (let key = queue.tryGet(); key !== undefined; key = queue.tryGet()) {
    taken.push(key);
    queue.done(key);
  }
  return taken;
}

describe('WorkQueue priorities', () => {
  it('hands out higher priorities first and keys of one priority in the order they came', () => {
    const queue = new WorkQueue();
    queue.add('replay-1', { priority: LOW_PRIORITY });
    queue.add('replay-2', { priority: LOW_PRIORITY });
    queue.add('change-1');
    queue.add('urgent', { priority: 10 });
    queue.add('replay-3', { priority: LOW_PRIORITY });
    queue.add('change-2', { priority: 0 });
    expect(drain(queue)).toEqual(['urgent', 'change-1', 'change-2', 'replay-1', 'replay-2', 'replay-3']);
  });

  it('keeps the higher priority of a key added twice, never lowering it', () => {
    const queue = new WorkQueue();
    queue.add('a', { priority: LOW_PRIORITY });
    queue.add('b', { priority: LOW_PRIORITY });
    queue.add('c');
    queue.add('b'); // a change to a replayed object: it joins the changes, once
    queue.add('c', { priority: LOW_PRIORITY }); // a replay of a changed object: stays a change
    expect(queue.length).toBe(3);
    expect(drain(queue)).toEqual(['c', 'b', 'a']);
  });

  it('does not hand a key to a second worker, and queues it at the higher priority it got meanwhile', () => {
    const queue = new WorkQueue();
    queue.add('a', { priority: LOW_PRIORITY });
    queue.add('b', { priority: LOW_PRIORITY });
    expect(queue.tryGet()).toBe('a');
    queue.add('a', { priority: 5 }); // while a worker has it
    expect(queue.tryGet()).toBe('b');
    expect(queue.tryGet()).toBeUndefined();
    queue.add('c');
    queue.done('a');
    expect(queue.tryGet()).toBe('a');
    expect(queue.tryGet()).toBe('c');
  });

  it('keeps first-in first-out order per priority through a long backlog with upgrades', () => {
    const queue = new WorkQueue();
    const low = Array.from({ length: 20_000 }, (_, i) => `low-${i}`);
    for (const key of low) queue.add(key, { priority: LOW_PRIORITY });
    const taken: string[] = [];
    for (let i = 0; i < 5000; i++) taken.push(queue.tryGet()!);
    // Every tenth waiting key changes: those go first, in the order of their changes.
    const changed = low.slice(5000).filter((_, i) => i % 10 === 0);
    for (const key of [...changed].reverse()) queue.add(key);
    expect(queue.length).toBe(15_000);
    for (let key = queue.tryGet(); key !== undefined; key = queue.tryGet()) taken.push(key);
    const changedSet = new Set(changed);
    const rest = low.slice(5000).filter((key) => !changedSet.has(key));
    expect(taken).toEqual([...low.slice(0, 5000), ...[...changed].reverse(), ...rest]);
  });

  it('adds a delayed or rate-limited key with its priority when it is due', () => {
    const clock = new ManualClock();
    const queue = new WorkQueue({ clock });
    queue.addRateLimited('retry-low', { priority: LOW_PRIORITY });
    queue.addAfter('later', 100, { priority: LOW_PRIORITY });
    queue.addAfter('later', 50); // an earlier delay at a higher priority: both win
    queue.add('replay', { priority: LOW_PRIORITY });
    clock.advance(5);
    expect(queue.length).toBe(2);
    clock.advance(45);
    expect(queue.length).toBe(3);
    expect(drain(queue)).toEqual(['later', 'replay', 'retry-low']);
    expect(clock.pending).toBe(0);
  });

  it('keeps the higher priority of two delays of one key even when the later delay is dropped', () => {
    const clock = new ManualClock();
    const queue = new WorkQueue({ clock });
    queue.add('replay', { priority: LOW_PRIORITY });
    queue.addAfter('a', 10, { priority: LOW_PRIORITY });
    queue.addAfter('a', 20, { priority: 3 });
    clock.advance(10);
    expect(drain(queue)).toEqual(['a', 'replay']);
  });

  it('with priorities off, is one first-in first-out line whatever the priorities given', () => {
    const queue = new WorkQueue({ priorities: false });
    queue.add('a', { priority: LOW_PRIORITY });
    queue.add('b');
    queue.add('c', { priority: 10 });
    queue.add('a', { priority: 10 });
    expect(drain(queue)).toEqual(['a', 'b', 'c']);
  });

  it('orders keys of many distinct priorities, round after round', () => {
    const queue = new WorkQueue();
    for (let round = 0; round < 3; round++) {
      const priorities = Array.from({ length: 500 }, (_, i) => ((i * 7919) % 500) - 250 + round);
      for (const priority of priorities) queue.add(`p${priority}`, { priority });
      const expected = [...priorities].sort((x, y) => y - x).map((priority) => `p${priority}`);
      expect(drain(queue)).toEqual(expected);
    }
  });

  it('takes a priority that is not a whole number as its whole part, and one that is not a number as 0', () => {
    const queue = new WorkQueue();
    queue.add('nan', { priority: Number.NaN });
    queue.add('half', { priority: 0.5 });
    queue.add('infinite', { priority: Number.POSITIVE_INFINITY });
    queue.add('one', { priority: 1.9 });
    expect(drain(queue)).toEqual(['one', 'nan', 'half', 'infinite']);
  });

  it('reports the depth of waiting keys, in all and per priority, through upgrades, takes and shutdown', () => {
    const depths: number[] = [];
    const byPriority = new Map<number, number>();
    const metrics: QueueMetrics = {
      depth: (depth) => depths.push(depth),
      priorityDepth: (priority, change) => byPriority.set(priority, (byPriority.get(priority) ?? 0) + change),
    };
    const queue = new WorkQueue({ metrics });
    queue.add('a', { priority: LOW_PRIORITY });
    queue.add('b', { priority: LOW_PRIORITY });
    queue.add('a');
    expect(depths.at(-1)).toBe(2);
    expect(Object.fromEntries(byPriority)).toEqual({ [LOW_PRIORITY]: 1, 0: 1 });
    expect(queue.tryGet()).toBe('a');
    expect(depths.at(-1)).toBe(1);
    expect(Object.fromEntries(byPriority)).toEqual({ [LOW_PRIORITY]: 1, 0: 0 });
    queue.add('c', { priority: 7 });
    queue.shutDown();
    expect(depths.at(-1)).toBe(0);
    expect(Object.fromEntries(byPriority)).toEqual({ [LOW_PRIORITY]: 0, 0: 0, 7: 0 });
    expect(queue.length).toBe(0);
  });

  it('on shutdown, releases waiting workers and refuses keys of any priority', async () => {
    const clock = new ManualClock();
    const queue = new WorkQueue({ clock });
    queue.add('queued', { priority: LOW_PRIORITY });
    queue.addAfter('delayed', 10, { priority: 5 });
    queue.shutDown();
    expect(await queue.get()).toBeUndefined();
    queue.add('late', { priority: 100 });
    clock.advance(100);
    expect(queue.length).toBe(0);
    expect(queue.tryGet()).toBeUndefined();
  });
});
