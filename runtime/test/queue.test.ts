import { describe, expect, it } from 'vitest';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ExponentialRateLimiter,
  WorkQueue,
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
