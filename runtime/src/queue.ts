/**
 * The work queue of a controller, with client-go's semantics: a key waits in the queue at most once, a
 * key is processed by one worker at a time (added again while processing, it is queued once the worker is
 * done), failures retry with backoff, and requeueAfter delays a key.
 */
import { realClock, type Clock } from './clock.js';

export interface RateLimiter {
  /** How long to wait before retrying `key` now, counting this retry. */
  when(key: string): number;
  /** Forget the failures of `key`: its next retry waits the base delay again. */
  forget(key: string): void;
  /** How many times `key` has been retried since it was last forgotten. */
  retries(key: string): number;
}

/** Per key: base * 2^failures, capped (client-go's ItemExponentialFailureRateLimiter). */
export class ExponentialRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();
  constructor(
    private readonly baseMs = 5,
    private readonly maxMs = 1000_000,
  ) {}

  when(key: string): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    return Math.min(this.baseMs * 2 ** failures, this.maxMs);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/** An overall token bucket: `qps` tokens a second, at most `burst` saved (client-go's BucketRateLimiter). */
export class BucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;
  constructor(
    private readonly qps = 10,
    private readonly burst = 100,
    private readonly clock: Clock = realClock,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  when(_key?: string): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(): void {}

  retries(): number {
    return 0;
  }
}

/** The longest delay of several limiters (client-go's MaxOfRateLimiter). */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: RateLimiter[];
  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    return Math.max(...this.limiters.map((limiter) => limiter.when(key)));
  }

  forget(key: string): void {
    // Once per successful reconcile: an index loop allocates no iterator, even before V8 optimises it.
    for (let i = 0; i < this.limiters.length; i++) this.limiters[i]!.forget(key);
  }

  retries(key: string): number {
    return Math.max(...this.limiters.map((limiter) => limiter.retries(key)));
  }
}

/** controller-runtime's default: 5 ms doubling to 1000 s per key, and 10 qps (burst 100) overall. */
export function defaultControllerRateLimiter(clock: Clock = realClock): RateLimiter {
  return new MaxOfRateLimiter(new ExponentialRateLimiter(5, 1000_000), new BucketRateLimiter(10, 100, clock));
}

export interface QueueMetrics {
  add?(): void;
  retry?(): void;
  depth?(depth: number): void;
  /** Milliseconds a key waited in the queue before a worker took it. */
  queued?(ms: number): void;
}

export interface WorkQueueOptions {
  rateLimiter?: RateLimiter;
  clock?: Clock;
  metrics?: QueueMetrics;
}

/** A FIFO with O(1) push and shift (Array#shift is O(n) for long arrays: a backlog would go quadratic). */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head++];
    // Drop the consumed prefix once it is half of the array, so memory stays proportional to the backlog.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}

export class WorkQueue {
  private readonly queue = new Fifo<string>();
  /**
   * Keys waiting to be processed (in `queue`, or to be queued when their worker is done), each with when
   * it was added (for the queue duration metric): one map, as every add and take touches both.
   */
  private readonly dirty = new Map<string, number>();
  private readonly processing = new Set<string>();
  /** Delayed keys: their timer and when they are due. */
  private readonly delayed = new Map<string, { handle: unknown; due: number }>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private shuttingDown = false;
  private readonly clock: Clock;
  readonly rateLimiter: RateLimiter;
  private readonly metrics: QueueMetrics;

  constructor(options: WorkQueueOptions = {}) {
    this.clock = options.clock ?? realClock;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter(this.clock);
    this.metrics = options.metrics ?? {};
  }

  get length(): number {
    return this.queue.length;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.metrics.add?.();
    this.dirty.set(key, this.clock.now());
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** Adds `key` after `ms`; of several pending delays for one key, the earliest wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const due = this.clock.now() + ms;
    const pending = this.delayed.get(key);
    if (pending && pending.due <= due) return;
    if (pending) this.clock.clearTimeout(pending.handle);
    const handle = this.clock.setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    this.delayed.set(key, { handle, due });
  }

  /** Adds `key` after the rate limiter's delay: the retry of a failure. */
  addRateLimited(key: string): void {
    this.metrics.retry?.();
    this.addAfter(key, this.rateLimiter.when(key));
  }

  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  retries(key: string): number {
    return this.rateLimiter.retries(key);
  }

  /** The next key to process; waits for one. Undefined once the queue is shut down and empty. */
  get(): Promise<string | undefined> {
    const key = this.tryGet();
    if (key !== undefined || this.shuttingDown) return Promise.resolve(key);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * The next key to process if one is waiting, else undefined, at once: a worker that finds keys waiting
   * takes them without a promise each (get() when it must wait).
   */
  tryGet(): string | undefined {
    const key = this.queue.shift();
    return key === undefined ? undefined : this.take(key);
  }

  /** Marks `key` processed; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) this.push(key);
    if (this.processing.size === 0 && this.idleWaiters.length > 0) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  /** Stops taking keys and cancels delayed ones; workers waiting in get() receive undefined. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const { handle } of this.delayed.values()) this.clock.clearTimeout(handle);
    this.delayed.clear();
    this.queue.clear();
    this.dirty.clear();
    for (const resolve of this.waiters.splice(0)) resolve(undefined);
  }

  /** Resolves when no key is being processed. */
  drained(): Promise<void> {
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private push(key: string): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter(this.take(key));
    else {
      this.queue.push(key);
      this.metrics.depth?.(this.queue.length);
    }
  }

  private take(key: string): string {
    const added = this.dirty.get(key);
    this.dirty.delete(key);
    this.processing.add(key);
    if (added !== undefined) this.metrics.queued?.(this.clock.now() - added);
    this.metrics.depth?.(this.queue.length);
    return key;
  }
}
