import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/errors.js';
import { retryOnConflict } from '../src/retry.js';

const conflict = () => new ApiError(409, 'Conflict', 'the object has been modified');

describe('retryOnConflict', () => {
  it('runs the function again after a conflict, and returns its result', async () => {
    let calls = 0;
    const waits: number[] = [];
    const result = await retryOnConflict(
      async () => {
        calls++;
        if (calls < 3) throw conflict();
        return 'done';
      },
      {},
      async (ms) => void waits.push(ms),
    );
    expect(result).toBe('done');
    expect(calls).toBe(3);
    // client-go's DefaultRetry: 10 ms, lengthened by up to 10 % at random.
    expect(waits).toHaveLength(2);
    for (const ms of waits) {
      expect(ms).toBeGreaterThanOrEqual(10);
      expect(ms).toBeLessThanOrEqual(11);
    }
  });

  it('gives up after `steps` attempts with the last conflict', async () => {
    let calls = 0;
    const attempt = retryOnConflict(
      async () => {
        calls++;
        throw conflict();
      },
      { steps: 4 },
      async () => {},
    );
    await expect(attempt).rejects.toMatchObject({ statusCode: 409 });
    expect(calls).toBe(4);
  });

  it('does not retry other errors, nor AlreadyExists', async () => {
    for (const error of [new ApiError(404, 'NotFound', 'gone'), new ApiError(409, 'AlreadyExists', 'x')]) {
      let calls = 0;
      await expect(
        retryOnConflict(async () => {
          calls++;
          throw error;
        }),
      ).rejects.toBe(error);
      expect(calls).toBe(1);
    }
  });

  it('caps a growing wait', async () => {
    const waits: number[] = [];
    await expect(
      retryOnConflict(
        async () => {
          throw conflict();
        },
        { steps: 6, durationMs: 100, factor: 4, jitter: 0, capMs: 1000 },
        async (ms) => void waits.push(ms),
      ),
    ).rejects.toThrow();
    expect(waits).toEqual([100, 400, 1000, 1000, 1000]);
  });
});
