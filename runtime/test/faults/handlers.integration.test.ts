/**
 * Fault: a predicate, a map function or an informer event handler throws. The exception is logged with
 * the controller's name and counted in `controller_runtime_handler_errors_total`; every other handler of
 * the same informer still gets every object, and nothing reaches the process as an unhandled rejection
 * or an uncaught exception. Both paths of an informer are exercised: objects of the first list, and
 * objects that arrive on the watch.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../../src/builder.js';
import { HttpClient, type Client } from '../../src/client.js';
import type { Envtest } from '../../src/envtest/index.js';
import type { Request } from '../../src/reconcile.js';
import {
  createNamespace,
  eventually,
  runManager,
  startTestEnv,
  WidgetKind,
  type RunningManager,
  type Widget,
} from '../integration/helpers.js';

let env: Envtest;
let client: Client;
let running: RunningManager | undefined;
const escaped: unknown[] = [];
const onEscape = (error: unknown) => escaped.push(error);

beforeAll(async () => {
  env = await startTestEnv();
  client = new HttpClient(env.kubeConfig);
  process.on('unhandledRejection', onEscape);
  process.on('uncaughtException', onEscape);
}, 90_000);
afterEach(async () => {
  await running?.mgr.stop();
  running = undefined;
});
afterAll(async () => {
  process.off('unhandledRejection', onEscape);
  process.off('uncaughtException', onEscape);
  await env?.stop();
}, 30_000);

function widget(ns: string, name: string): Widget {
  return { apiVersion: WidgetKind.apiVersion, kind: 'Widget', metadata: { name, namespace: ns }, spec: {} };
}

const names = (calls: Request[], ns: string) =>
  [...new Set(calls.filter((c) => c.namespace === ns).map((c) => c.name))].sort();

describe('an event handler that throws', () => {
  it('is isolated: logged with its controller, counted, and every other handler gets every object', async () => {
    const ns = await createNamespace(env, 'handlers');
    // Two objects in the first list, two more on the watch; the `bad-*` ones make the handlers throw.
    for (const name of ['bad-0', 'good-0']) await client.create(WidgetKind, widget(ns, name));
    const innocent: Request[] = [];
    const predicateOwner: Request[] = [];
    const mapOwner: Request[] = [];
    const rawHandlerSaw: string[] = [];
    const isBad = (name: string | undefined) => name?.startsWith('bad-') === true;
    running = await runManager(
      env,
      (mgr) => {
        // Registered first on the shared Widget informer, so their exceptions come before the others.
        mgr.informerFor(WidgetKind).on('add', (object) => {
          if (isBad(object.metadata?.name)) throw new Error('raw handler failed');
          rawHandlerSaw.push(object.metadata?.name ?? '');
        });
        controllerManagedBy(mgr)
          .for(WidgetKind, {
            predicates: [
              {
                create: (object) => {
                  if (isBad(object.metadata?.name)) throw new Error('predicate failed');
                  return true;
                },
              },
            ],
          })
          .named('throwing-predicate')
          .complete({ reconcile: async (request) => void predicateOwner.push(request) });
        controllerManagedBy(mgr)
          .watches(WidgetKind, (object) => {
            if (isBad(object.metadata?.name)) throw new TypeError('map failed');
            return [{ namespace: object.metadata?.namespace ?? '', name: object.metadata?.name ?? '' }];
          })
          .named('throwing-map')
          .complete({ reconcile: async (request) => void mapOwner.push(request) });
        controllerManagedBy(mgr)
          .for(WidgetKind)
          .named('innocent')
          .complete({ reconcile: async (request) => void innocent.push(request) });
      },
      { controller: { cacheSyncTimeoutMs: 20_000 } },
    );
    for (const name of ['bad-1', 'good-1']) await client.create(WidgetKind, widget(ns, name));

    const all = ['bad-0', 'bad-1', 'good-0', 'good-1'];
    await eventually(
      () => names(innocent, ns).length === 4,
      `the innocent controller to see all 4 widgets (saw ${JSON.stringify(names(innocent, ns))})`,
      15_000,
    );
    expect(names(innocent, ns)).toEqual(all);
    await eventually(
      () => names(predicateOwner, ns).length === 2 && names(mapOwner, ns).length === 2,
      'good',
    );
    expect(names(predicateOwner, ns)).toEqual(['good-0', 'good-1']);
    expect(names(mapOwner, ns)).toEqual(['good-0', 'good-1']);
    expect(rawHandlerSaw.filter((n) => !n.startsWith('bad') && all.includes(n)).sort()).toEqual([
      'good-0',
      'good-1',
    ]);

    const { mgr, lines } = running;
    // Other namespaces' widgets (other tests) go through the same handlers: at least our two bad ones.
    for (const controller of ['throwing-predicate', 'throwing-map']) {
      const count = await mgr.metrics.value('controller_runtime_handler_errors_total', {
        controller,
        event: 'create',
      });
      expect(count).toBeGreaterThanOrEqual(2);
    }
    const logged = lines.filter((line) => line['msg'] === 'event handler failed');
    expect(logged.some((l) => l['controller'] === 'throwing-predicate' && l['name'] === 'bad-0')).toBe(true);
    expect(logged.some((l) => l['controller'] === 'throwing-map' && l['name'] === 'bad-1')).toBe(true);
    expect(logged.some((l) => l['kind'] === 'Widget' && l['controller'] === undefined)).toBe(true);
    expect(escaped).toEqual([]);
    expect(
      (await mgr.metrics.value('controller_runtime_handler_errors_total', {
        controller: 'innocent',
        event: 'create',
      })) ?? 0,
    ).toBe(0);
  }, 60_000);
});
