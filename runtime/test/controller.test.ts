import { describe, expect, it } from 'vitest';
import { controllerManagedBy, type ControllerHost } from '../src/builder.js';
import { type Informer } from '../src/cache.js';
import { ManualInformer } from '../src/testing/informer.js';
import type { Controller } from '../src/controller.js';
import { groupVersion, resourceKind, type ResourceKind } from '../src/kinds.js';
import { createLogger } from '../src/logger.js';
import { Metrics } from '../src/metrics.js';
import type { Request, Result } from '../src/reconcile.js';
import type { KubernetesObject } from '../src/types.js';
import { ManualClock } from './fake-clock.js';

const Guestbook = groupVersion('webapp.example.com', 'v1').kind('Guestbook', { plural: 'guestbooks' });
const Deployment = resourceKind({
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  plural: 'deployments',
  namespaced: true,
});
const ConfigMap = resourceKind({
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
});

function guestbook(name: string, uid = `uid-${name}`): KubernetesObject {
  return {
    apiVersion: Guestbook.apiVersion,
    kind: 'Guestbook',
    metadata: { name, namespace: 'default', uid },
  };
}

/** A manager stand-in: hand-fed informers, a manual clock, logs kept in memory. */
function host(clock = new ManualClock()) {
  const informers = new Map<string, ManualInformer>();
  const controllers: Controller[] = [];
  const lines: string[] = [];
  const h: ControllerHost & { informer(kind: ResourceKind<unknown>): ManualInformer } = {
    logger: createLogger({ write: (line) => lines.push(line), level: 'debug' }),
    metrics: new Metrics(),
    clock,
    informerFor(kind): Informer {
      return h.informer(kind);
    },
    informer(kind) {
      let informer = informers.get(kind.kind);
      if (!informer) informers.set(kind.kind, (informer = new ManualInformer()));
      return informer;
    },
    add: (controller) => controllers.push(controller),
  };
  return { h, clock, controllers, lines };
}

/** A reconciler that records its calls and answers from a script. */
function recorder(
  answer: (request: Request, call: number) => Promise<Result | void> | Result | void = () => {},
) {
  const calls: Request[] = [];
  return {
    calls,
    reconcile: async (request: Request) => {
      calls.push(request);
      return answer(request, calls.length);
    },
  };
}

/** Lets queued microtasks and worker loops run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('a controller built with controllerManagedBy', () => {
  it('reconciles objects of its kind from the first list and from later events', async () => {
    const { h, controllers } = host();
    const reconciler = recorder();
    controllerManagedBy(h).for(Guestbook).complete(reconciler);
    const informer = h.informer(Guestbook);
    informer.apply(guestbook('a'));
    await informer.start();
    const running = controllers[0]!.start();
    await settle();
    informer.apply(guestbook('b'));
    await settle();
    expect(reconciler.calls).toEqual([
      { namespace: 'default', name: 'a' },
      { namespace: 'default', name: 'b' },
    ]);
    await controllers[0]!.stop();
    await running;
  });

  it('maps an owned object to its controller owner of the for kind, and ignores other owners', async () => {
    const { h, controllers } = host();
    const reconciler = recorder();
    controllerManagedBy(h).for(Guestbook).owns(Deployment).complete(reconciler);
    await h.informer(Guestbook).start();
    await h.informer(Deployment).start();
    const running = controllers[0]!.start();
    const owned = (owner: string, kind = 'Guestbook', controller = true): KubernetesObject => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name: `${owner}-web`,
        namespace: 'default',
        ownerReferences: [{ apiVersion: 'webapp.example.com/v1', kind, name: owner, uid: 'u', controller }],
      },
    });
    h.informer(Deployment).apply(owned('shop'));
    h.informer(Deployment).apply(owned('other', 'Other'));
    h.informer(Deployment).apply(owned('loose', 'Guestbook', false));
    await settle();
    expect(reconciler.calls).toEqual([{ namespace: 'default', name: 'shop' }]);
    await controllers[0]!.stop();
    await running;
  });

  it('maps watched objects with the map function', async () => {
    const { h, controllers } = host();
    const reconciler = recorder();
    controllerManagedBy(h)
      .for(Guestbook)
      .watches(ConfigMap, (o) => [{ namespace: 'default', name: o.metadata?.labels?.['guestbook'] ?? '' }])
      .complete(reconciler);
    await h.informer(ConfigMap).start();
    const running = controllers[0]!.start();
    h.informer(ConfigMap).apply({
      metadata: { name: 'cm', namespace: 'default', labels: { guestbook: 'g1' } },
    });
    await settle();
    expect(reconciler.calls).toEqual([{ namespace: 'default', name: 'g1' }]);
    await controllers[0]!.stop();
    await running;
  });

  it('retries a failing reconcile with backoff, then forgets the failures once it succeeds', async () => {
    const { h, controllers, clock, lines } = host();
    const reconciler = recorder((_request, call) => {
      if (call <= 3) throw new Error(`boom ${call}`);
    });
    controllerManagedBy(h).for(Guestbook).complete(reconciler);
    const informer = h.informer(Guestbook);
    informer.apply(guestbook('a'));
    await informer.start();
    const controller = controllers[0]!;
    const running = controller.start();
    await settle();
    expect(reconciler.calls).toHaveLength(1);
    const retryTimes: number[] = [];
    for (let ms = 0; ms < 200 && reconciler.calls.length < 4; ms++) {
      const before = reconciler.calls.length;
      clock.advance(1);
      await settle();
      if (reconciler.calls.length > before) retryTimes.push(clock.now());
    }
    // 5 ms, then 10 ms later, then 20 ms later.
    expect(retryTimes).toEqual([5, 15, 35]);
    expect(controller.queue.retries('default/a')).toBe(0);
    expect(
      await h.metrics.value('controller_runtime_reconcile_errors_total', { controller: 'guestbook' }),
    ).toBe(3);
    expect(
      await h.metrics.value('controller_runtime_reconcile_total', {
        controller: 'guestbook',
        result: 'success',
      }),
    ).toBe(1);
    const errorLine = JSON.parse(lines.find((line) => line.includes('Reconciler error'))!) as Record<
      string,
      unknown
    >;
    expect(errorLine).toMatchObject({
      level: 'error',
      controller: 'guestbook',
      namespace: 'default',
      name: 'a',
    });
    expect(errorLine['reconcileID']).toMatch(/^[0-9a-f-]{36}$/);
    await controller.stop();
    await running;
  });

  it('reconciles again after requeueAfter', async () => {
    const { h, controllers, clock } = host();
    const reconciler = recorder((_request, call) => (call === 1 ? { requeueAfter: 30_000 } : {}));
    controllerManagedBy(h).for(Guestbook).complete(reconciler);
    h.informer(Guestbook).apply(guestbook('a'));
    await h.informer(Guestbook).start();
    const running = controllers[0]!.start();
    await settle();
    clock.advance(29_999);
    await settle();
    expect(reconciler.calls).toHaveLength(1);
    clock.advance(1);
    await settle();
    expect(reconciler.calls).toHaveLength(2);
    await controllers[0]!.stop();
    await running;
  });

  it('never runs two reconciles of one object at once, even with several workers', async () => {
    const { h, controllers } = host();
    let active = 0;
    let maxActive = 0;
    const release: (() => void)[] = [];
    const reconciler = recorder(async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      await new Promise<void>((resolve) => release.push(resolve));
      active--;
    });
    controllerManagedBy(h).for(Guestbook).withOptions({ maxConcurrentReconciles: 4 }).complete(reconciler);
    const informer = h.informer(Guestbook);
    await informer.start();
    const running = controllers[0]!.start();
    informer.apply(guestbook('a'));
    await settle();
    informer.apply({ ...guestbook('a'), metadata: { ...guestbook('a').metadata, labels: { x: '1' } } });
    informer.apply(guestbook('b'));
    await settle();
    expect(reconciler.calls.map((r) => r.name)).toEqual(['a', 'b']);
    expect(maxActive).toBe(2); // a and b in parallel, never a twice
    release.shift()!();
    await settle();
    expect(reconciler.calls.map((r) => r.name)).toEqual(['a', 'b', 'a']);
    for (const resolve of release.splice(0)) resolve();
    await settle();
    for (const resolve of release.splice(0)) resolve();
    await controllers[0]!.stop();
    await running;
  });

  it('stop waits for an in-flight reconcile to finish', async () => {
    const { h, controllers } = host(new ManualClock());
    let finished = false;
    let release!: () => void;
    const reconciler = recorder(async () => {
      await new Promise<void>((resolve) => (release = resolve));
      finished = true;
    });
    controllerManagedBy(h).for(Guestbook).complete(reconciler);
    h.informer(Guestbook).apply(guestbook('a'));
    await h.informer(Guestbook).start();
    const running = controllers[0]!.start();
    await settle();
    const stopped = controllers[0]!.stop();
    await settle();
    expect(finished).toBe(false);
    release();
    await stopped;
    await running;
    expect(finished).toBe(true);
  });

  it('refuses a controller without a kind to reconcile', () => {
    const { h } = host();
    expect(() => controllerManagedBy(h).complete(recorder())).toThrow(/needs for\(kind\)/);
    expect(() => controllerManagedBy(h).for(Guestbook).for(Deployment)).toThrow(/reconciles one kind/);
  });
});

describe('a controller with the priority queue', () => {
  /** A controller on Guestbook whose informer's first list has `names`, listed but not yet reconciled. */
  async function started(names: string[], options: { usePriorityQueue?: boolean } = {}) {
    const { h, controllers, clock } = host();
    const reconciler = recorder();
    controllerManagedBy(h).for(Guestbook).withOptions(options).complete(reconciler);
    const informer = h.informer(Guestbook);
    for (const name of names) informer.apply(guestbook(name));
    await informer.start();
    return { h, controller: controllers[0]!, informer, reconciler, clock };
  }

  it('reconciles a change before the objects of the first list it came after', async () => {
    const { controller, informer, reconciler } = await started(['a', 'b', 'c']);
    informer.apply(guestbook('new'));
    informer.apply({ ...guestbook('b'), metadata: { ...guestbook('b').metadata, labels: { x: '1' } } });
    const running = controller.start();
    await settle();
    expect(reconciler.calls.map((r) => r.name)).toEqual(['new', 'b', 'a', 'c']);
    await controller.stop();
    await running;
  });

  it('with usePriorityQueue off, reconciles in the order the events came', async () => {
    const { controller, informer, reconciler } = await started(['a', 'b', 'c'], { usePriorityQueue: false });
    informer.apply(guestbook('new'));
    const running = controller.start();
    await settle();
    expect(reconciler.calls.map((r) => r.name)).toEqual(['a', 'b', 'c', 'new']);
    await controller.stop();
    await running;
  });

  /** A reconciler that records its calls, holds `blocker` until released, and answers from a script. */
  function gated(answer: (request: Request, call: number) => Result | void = () => {}) {
    let release: () => void = () => {};
    const reconciler = recorder(async (request, call) => {
      if (request.name === 'blocker') await new Promise<void>((resolve) => (release = resolve));
      return answer(request, call);
    });
    return { reconciler, release: () => release() };
  }

  it('queues an update that changes nothing (a resync) at low priority, behind changes', async () => {
    const { h, controllers } = host();
    const { reconciler, release } = gated();
    controllerManagedBy(h).for(Guestbook).complete(reconciler);
    const informer = h.informer(Guestbook);
    await informer.start();
    const controller = controllers[0]!;
    const running = controller.start();
    const versioned = (name: string, resourceVersion: string) => ({
      ...guestbook(name),
      metadata: { ...guestbook(name).metadata, resourceVersion },
    });
    informer.apply(versioned('resynced', '1'));
    informer.apply(versioned('changed', '1'));
    await settle();
    informer.apply(guestbook('blocker'));
    await settle();
    // While the worker is busy: a resync of one object, then a change of another.
    informer.apply(versioned('resynced', '1'));
    informer.apply(versioned('changed', '2'));
    release();
    await settle();
    expect(reconciler.calls.map((r) => r.name)).toEqual([
      'resynced',
      'changed',
      'blocker',
      'changed',
      'resynced',
    ]);
    await controller.stop();
    await running;
  });

  it("takes a map function's priority, a Result's, and keeps a failed key's on its retry", async () => {
    const { h, controllers, clock } = host();
    const { reconciler, release } = gated((request) => {
      if (request.name === 'fails') throw new Error('boom');
      if (request.name === 'requeued') return { requeueAfter: 10, priority: 50 };
    });
    const configMap = (name: string, priority?: number): KubernetesObject => ({
      metadata: {
        name,
        namespace: 'default',
        ...(priority !== undefined ? { labels: { priority: String(priority) } } : {}),
      },
    });
    controllerManagedBy(h)
      .named('mapped')
      .watches(ConfigMap, (o) => {
        const priority = o.metadata?.labels?.['priority'];
        return [
          {
            namespace: 'default',
            name: o.metadata!.name!,
            ...(priority ? { priority: Number(priority) } : {}),
          },
        ];
      })
      .complete(reconciler);
    const informer = h.informer(ConfigMap);
    informer.apply(configMap('replay-1'));
    informer.apply(configMap('replay-2', 0)); // the map function's own priority wins over the replay's
    informer.apply(configMap('fails'));
    await informer.start();
    informer.apply(configMap('requeued', 20));
    const controller = controllers[0]!;
    const running = controller.start();
    await settle();
    expect(reconciler.calls.map((r) => r.name)).toEqual(['requeued', 'replay-2', 'replay-1', 'fails']);
    // The worker held: the retry of `fails` (at -100, the priority it was taken at), the requeue (at the
    // Result's 50) and changes at 10 and -50 wait together.
    informer.apply(configMap('blocker'));
    await settle();
    informer.apply(configMap('minus-50', -50));
    informer.apply(configMap('ten', 10));
    clock.advance(1000);
    release();
    await settle();
    expect(reconciler.calls.map((r) => r.name).slice(4, 9)).toEqual([
      'blocker',
      'requeued',
      'ten',
      'minus-50',
      'fails',
    ]);
    await controller.stop();
    await running;
  });

  it('reports the depth of its queue in all and by priority, with a bounded number of series', async () => {
    const { h, controller, informer } = await started(['a', 'b', 'c']);
    informer.apply(guestbook('new'));
    informer.apply({ ...guestbook('b'), metadata: { ...guestbook('b').metadata, labels: { x: '1' } } });
    const depth = (labels: Record<string, string> = {}) =>
      h.metrics.value(labels['priority'] === undefined ? 'workqueue_depth' : 'workqueue_depth_by_priority', {
        name: 'guestbook',
        ...labels,
      });
    expect(await depth()).toBe(4);
    expect(await depth({ priority: '-100' })).toBe(2);
    expect(await depth({ priority: '0' })).toBe(2);
    for (let priority = 1; priority <= 10; priority++)
      controller.queue.add(`default/p${priority}`, { priority });
    expect(await depth()).toBe(14);
    // -100 and 0, then 1 to 6 have series of their own; 7 to 10 share "other".
    expect(await depth({ priority: '6' })).toBe(1);
    expect(await depth({ priority: '7' })).toBeUndefined();
    expect(await depth({ priority: 'other' })).toBe(4);
    const running = controller.start();
    await settle();
    expect(await depth()).toBe(0);
    for (const priority of ['-100', '0', '1', '6', 'other']) expect(await depth({ priority })).toBe(0);
    await controller.stop();
    await running;
  });
});
