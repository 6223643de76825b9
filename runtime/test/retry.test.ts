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

  it('gives up after `steps` attempts with the last conflict, waiting about 10 ms between them', async () => {
    const at: number[] = [];
    const started = performance.now();
    const outcome = await retryOnConflict(async () => {
      at.push(performance.now() - started);
      throw conflict();
    }).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(ApiError);
    expect((outcome as ApiError).statusCode).toBe(409);
    expect(at).toHaveLength(5);
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(9);
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
    let last = performance.now();
    await onError(
      { steps: 4, durationMs: 5, factor: 4, jitter: 1, capMs: 30 },
      () => true,
      async () => {
        const now = performance.now();
        waits.push(now - last);
        last = now;
        throw new Error('again');
      },
      { random: () => 0.5 },
    ).catch(() => undefined);
    // 5 * 1.5, 20 * 1.5, then min(80, 30) * 1.5: lower bounds exact, upper bounds with room for load.
    const [, first, second, capped] = waits as [number, number, number, number];
    expect(first).toBeGreaterThanOrEqual(7);
    expect(second).toBeGreaterThanOrEqual(29);
    expect(capped).toBeGreaterThanOrEqual(44);
    expect(capped).toBeLessThan(100); // uncapped it would be 120
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
