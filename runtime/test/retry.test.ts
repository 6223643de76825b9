import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/errors.js';
import { DEFAULT_BACKOFF, DEFAULT_RETRY, onError, retryOnConflict } from '../src/retry.js';

const conflict = () => new ApiError(409, 'Conflict', 'the object has been modified');

describe('retryOnConflict', () => {
  it('has client-go DefaultRetry and DefaultBackoff parameters', () => {
    expect(DEFAULT_RETRY).toEqual({ steps: 5, durationMs: 10, factor: 1, jitter: 0.1 });
    expect(DEFAULT_BACKOFF).toEqual({ steps: 4, durationMs: 10, factor: 5, jitter: 0.1 });
  });

  it('runs the function again after a conflict and returns what it returns', async () => {
    let calls = 0;
    const result = await retryOnConflict(async () => {
      if (++calls < 3) throw conflict();
      return 'written';
    });
    expect(result).toBe('written');
    expect(calls).toBe(3);
  });

  it('gives up after `steps` attempts with the last conflict, waiting 10 ms (plus up to 10 %) between them', async () => {
    let calls = 0;
    const waits: number[] = [];
    const outcome = await retryOnConflict(
      async () => {
        calls++;
        throw conflict();
      },
      DEFAULT_RETRY,
      { sleep: async (ms) => void waits.push(ms) },
    ).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(ApiError);
    expect((outcome as ApiError).statusCode).toBe(409);
    expect(calls).toBe(5);
    expect(waits).toHaveLength(4);
    for (const ms of waits) {
      expect(ms).toBeGreaterThanOrEqual(10);
      expect(ms).toBeLessThan(11);
    }
  });

  it('does not retry other errors', async () => {
    let calls = 0;
    await expect(
      retryOnConflict(async () => {
        calls++;
        throw new ApiError(404, 'NotFound', 'gone');
      }),
    ).rejects.toThrow('gone');
    await expect(
      retryOnConflict(async () => {
        calls++;
        throw new ApiError(409, 'AlreadyExists', 'exists');
      }),
    ).rejects.toThrow('exists');
    expect(calls).toBe(2);
  });

  it('grows the wait by factor, caps it and adds jitter', async () => {
    const waits: number[] = [];
    let calls = 0;
    await onError(
      { steps: 4, durationMs: 5, factor: 4, jitter: 1, capMs: 30 },
      () => true,
      async () => {
        calls++;
        throw new Error('again');
      },
      { random: () => 0.5, sleep: async (ms) => void waits.push(ms) },
    ).catch(() => undefined);
    // 4 attempts, 3 waits: 5 * 1.5, 20 * 1.5, then min(80, 30) * 1.5 (uncapped it would be 120).
    expect(calls).toBe(4);
    expect(waits).toEqual([7.5, 30, 45]);
  });

  it('stops waiting when its signal is aborted', async () => {
    const controller = new AbortController();
    const pending = retryOnConflict(
      async () => {
        throw conflict();
      },
      { steps: 10, durationMs: 10_000, factor: 1, jitter: 0 },
      { signal: controller.signal },
    );
    controller.abort(new Error('leader election lost'));
    await expect(pending).rejects.toThrow('leader election lost');
  });
});
