/**
 * The work queue of a controller, with client-go's semantics: a key waits in the queue at most once, a
 * key is processed by one worker at a time (added again while processing, it is queued once the worker is
 * done), failures retry with backoff, and requeueAfter delays a key; and controller-runtime's priority
 * queue: keys of higher priority are taken first, keys of one priority in the order they came, and a key
 * added again keeps the higher of its priorities.
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
  /** The keys waiting in the queue, all priorities together. */
  depth?(depth: number): void;
  /** The keys waiting at `priority` changed by `change` (with priorities on only). */
  priorityDepth?(priority: number, change: number): void;
  /** Milliseconds a key waited in the queue before a worker took it. */
  queued?(ms: number): void;
}

/**
 * The priority of the objects an informer replays: its first list and a resync (controller-runtime's
 * `handler.LowPriority`). Changes (priority 0) and users' own priorities above it go first.
 */
export const LOW_PRIORITY = -100;

/** How a key is added. */
export interface AddOptions {
  /**
   * Keys of higher priority are taken first; of equal priority, in the order they were added. A key
   * already waiting keeps the higher of its two priorities. Default: 0 (a change); the objects of an
   * informer's first list and of resyncs come at LOW_PRIORITY (-100). Ignored when the queue's
   * `priorities` option is off.
   */
  priority?: number;
}

export interface WorkQueueOptions {
  rateLimiter?: RateLimiter;
  clock?: Clock;
  metrics?: QueueMetrics;
  /**
   * Take keys by priority (AddOptions.priority), as controller-runtime's priority queue does. Off, every
   * key has priority 0: one first-in first-out line. Default: true.
   */
  priorities?: boolean;
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

/**
 * A key waiting to be processed: in the line of its priority, or (while a worker has it) to be queued
 * when the worker is done. The queue's `dirty` map holds each key's current entry; a line may still hold
 * an entry the key left for a higher line, marked `moved` and skipped when it comes up (not removed from
 * the middle of its line: that would cost O(n)).
 */
interface Entry {
  readonly key: string;
  readonly priority: number;
  /** When the key was added, for the queue duration metric. */
  readonly added: number;
  /** The key left this entry for one of higher priority. */
  moved: boolean;
}

/** How many empty lines a queue keeps for the priorities it sees again and again. */
const KEPT_LINES = 4;

/** The keys of one priority, first in first out. */
class Line extends Fifo<Entry> {
  /** Its live entries (it also holds stale ones). */
  live = 0;
  constructor(readonly priority: number) {
    super();
  }
}

/**
 * One first-in first-out line per priority, highest first: add and take are O(1) whatever the backlog
 * (plus a look over the few priorities in use), where a heap would be O(log n). An upgraded key joins the
 * end of its new line.
 */
class PriorityLines {
  private readonly byPriority = new Map<number, Line>();
  /** Highest priority first. */
  private lines: Line[] = [];
  /** The line of the last push: most pushes go to the line of the one before. */
  private last: Line | undefined;
  /** Live entries in all lines. */
  size = 0;

  constructor(private readonly onCount: ((priority: number, change: number) => void) | undefined) {}

  push(entry: Entry): void {
    let line = this.last;
    if (line === undefined || line.priority !== entry.priority) {
      line = this.byPriority.get(entry.priority) ?? this.open(entry.priority);
      this.last = line;
    }
    line.push(entry);
    this.count(line, 1);
  }

  /** The key of `entry` moved to a line of higher priority: its line skips the entry when it comes up. */
  moved(entry: Entry): void {
    entry.moved = true;
    const line = this.byPriority.get(entry.priority);
    if (line !== undefined) this.count(line, -1);
  }

  /** The first entry of the highest line that was not moved. */
  shift(): Entry | undefined {
    if (this.size === 0) return undefined;
    const lines = this.lines;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.live > 0) {
        for (let entry = line.shift(); entry !== undefined; entry = line.shift()) {
          if (entry.moved) continue;
          this.count(line, -1);
          return entry;
        }
      }
      // Empty but for stale entries: those go. The line is kept while there are few (a queue that empties
      // and fills again makes no new line each time), dropped past that, so that a user's many one-off
      // priorities leave no lines behind.
      if (line.length > 0) line.clear();
      if (lines.length > KEPT_LINES) {
        this.byPriority.delete(line.priority);
        if (this.last === line) this.last = undefined;
        lines.splice(i--, 1);
      }
    }
    return undefined;
  }

  clear(): void {
    for (const line of this.lines) this.count(line, -line.live);
    this.byPriority.clear();
    this.lines = [];
    this.last = undefined;
  }

  private open(priority: number): Line {
    const line = new Line(priority);
    this.byPriority.set(priority, line);
    this.lines.push(line);
    this.lines.sort((a, b) => b.priority - a.priority);
    return line;
  }

  private count(line: Line, by: number): void {
    line.live += by;
    this.size += by;
    this.onCount?.(line.priority, by);
  }
}

export class WorkQueue {
  private readonly queue: PriorityLines;
  /**
   * Keys waiting to be processed (in `queue`, or to be queued when their worker is done), each with its
   * priority and when it was added: one map, as every add and take touches it.
   */
  private readonly dirty = new Map<string, Entry>();
  /** Keys a worker has, each with the priority it was taken at. */
  private readonly processing = new Map<string, number>();
  /** Delayed keys: their timer, when they are due, and the priority they will be added with. */
  private readonly delayed = new Map<string, { handle: unknown; due: number; priority: number }>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private shuttingDown = false;
  private readonly clock: Clock;
  readonly rateLimiter: RateLimiter;
  private readonly metrics: QueueMetrics;
  private readonly prioritized: boolean;

  constructor(options: WorkQueueOptions = {}) {
    this.clock = options.clock ?? realClock;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter(this.clock);
    this.metrics = options.metrics ?? {};
    this.prioritized = options.priorities ?? true;
    const priorityDepth = this.metrics.priorityDepth;
    this.queue = new PriorityLines(
      this.prioritized && priorityDepth ? (priority, change) => priorityDepth(priority, change) : undefined,
    );
  }

  /** The keys waiting for a worker (not those delayed, nor those a worker has). */
  get length(): number {
    return this.queue.size;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /**
   * Queues `key`, once: a key already waiting stays where it is, unless this add's priority is higher,
   * which moves it to the end of that priority's line.
   */
  add(key: string, options?: AddOptions): void {
    if (this.shuttingDown) return;
    const priority = this.priorityOf(options);
    const waiting = this.dirty.get(key);
    if (waiting !== undefined) {
      if (priority <= waiting.priority) return;
      const upgraded: Entry = { key, priority, added: waiting.added, moved: false };
      this.dirty.set(key, upgraded);
      if (this.processing.has(key)) return;
      this.queue.moved(waiting);
      this.queue.push(upgraded);
      return;
    }
    this.metrics.add?.();
    const entry: Entry = { key, priority, added: this.clock.now(), moved: false };
    this.dirty.set(key, entry);
    if (this.processing.has(key)) return;
    this.push(entry);
  }

  /**
   * Adds `key` after `ms`; of several pending delays for one key, the earliest wins, and the key is then
   * added with the highest priority any of them had.
   */
  addAfter(key: string, ms: number, options?: AddOptions): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key, options);
      return;
    }
    let priority = this.priorityOf(options);
    const due = this.clock.now() + ms;
    const pending = this.delayed.get(key);
    if (pending && pending.due <= due) {
      pending.priority = Math.max(pending.priority, priority);
      return;
    }
    if (pending) {
      this.clock.clearTimeout(pending.handle);
      priority = Math.max(pending.priority, priority);
    }
    const handle = this.clock.setTimeout(() => {
      const entry = this.delayed.get(key);
      this.delayed.delete(key);
      this.add(key, { priority: entry?.priority ?? priority });
    }, ms);
    this.delayed.set(key, { handle, due, priority });
  }

  /** Adds `key` after the rate limiter's delay: the retry of a failure. */
  addRateLimited(key: string, options?: AddOptions): void {
    this.metrics.retry?.();
    this.addAfter(key, this.rateLimiter.when(key), options);
  }

  /** The priority a worker took `key` at (0 when no worker has it). */
  takenPriority(key: string): number {
    return this.processing.get(key) ?? 0;
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
   * takes them without a promise each (get() when it must wait). Highest priority first; of equal
   * priority, the first added.
   */
  tryGet(): string | undefined {
    const entry = this.queue.shift();
    return entry === undefined ? undefined : this.take(entry);
  }

  /** Marks `key` processed; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    const entry = this.dirty.get(key);
    if (entry !== undefined) this.push(entry);
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
    this.metrics.depth?.(0);
    for (const resolve of this.waiters.splice(0)) resolve(undefined);
  }

  /** Resolves when no key is being processed. */
  drained(): Promise<void> {
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private priorityOf(options: AddOptions | undefined): number {
    const priority = options?.priority;
    if (!this.prioritized || priority === undefined) return 0;
    // A priority is a line of its own: NaN or a fraction from a computation would make a line per value.
    if (!Number.isFinite(priority)) return 0;
    return Math.trunc(priority);
  }

  private push(entry: Entry): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter(this.take(entry));
    else {
      this.queue.push(entry);
      this.metrics.depth?.(this.queue.size);
    }
  }

  private take(entry: Entry): string {
    const key = entry.key;
    this.dirty.delete(key);
    this.processing.set(key, entry.priority);
    this.metrics.queued?.(this.clock.now() - entry.added);
    this.metrics.depth?.(this.queue.size);
    return key;
  }
}
