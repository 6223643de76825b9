/**
 * Controllers on real informers: the events of the `for` kind, of owned objects and of watched kinds
 * reconcile the right object; requeueAfter, retries with backoff and finalizers behave as with
 * controller-runtime.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../../src/builder.js';
import { HttpClient, type Client } from '../../src/client.js';
import type { Envtest } from '../../src/envtest/index.js';
import { ApiError, isNotFound } from '../../src/errors.js';
import { EventKind } from '../../src/events.js';
import {
  addFinalizer,
  containsFinalizer,
  removeFinalizer,
  setControllerReference,
} from '../../src/helpers.js';
import { generationChangedPredicate, labelChangedPredicate } from '../../src/predicate.js';
import type { Request } from '../../src/reconcile.js';
import type { KubernetesObject } from '../../src/types.js';
import {
  ConfigMapKind,
  createNamespace,
  DeploymentKind,
  eventually,
  gate,
  runManager,
  startTestEnv,
  WidgetKind,
  type Deployment,
  type RunningManager,
  type Widget,
} from './helpers.js';

let env: Envtest;
let client: Client;
let running: RunningManager | undefined;

beforeAll(async () => {
  env = await startTestEnv();
  client = new HttpClient(env.kubeConfig);
}, 90_000);
afterEach(async () => {
  await running?.mgr.stop();
  running = undefined;
});
afterAll(async () => {
  await env?.stop();
}, 30_000);

function widget(ns: string, name: string, size = 1): Widget {
  return {
    apiVersion: WidgetKind.apiVersion,
    kind: 'Widget',
    metadata: { name, namespace: ns },
    spec: { size },
  };
}

/** Reconciles of `name` in `ns` recorded by a reconciler. */
function countOf(calls: Request[], ns: string, name: string): number {
  return calls.filter((call) => call.namespace === ns && call.name === name).length;
}

describe('a controller for a custom resource', () => {
  it('reconciles on create, update and delete of the object', async () => {
    const ns = await createNamespace(env, 'for');
    const calls: Request[] = [];
    const seen: (number | 'gone')[] = [];
    running = await runManager(env, (mgr) => {
      controllerManagedBy(mgr)
        .for(WidgetKind)
        .complete({
          async reconcile(request) {
            calls.push(request);
            try {
              seen.push((await client.get(WidgetKind, request.name, request.namespace)).spec?.size ?? 0);
            } catch (error) {
              if (!isNotFound(error)) throw error;
              seen.push('gone');
            }
          },
        });
    });
    await client.create(WidgetKind, widget(ns, 'w', 1));
    await eventually(() => seen.includes(1), 'a reconcile of the created widget');
    expect(calls[0]).toEqual({ namespace: ns, name: 'w' });
    await client.patch(WidgetKind, 'w', ns, { spec: { size: 2 } });
    await eventually(() => seen.includes(2), 'a reconcile after the update');
    await client.delete(WidgetKind, 'w', ns);
    await eventually(() => seen.includes('gone'), 'a reconcile after the delete');
    expect(calls.every((call) => call.namespace === ns && call.name === 'w')).toBe(true);
  });

  it('owns(Deployment): a hand edit of an owned Deployment reconciles its owner, which repairs it', async () => {
    const ns = await createNamespace(env, 'owns');
    const calls: Request[] = [];
    running = await runManager(env, (mgr) => {
      controllerManagedBy(mgr)
        .for(WidgetKind)
        .owns(DeploymentKind)
        .complete({
          async reconcile(request) {
            calls.push(request);
            const owner = await client.get(WidgetKind, request.name, request.namespace);
            const replicas = owner.spec?.size ?? 1;
            const labels = { widget: request.name };
            let deployment: Deployment | undefined;
            try {
              deployment = await client.get(DeploymentKind, request.name, request.namespace);
            } catch (error) {
              if (!isNotFound(error)) throw error;
            }
            if (!deployment) {
              const desired: Deployment = {
                apiVersion: 'apps/v1',
                kind: 'Deployment',
                metadata: { name: request.name, namespace: request.namespace },
                spec: {
                  replicas,
                  selector: { matchLabels: labels },
                  template: {
                    metadata: { labels },
                    spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
                  },
                },
              };
              await client.create(DeploymentKind, setControllerReference(owner, desired, WidgetKind));
            } else if (deployment.spec?.replicas !== replicas) {
              await client.update(DeploymentKind, { ...deployment, spec: { ...deployment.spec!, replicas } });
            }
          },
        });
    });
    const owner = await client.create(WidgetKind, widget(ns, 'web', 2));
    const deployment = await eventually(
      () => client.get(DeploymentKind, 'web', ns),
      'the reconciler to create the Deployment',
    );
    expect(deployment.spec?.replicas).toBe(2);
    expect(deployment.metadata?.ownerReferences).toEqual([
      {
        apiVersion: WidgetKind.apiVersion,
        kind: 'Widget',
        name: 'web',
        uid: owner.metadata?.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    const before = countOf(calls, ns, 'web');
    // Someone scales the Deployment by hand: the owner is reconciled and puts it back.
    await client.patch(DeploymentKind, 'web', ns, { spec: { replicas: 7 } });
    await eventually(
      async () =>
        (await client.get(DeploymentKind, 'web', ns)).spec?.replicas === 2 &&
        countOf(calls, ns, 'web') > before,
      'the owner to be reconciled and restore 2 replicas',
    );
    // A Deployment without an owner reference reconciles nothing.
    const callsBefore = calls.length;
    await client.create(DeploymentKind, {
      ...deployment,
      metadata: { name: 'stray', namespace: ns },
    });
    await client.patch(WidgetKind, 'web', ns, { metadata: { labels: { touched: 'yes' } } });
    await eventually(() => calls.length > callsBefore, 'the reconcile of the labelled widget');
    expect(calls.some((call) => call.name === 'stray')).toBe(false);
  });

  it('watches(kind, map): events of another kind reconcile what the map returns', async () => {
    const ns = await createNamespace(env, 'watches');
    const calls: Request[] = [];
    running = await runManager(env, (mgr) => {
      controllerManagedBy(mgr)
        .for(WidgetKind)
        .watches(ConfigMapKind, (object) => {
          const target = object.metadata?.labels?.['widget'];
          return target ? [{ namespace: object.metadata?.namespace ?? '', name: target }] : [];
        })
        .complete({
          async reconcile(request) {
            calls.push(request);
          },
        });
    });
    await client.create(WidgetKind, widget(ns, 'target'));
    await eventually(() => countOf(calls, ns, 'target') === 1, 'the first reconcile of the widget');
    await client.create(ConfigMapKind, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: ns, labels: { widget: 'target' } },
      data: { colour: 'blue' },
    });
    await eventually(() => countOf(calls, ns, 'target') === 2, 'a reconcile for the created ConfigMap');
    await client.patch(ConfigMapKind, 'settings', ns, { data: { colour: 'red' } });
    await eventually(() => countOf(calls, ns, 'target') === 3, 'a reconcile for the changed ConfigMap');
    expect(calls.some((call) => call.name === 'settings')).toBe(false);
  });

  it('requeueAfter reconciles again after the delay, without any event', async () => {
    const ns = await createNamespace(env, 'requeue');
    const times: number[] = [];
    running = await runManager(env, (mgr) => {
      controllerManagedBy(mgr)
        .for(WidgetKind)
        .complete({
          async reconcile(request) {
            if (request.namespace !== ns) return;
            times.push(Date.now());
            return times.length < 3 ? { requeueAfter: 300 } : {};
          },
        });
    });
    await client.create(WidgetKind, widget(ns, 'periodic'));
    await eventually(() => times.length >= 3, 'three reconciles', 5_000);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(290);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(290);
    expect(
      await running.mgr.metrics.value('controller_runtime_reconcile_total', {
        controller: 'widget',
        result: 'requeue_after',
      }),
    ).toBe(2);
  });

  it('a failing reconcile is retried with growing delays, counted, and does not hold up other objects', async () => {
    const ns = await createNamespace(env, 'backoff');
    const failing: number[] = [];
    const healthy: number[] = [];
    running = await runManager(env, (mgr) => {
      controllerManagedBy(mgr)
        .for(WidgetKind)
        .complete({
          async reconcile(request) {
            if (request.namespace !== ns) return;
            if (request.name === 'healthy') {
              healthy.push(Date.now());
              return;
            }
            failing.push(Date.now());
            // A 409 as the API server answers it, for the first five attempts.
            if (failing.length <= 5) throw new ApiError(409, 'Conflict', 'the object has been modified');
          },
        });
    });
    await client.create(WidgetKind, widget(ns, 'flaky'));
    await eventually(() => failing.length >= 6, 'five failures and a success', 5_000);
    // Delays 5, 10, 20, 40, 80 ms: each gap at least the one before it (allowing timer slack).
    const gaps = failing.slice(1).map((time, i) => time - failing[i]!);
    expect(gaps[4]!).toBeGreaterThanOrEqual(75);
    expect(gaps[4]!).toBeGreaterThan(gaps[0]!);
    await client.create(WidgetKind, widget(ns, 'healthy'));
    await eventually(() => healthy.length === 1, 'the healthy widget to be reconciled');
    const metrics = running.mgr.metrics;
    expect(await metrics.value('controller_runtime_reconcile_errors_total', { controller: 'widget' })).toBe(
      5,
    );
    expect(
      await metrics.value('controller_runtime_reconcile_total', { controller: 'widget', result: 'error' }),
    ).toBe(5);
    expect(await metrics.value('workqueue_retries_total', { name: 'widget' })).toBe(5);
    const errorLine = running.lines.find((line) => line['msg'] === 'Reconciler error');
    expect(errorLine).toMatchObject({
      controller: 'widget',
      namespace: ns,
      name: 'flaky',
      reconcileID: expect.any(String),
    });
    expect(failing).toHaveLength(6);
  });

  it('a finalizer added by the reconciler keeps a deleted object until the reconciler removes it', async () => {
    const ns = await createNamespace(env, 'finalizer');
    const finalizer = 'envtest.kubesmith.dev/cleanup';
    const cleanup = gate();
    const cleanedUp: string[] = [];
    running = await runManager(env, (mgr) => {
      controllerManagedBy(mgr)
        .for(WidgetKind)
        .complete({
          async reconcile(request) {
            if (request.namespace !== ns) return;
            let object: Widget;
            try {
              object = await client.get(WidgetKind, request.name, request.namespace);
            } catch (error) {
              if (isNotFound(error)) return;
              throw error;
            }
            if (!object.metadata?.deletionTimestamp) {
              if (addFinalizer(object, finalizer)) await client.update(WidgetKind, object);
              return;
            }
            if (!containsFinalizer(object, finalizer)) return;
            await cleanup.promise;
            cleanedUp.push(request.name);
            removeFinalizer(object, finalizer);
            await client.update(WidgetKind, object);
          },
        });
    });
    await client.create(WidgetKind, widget(ns, 'guarded'));
    await eventually(
      async () => containsFinalizer(await client.get(WidgetKind, 'guarded', ns), finalizer),
      'the reconciler to add its finalizer',
    );
    await client.delete(WidgetKind, 'guarded', ns);
    const pending = await client.get(WidgetKind, 'guarded', ns);
    expect(pending.metadata?.deletionTimestamp).toBeTruthy();
    expect(pending.metadata?.finalizers).toEqual([finalizer]);
    expect(cleanedUp).toEqual([]);
    cleanup.open();
    await eventually(
      () => client.get(WidgetKind, 'guarded', ns).then(() => false, isNotFound),
      'the object to go once the finalizer is removed',
    );
    expect(cleanedUp).toEqual(['guarded']);
  });
});

describe('predicates', () => {
  /**
   * Two filtered controllers and a witness: the witness's map function sees every event of the informer
   * they share, in the same synchronous dispatch in which the filtered controllers enqueue or not. Once the
   * witness has seen an event, `workqueue_adds_total` of each filtered controller says whether it let it in.
   */
  it('generationChanged lets spec changes through, not status or label changes; labelChanged the reverse', async () => {
    const ns = await createNamespace(env, 'predicates');
    const witnessed: KubernetesObject[] = [];
    const noop = { reconcile: async () => {} };
    running = await runManager(env, (mgr) => {
      controllerManagedBy(mgr)
        .named('by-generation')
        .for(WidgetKind, { predicates: [generationChangedPredicate] })
        .complete(noop);
      controllerManagedBy(mgr)
        .named('by-labels')
        .for(WidgetKind, { predicates: [labelChangedPredicate] })
        .complete(noop);
      controllerManagedBy(mgr)
        .named('witness')
        .watches(WidgetKind, (object) => {
          if (object.metadata?.namespace === ns) witnessed.push(object);
          return [];
        })
        .complete(noop);
    });
    const adds = async (name: string) =>
      (await running!.mgr.metrics.value('workqueue_adds_total', { name })) ?? 0;
    const witness = (what: string, seen: (object: Widget) => boolean) =>
      eventually(() => witnessed.some((object) => seen(object as Widget)), `the witness to see ${what}`);

    const created = await client.create(WidgetKind, widget(ns, 'filtered', 1));
    await witness('the creation', () => true);
    const base = { generation: await adds('by-generation'), labels: await adds('by-labels') };
    expect(base.generation).toBeGreaterThan(0); // creations pass both

    await client.updateStatus(WidgetKind, { ...created, status: { ready: true } });
    await witness('the status change', (o) => o.status?.ready === true);
    expect(await adds('by-generation')).toBe(base.generation);
    expect(await adds('by-labels')).toBe(base.labels);

    await client.patch(WidgetKind, 'filtered', ns, { metadata: { labels: { tier: 'gold' } } });
    await witness('the label change', (o) => o.metadata?.labels?.['tier'] === 'gold');
    expect(await adds('by-generation')).toBe(base.generation);
    expect(await adds('by-labels')).toBe(base.labels + 1);

    await client.patch(WidgetKind, 'filtered', ns, { spec: { size: 5 } });
    await witness('the spec change', (o) => o.spec?.size === 5);
    expect(await adds('by-generation')).toBe(base.generation + 1);
    expect(await adds('by-labels')).toBe(base.labels + 1);

    // Deletions pass both.
    await client.delete(WidgetKind, 'filtered', ns);
    await eventually(
      async () =>
        (await adds('by-generation')) === base.generation + 2 &&
        (await adds('by-labels')) === base.labels + 2,
      'the deletion to be enqueued by both',
    );
  });
});

describe('events', () => {
  it('a controller records events.k8s.io/v1 Events about its objects; a repeat counts into a series', async () => {
    const ns = await createNamespace(env, 'events');
    let reconciles = 0;
    running = await runManager(env, (mgr) => {
      const recorder = mgr.getEventRecorderFor('widget-controller');
      controllerManagedBy(mgr)
        .for(WidgetKind)
        .complete({
          async reconcile(request) {
            if (request.namespace !== ns) return;
            const object = await client.get(WidgetKind, request.name, request.namespace);
            await recorder.event(object, 'Normal', 'Scaled', 'Scale', `scaled to ${object.spec?.size ?? 0}`);
            if ((object.spec?.size ?? 0) > 4) {
              await recorder.event(object, 'Warning', 'TooLarge', 'Validate', 'x'.repeat(2000));
            }
            reconciles++;
          },
        });
    });
    const created = await client.create(WidgetKind, widget(ns, 'noisy', 3));
    await eventually(() => reconciles >= 1, 'the first reconcile');
    // The same event again (a label change does not change the note): counted, not created again.
    await client.patch(WidgetKind, 'noisy', ns, { metadata: { labels: { again: 'yes' } } });
    await eventually(() => reconciles >= 2, 'the reconcile of the label change');
    await client.patch(WidgetKind, 'noisy', ns, { spec: { size: 5 } });
    const events = await eventually(async () => {
      const list = await client.list(EventKind, { namespace: ns });
      return list.some((e) => e.reason === 'TooLarge') ? list : undefined;
    }, 'the warning event');
    const scaled = events.filter((e) => e.reason === 'Scaled' && e.note === 'scaled to 3');
    expect(scaled).toHaveLength(1);
    expect(scaled[0]).toMatchObject({
      type: 'Normal',
      action: 'Scale',
      reportingController: 'widget-controller',
      regarding: {
        apiVersion: WidgetKind.apiVersion,
        kind: 'Widget',
        name: 'noisy',
        namespace: ns,
        uid: created.metadata?.uid,
      },
      series: { count: 2 },
    });
    expect(scaled[0]!.reportingInstance).toMatch(/^widget-controller-/);
    const warning = events.find((e) => e.reason === 'TooLarge')!;
    expect(warning.type).toBe('Warning');
    expect(warning.note).toHaveLength(1024);

    // The core/v1 view, which `kubectl describe widget noisy` reads.
    const CoreEventKind = { ...EventKind, group: '', version: 'v1', apiVersion: 'v1' };
    const core = (await client.list(CoreEventKind, {
      namespace: ns,
      fieldSelector: 'involvedObject.name=noisy,reason=Scaled',
    })) as unknown as { involvedObject: { kind: string; uid: string }; count?: number }[];
    expect(core.length).toBeGreaterThanOrEqual(1);
    expect(core[0]!.involvedObject).toMatchObject({ kind: 'Widget', uid: created.metadata?.uid });
  });
});

describe('event recorders of controllers', () => {
  it("the builder hands each reconciler its controller's recorder: Events carry the controller's name", async () => {
    const ns = await createNamespace(env, 'recorders');
    running = await runManager(env, (mgr) => {
      for (const [name, reason] of [
        [undefined, 'Reconciled'],
        ['widget-auditor', 'Audited'],
      ] as const) {
        const builder = controllerManagedBy(mgr).for(WidgetKind);
        (name ? builder.named(name) : builder).complete({
          async reconcile(request, { recorder }) {
            if (request.namespace !== ns) return;
            const object = await mgr.client.get(WidgetKind, request.name, request.namespace);
            await recorder.event(object, 'Normal', reason, 'Reconcile', `${reason} ${request.name}`);
          },
        });
      }
    });
    const created = await client.create(WidgetKind, widget(ns, 'reported'));
    const events = await eventually(async () => {
      const list = await client.list(EventKind, { namespace: ns });
      return list.length >= 2 ? list : undefined;
    }, 'an event from each controller');
    expect(events.map((e) => [e.reason, e.reportingController, e.regarding.uid, e.note]).sort()).toEqual([
      ['Audited', 'widget-auditor', created.metadata?.uid, 'Audited reported'],
      ['Reconciled', 'widget', created.metadata?.uid, 'Reconciled reported'],
    ]);
    for (const event of events)
      expect(event.reportingInstance).toMatch(new RegExp(`^${event.reportingController}-`));
  });
});

describe('scope and concurrency', () => {
  it('a manager with a namespace (WATCH_NAMESPACE) reconciles objects of that namespace only', async () => {
    const watched = await createNamespace(env, 'watched');
    const other = await createNamespace(env, 'other');
    const calls: Request[] = [];
    running = await runManager(
      env,
      (mgr) => {
        controllerManagedBy(mgr)
          .for(WidgetKind)
          .complete({
            async reconcile(request) {
              calls.push(request);
            },
          });
      },
      { cache: { namespace: watched } },
    );
    await client.create(WidgetKind, widget(other, 'ignored'));
    await client.create(WidgetKind, widget(watched, 'mine'));
    await eventually(() => calls.length > 0, 'a reconcile');
    await client.patch(WidgetKind, 'ignored', other, { spec: { size: 2 } });
    await client.patch(WidgetKind, 'mine', watched, { spec: { size: 2 } });
    await eventually(() => calls.length > 1, 'the reconcile of the update');
    expect(calls.every((call) => call.namespace === watched)).toBe(true);
  });

  it("cache.byObject: only objects matching a kind's label and field selectors are cached and reconciled", async () => {
    const ns = await createNamespace(env, 'selected');
    const events: string[] = [];
    running = await runManager(
      env,
      (mgr) => {
        controllerManagedBy(mgr)
          .for(WidgetKind)
          .complete({ reconcile: async () => {} });
        controllerManagedBy(mgr)
          .named('recorder')
          .watches(WidgetKind, (object) => {
            events.push(`${object.metadata?.name}:${object.metadata?.labels?.['managed'] ?? '-'}`);
            return [];
          })
          .complete({ reconcile: async () => {} });
      },
      {
        cache: {
          byObject: [
            { kind: WidgetKind, labelSelector: 'managed=true', fieldSelector: `metadata.namespace=${ns}` },
          ],
        },
      },
    );
    const managed = (name: string, value?: string) => ({
      ...widget(ns, name),
      metadata: { name, namespace: ns, labels: (value ? { managed: value } : {}) as Record<string, string> },
    });
    await client.create(WidgetKind, managed('plain'));
    await client.create(WidgetKind, managed('no', 'false'));
    await client.create(WidgetKind, managed('yes', 'true'));
    await eventually(() => events.includes('yes:true'), 'the matching widget');
    expect(events).toEqual(['yes:true']);
    // Labelled later: it enters the cache; unlabelled: it leaves it (a delete event).
    await client.patch(WidgetKind, 'plain', ns, { metadata: { labels: { managed: 'true' } } });
    await eventually(() => events.includes('plain:true'), 'the widget labelled later');
    await client.patch(WidgetKind, 'yes', ns, { metadata: { labels: { managed: 'no-longer' } } });
    await eventually(() => events.length === 3, 'the widget that stopped matching');
    expect(events[2]).toMatch(/^yes:/);
    const other = await createNamespace(env, 'unselected');
    await client.create(WidgetKind, {
      ...managed('elsewhere', 'true'),
      metadata: { name: 'elsewhere', namespace: other, labels: { managed: 'true' } },
    });
    await client.patch(WidgetKind, 'no', ns, { metadata: { labels: { managed: 'true' } } });
    await eventually(() => events.includes('no:true'), 'the last change');
    expect(events.some((e) => e.startsWith('elsewhere'))).toBe(false);
  });

  it('maxConcurrentReconciles runs different objects at once, never one object twice at once', async () => {
    const ns = await createNamespace(env, 'concurrent');
    let inFlight = 0;
    let most = 0;
    const busy = new Set<string>();
    let overlapping = false;
    const release = gate();
    const witnessed: KubernetesObject[] = [];
    const finished: string[] = [];
    running = await runManager(env, (mgr) => {
      controllerManagedBy(mgr)
        .for(WidgetKind)
        .withOptions({ maxConcurrentReconciles: 3 })
        .complete({
          async reconcile(request) {
            if (request.namespace !== ns) return;
            if (busy.has(request.name)) overlapping = true;
            busy.add(request.name);
            most = Math.max(most, ++inFlight);
            await release.promise;
            inFlight--;
            busy.delete(request.name);
            finished.push(request.name);
          },
        });
      controllerManagedBy(mgr)
        .named('witness')
        .watches(WidgetKind, (object) => {
          if (object.metadata?.namespace === ns) witnessed.push(object);
          return [];
        })
        .complete({ reconcile: async () => {} });
    });
    await client.create(WidgetKind, widget(ns, 'a'));
    await client.create(WidgetKind, widget(ns, 'b'));
    await eventually(() => inFlight === 2, 'two reconciles at once');
    // A third worker is free, but a change of `a` waits until a's reconcile is over.
    await client.patch(WidgetKind, 'a', ns, { spec: { size: 2 } });
    await eventually(
      () => witnessed.some((o) => o.metadata?.name === 'a' && (o as Widget).spec?.size === 2),
      'the change of a to reach the informer',
    );
    expect(inFlight).toBe(2);
    // Two more objects: one takes the free worker, the other waits for one.
    await client.create(WidgetKind, widget(ns, 'c'));
    await client.create(WidgetKind, widget(ns, 'd'));
    await eventually(() => inFlight === 3, 'three reconciles at once');
    await eventually(
      () => witnessed.some((o) => o.metadata?.name === 'd'),
      'the creation of d to reach the informer',
    );
    expect(inFlight).toBe(3);
    release.open();
    await eventually(() => finished.length >= 5, 'a, b, c, d and a again to be reconciled');
    expect(finished.sort()).toEqual(['a', 'a', 'b', 'c', 'd']);
    expect(most).toBe(3);
    expect(overlapping).toBe(false);
  });
});
