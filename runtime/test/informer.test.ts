import { describe, expect, it } from 'vitest';
import { InformerCache, supervisedInformer, type ListWatchLike, type ObjectHandler } from '../src/cache.js';
import { realClock } from '../src/clock.js';
import { ManualInformer } from '../src/testing/informer.js';
import { createLogger } from '../src/logger.js';
import type { KubernetesObject } from '../src/types.js';
import { ManualClock } from './fake-clock.js';

const logger = createLogger({ write: () => {} });

/**
 * A stand-in for client-node's ListWatch with its behaviour on failure: start() resolves either way, and
 * a failed list is reported to the `error` handlers only.
 */
class ScriptedListWatch implements ListWatchLike {
  listed = false;
  starts = 0;
  stops = 0;
  private readonly handlers: Record<string, ((arg?: unknown) => void)[]> = {};
  /** The outcome of each start: true lists, an Error fails. */
  constructor(private readonly script: (true | Error)[]) {}

  on(event: 'add' | 'update' | 'delete', handler: ObjectHandler): void;
  on(event: 'error', handler: (err?: unknown) => void): void;
  on(event: string, handler: ObjectHandler | ((err?: unknown) => void)): void {
    (this.handlers[event] ??= []).push(handler as (arg?: unknown) => void);
  }

  async start(): Promise<void> {
    const outcome = this.script[this.starts++] ?? true;
    if (outcome === true) {
      this.listed = true;
      this.emit('add', { metadata: { name: 'a', namespace: 'default' } });
    } else this.emit('error', outcome);
  }

  async stop(): Promise<void> {
    this.stops++;
  }

  get(): KubernetesObject | undefined {
    return undefined;
  }

  list(): KubernetesObject[] {
    return [];
  }

  emit(event: string, arg?: unknown): void {
    for (const handler of this.handlers[event] ?? []) handler(arg);
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('supervisedInformer', () => {
  it('has synced only once a list succeeded, retrying failed lists after 800 ms, 1.6 s, 3.2 s', async () => {
    const clock = new ManualClock();
    const listWatch = new ScriptedListWatch([
      new Error('refused'),
      new Error('refused'),
      new Error('refused'),
    ]);
    const informer = supervisedInformer(
      listWatch,
      () => listWatch.listed,
      logger,
      clock,
      () => 0,
    );
    const added: string[] = [];
    informer.on('add', (o) => added.push(o.metadata?.name ?? ''));
    let started = false;
    void informer.start().then(() => (started = true));
    await settle();
    expect(informer.hasSynced()).toBe(false);
    expect(started).toBe(false);
    const startedAt: number[] = [];
    for (let ms = 0; ms < 10_000 && listWatch.starts < 4; ms += 100) {
      const before = listWatch.starts;
      clock.advance(100);
      await settle();
      if (listWatch.starts > before) startedAt.push(clock.now());
    }
    expect(startedAt).toEqual([800, 2_400, 5_600]);
    expect(informer.hasSynced()).toBe(true);
    expect(started).toBe(true);
    expect(added).toEqual(['a']);
  });

  /** The delays between the restarts that follow `errors` watch failures, each right after a restart. */
  async function restartDelays(errors: number, random: () => number, gapMs = 0): Promise<number[]> {
    const clock = new ManualClock();
    const listWatch = new ScriptedListWatch([true]);
    const informer = supervisedInformer(listWatch, () => listWatch.listed, logger, clock, random);
    await informer.start();
    const delays: number[] = [];
    for (let i = 0; i < errors; i++) {
      clock.advance(gapMs);
      const failedAt = clock.now();
      const starts = listWatch.starts;
      listWatch.emit('error', new Error('very short watch'));
      // Every delay these tests expect is a multiple of 100 ms.
      while (listWatch.starts === starts) {
        clock.advance(100);
        await settle();
      }
      delays.push(clock.now() - failedAt);
    }
    return delays;
  }

  it("keeps backing off while restarted watches fail again at once, as client-go's reflector: 800 ms doubling, capped at 30 s", async () => {
    expect(await restartDelays(9, () => 0)).toEqual([
      800, 1_600, 3_200, 6_400, 12_800, 25_600, 30_000, 30_000, 30_000,
    ]);
  });

  it('lengthens each delay by up to as much again at random (jitter 1.0), so that informers do not reconnect in step', async () => {
    expect(await restartDelays(3, () => 0.5)).toEqual([1_200, 2_400, 4_800]);
  });

  it('at most 5 restarts in any 10 s of watches that end at once, even at the shortest delays', async () => {
    const delays = await restartDelays(8, () => 0);
    const at = delays.map((_, i) => delays.slice(0, i + 1).reduce((a, b) => a + b, 0));
    const busiest = Math.max(
      ...[0, ...at].map((first) => [0, ...at].filter((t) => t >= first && t < first + 10_000).length),
    );
    expect(busiest).toBeLessThanOrEqual(5);
  });

  it('starts the backoff over after 2 minutes without a failure', async () => {
    expect(await restartDelays(3, () => 0, 120_001)).toEqual([800, 800, 800]);
  });

  it('does not start it over while failures come less than 2 minutes apart', async () => {
    expect(await restartDelays(3, () => 0, 100_000)).toEqual([800, 1_600, 3_200]);
  });

  it('lets a waiting start() return when stopped, and restarts nothing after', async () => {
    const clock = new ManualClock();
    const listWatch = new ScriptedListWatch([new Error('forbidden')]);
    const informer = supervisedInformer(listWatch, () => listWatch.listed, logger, clock);
    const starting = informer.start();
    await settle();
    await informer.stop();
    await starting;
    expect(informer.hasSynced()).toBe(false);
    clock.advance(60_000);
    await settle();
    expect(listWatch.starts).toBe(1);
    expect(listWatch.stops).toBe(1);
  });
});

describe('InformerCache', () => {
  it('makes one informer per kind, in the namespace it was given, and syncs when all have', async () => {
    const made: { kind: string; namespace: string | undefined }[] = [];
    const informers: ManualInformer[] = [];
    const cache = new InformerCache(
      (kind, options) => {
        made.push({ kind: kind.kind, namespace: options.namespace });
        const informer = new ManualInformer();
        informers.push(informer);
        return informer;
      },
      { namespace: 'team-a', byObject: [], syncTimeoutMs: 120_000, clock: realClock },
    );
    const kind = {
      group: 'apps',
      version: 'v1',
      apiVersion: 'apps/v1',
      plural: 'deployments',
      namespaced: true,
    };
    const deployments = cache.informerFor({ ...kind, kind: 'Deployment' });
    expect(cache.informerFor({ ...kind, kind: 'Deployment' })).toBe(deployments);
    cache.informerFor({ ...kind, kind: 'StatefulSet', plural: 'statefulsets' });
    expect(made).toEqual([
      { kind: 'Deployment', namespace: 'team-a' },
      { kind: 'StatefulSet', namespace: 'team-a' },
    ]);
    expect(cache.hasSynced()).toBe(false);
    await cache.start();
    expect(cache.hasSynced()).toBe(true);
    expect(informers.every((informer) => informer.started)).toBe(true);
    await cache.stop();
    expect(informers.some((informer) => informer.started)).toBe(false);
  });
});
