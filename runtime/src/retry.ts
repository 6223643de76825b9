/**
 * Retrying a read-modify-write that lost a race, as client-go's `util/retry` package:
 *
 * ```ts
 * await retryOnConflict(async () => {
 *   const pod = await client.get(PodKind, name, namespace); // read again on every attempt
 *   pod.metadata!.labels = { ...pod.metadata?.labels, seen: 'true' }; // apply the change again
 *   await client.update(PodKind, pod); // 409 Conflict when someone wrote in between: try again
 * });
 * ```
 *
 * The function runs at most `steps` times, with a wait between attempts that starts at `durationMs`,
 * grows by `factor` and is lengthened at random by up to `jitter` of itself (so that writers who collided
 * do not collide again in step). When every attempt fails, the last error is thrown.
 */
import { isConflict } from './errors.js';

export interface Backoff {
  /** How many times the function runs at most. */
  steps: number;
  /** The wait after the first failure, in ms. */
  durationMs: number;
  /** Each wait is the one before times this. */
  factor: number;
  /** Each wait is lengthened by a random fraction of itself, up to this one (0.1: up to 10 %). */
  jitter: number;
  /** No wait (before its jitter) is longer than this, in ms. Default: no cap. */
  capMs?: number;
}

/**
 * client-go's `retry.DefaultRetry`: 5 attempts, 10 ms apart (plus up to 10 %). For a conflict with
 * writers that are not controllers: short, since the next attempt has a fresh copy.
 */
export const DEFAULT_RETRY: Readonly<Backoff> = Object.freeze({
  steps: 5,
  durationMs: 10,
  factor: 1,
  jitter: 0.1,
});

/**
 * client-go's `retry.DefaultBackoff`: 4 attempts, 10, 50 and 250 ms apart (plus up to 10 %), for an
 * object that other controllers are actively writing.
 */
export const DEFAULT_BACKOFF: Readonly<Backoff> = Object.freeze({
  steps: 4,
  durationMs: 10,
  factor: 5,
  jitter: 0.1,
});

/** What a retry may be given besides its backoff. */
export interface RetryOptions {
  /** Stops waiting and throws the signal's reason when aborted. */
  signal?: AbortSignal;
  /** A number in [0, 1) for the jitter. Default: Math.random. */
  random?: () => number;
  /** Test seam: waits `ms`, or rejects when `signal` aborts. Default: a timer. */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
}

/**
 * Runs `fn` until it succeeds, `retriable` says no to its error, or `backoff.steps` attempts have
 * failed; then throws the last error. client-go's `retry.OnError`.
 */
export async function onError<T>(
  backoff: Backoff,
  retriable: (error: unknown) => boolean,
  fn: () => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const steps = Math.max(1, Math.floor(backoff.steps));
  const random = options.random ?? Math.random;
  const wait = options.sleep ?? sleep;
  let duration = backoff.durationMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt >= steps || !retriable(error)) throw error;
    }
    const base = backoff.capMs === undefined ? duration : Math.min(duration, backoff.capMs);
    await wait(base + random() * backoff.jitter * base, options.signal);
    duration *= backoff.factor;
  }
}

/**
 * Runs `fn` again while it fails with a 409 Conflict (a stale resourceVersion), with `backoff` (default
 * client-go's DefaultRetry). `fn` must read the object again and re-apply its change on every call.
 * Reads through `mgr.client` come from the cache, which may not have caught up with the write that won:
 * with many writers, read through `mgr.apiReader` inside `fn`, or use a longer backoff (DEFAULT_BACKOFF).
 */
export function retryOnConflict<T>(
  fn: () => Promise<T>,
  backoff: Backoff = DEFAULT_RETRY,
  options: RetryOptions = {},
): Promise<T> {
  return onError(backoff, isConflict, fn, options);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
