/**
 * Retrying a read-modify-write that lost a race: client-go's `retry.RetryOnConflict`. An update carries the
 * resourceVersion it read; when another writer got there first the API server answers 409 Conflict, and the
 * cure is to read again and redo the change. `fn` must therefore read the object itself on every attempt.
 */
import { isConflict } from './errors.js';

export interface Backoff {
  /** How many attempts in all. Default: 5 (client-go's DefaultRetry). */
  steps?: number;
  /** The wait before the second attempt, in milliseconds. Default: 10. */
  durationMs?: number;
  /** Each wait is the previous one times this. Default: 1 (client-go's DefaultRetry). */
  factor?: number;
  /** Each wait is lengthened by up to this fraction of itself, at random. Default: 0.1. */
  jitter?: number;
  /** No wait is longer than this, in milliseconds. Default: 1000. */
  capMs?: number;
}

/** client-go's `retry.DefaultRetry`: 5 attempts, 10 ms apart with 10 % jitter. */
export const DEFAULT_RETRY: Required<Backoff> = {
  steps: 5,
  durationMs: 10,
  factor: 1,
  jitter: 0.1,
  capMs: 1000,
};

/**
 * Runs `fn` until it succeeds or fails with something other than a 409 Conflict; after a conflict it waits
 * (capped, jittered backoff) and runs it again, at most `backoff.steps` times in all. The last conflict is
 * rethrown when every attempt conflicted: the reconcile then fails and its controller retries it later.
 */
export async function retryOnConflict<T>(
  fn: () => Promise<T>,
  backoff: Backoff = {},
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<T> {
  return retryOn(isConflict, fn, backoff, sleep);
}

/** As retryOnConflict, for any retriable error: client-go's `retry.OnError`. */
export async function retryOn<T>(
  retriable: (err: unknown) => boolean,
  fn: () => Promise<T>,
  backoff: Backoff = {},
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<T> {
  const { steps, durationMs, factor, jitter, capMs } = { ...DEFAULT_RETRY, ...backoff };
  if (!(steps >= 1)) throw new Error(`retry: steps must be at least 1, not ${steps}`);
  let wait = durationMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= steps || !retriable(err)) throw err;
    }
    await sleep(Math.min(capMs, wait * (1 + Math.random() * jitter)));
    wait = Math.min(capMs, wait * factor);
  }
}
