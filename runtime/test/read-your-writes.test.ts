/**
 * Read-your-own-writes through the manager: its client's cached reads wait for its own writes until the
 * informer reports them, and its controllers defer the reconciles of objects with such a write, while
 * other keys go on. Informers fed by hand, a FakeClient as the API server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../src/builder.js';
import type { Informer } from '../src/cache.js';
import { groupVersion, type ResourceKind } from '../src/kinds.js';
import { createLogger } from '../src/logger.js';
import { Manager, type ManagerOptions } from '../src/manager.js';
import type { Request } from '../src/reconcile.js';
import { FakeClient } from '../src/testing/index.js';
import { ManualInformer } from '../src/testing/informer.js';
import type { KubernetesObject } from '../src/types.js';

interface Guestbook extends KubernetesObject {
  spec?: { size?: number };
}
const GuestbookKind = groupVersion('webapp.example.com', 'v1').kind<Guestbook>('Guestbook', {
  plural: 'guestbooks',
});

function guestbook(name: string, size = 1): Guestbook {
  return {
    apiVersion: GuestbookKind.apiVersion,
    kind: 'Guestbook',
    metadata: { name, namespace: 'default' },
    spec: { size },
  };
}

let running: Manager | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

/** A manager over a FakeClient whose Guestbook informer is fed by hand; `setup` adds controllers. */
async function startManager(options: Partial<ManagerOptions> = {}, setup?: (mgr: Manager) => void) {
  const api = new FakeClient();
  const informer = new ManualInformer();
  const mgr = Manager.create({
    newClient: () => api,
    newInformer: (_kind: ResourceKind<unknown>): Informer => informer,
    metrics: { bindAddress: '0' },
    healthProbeBindAddress: '0',
    handleSignals: false,
    logger: createLogger({ write: () => {} }),
    ...options,
  });
  mgr.informerFor(GuestbookKind);
  setup?.(mgr);
  void mgr.start();
  running = mgr;
  await mgr.ready();
  /** The informer catches up with the API server: it reports the object as the server holds it now. */
  const catchUp = async (name: string) => informer.apply(await api.get(GuestbookKind, name, 'default'));
  return { mgr, api, informer, catchUp };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the manager's client, reading its own writes", () => {
  it('a get after an update waits for the informer to report it, and returns the object written', async () => {
    const { mgr, api, catchUp } = await startManager();
    await api.create(GuestbookKind, guestbook('a'));
    await catchUp('a');
    const read = await mgr.client.get(GuestbookKind, 'a', 'default');
    await mgr.client.update(GuestbookKind, { ...read, spec: { size: 2 } });
    let seen: Guestbook | undefined;
    const reading = mgr.client.get(GuestbookKind, 'a', 'default').then((object) => (seen = object));
    await sleep(50);
    expect(seen).toBeUndefined();
    await catchUp('a');
    await reading;
    expect(seen?.spec?.size).toBe(2);
    expect(
      await mgr.metrics.value('kubesmith_read_your_writes_waits_total', {
        kind: 'webapp.example.com/v1/Guestbook',
        outcome: 'seen',
      }),
    ).toBe(1);
  });

  it('a list waits for the writes of its kind; a create and a delete count too', async () => {
    const { mgr, api, informer, catchUp } = await startManager();
    await api.create(GuestbookKind, guestbook('old'));
    await catchUp('old');
    await mgr.client.create(GuestbookKind, guestbook('new'));
    await mgr.client.delete(GuestbookKind, 'old', 'default');
    let names: string[] | undefined;
    const listing = mgr.client
      .list(GuestbookKind, { namespace: 'default' })
      .then((list) => (names = list.map((o) => o.metadata?.name ?? '')));
    await catchUp('new');
    await sleep(50);
    expect(names).toBeUndefined(); // the delete is not seen yet
    informer.remove(guestbook('old'));
    await listing;
    expect(names).toEqual(['new']);
  });

  it('after readYourWritesTimeoutMs, a read returns what the cache holds, counted as a timeout', async () => {
    const { mgr, api, catchUp } = await startManager({ client: { readYourWritesTimeoutMs: 100 } });
    await api.create(GuestbookKind, guestbook('a'));
    await catchUp('a');
    const read = await mgr.client.get(GuestbookKind, 'a', 'default');
    await mgr.client.update(GuestbookKind, { ...read, spec: { size: 2 } });
    const started = Date.now();
    const stale = await mgr.client.get(GuestbookKind, 'a', 'default');
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(stale.spec?.size).toBe(1);
    expect(
      await mgr.metrics.value('kubesmith_read_your_writes_waits_total', {
        kind: 'webapp.example.com/v1/Guestbook',
        outcome: 'timeout',
      }),
    ).toBe(1);
    // Forgotten: the next read does not wait again.
    const again = Date.now();
    await mgr.client.get(GuestbookKind, 'a', 'default');
    expect(Date.now() - again).toBeLessThan(50);
  });

  it('with client.readYourWrites: false, a get after a write returns the cached object at once', async () => {
    const { mgr, api, catchUp } = await startManager({ client: { readYourWrites: false } });
    await api.create(GuestbookKind, guestbook('a'));
    await catchUp('a');
    const read = await mgr.client.get(GuestbookKind, 'a', 'default');
    await mgr.client.update(GuestbookKind, { ...read, spec: { size: 2 } });
    expect((await mgr.client.get(GuestbookKind, 'a', 'default')).spec?.size).toBe(1);
  });

  it('does not wait for writes the cache will never hold: other namespaces, objects its selector leaves out', async () => {
    const { mgr } = await startManager({
      cache: { namespace: 'default', byObject: [{ kind: GuestbookKind, labelSelector: 'app=web' }] },
    });
    await mgr.client.create(GuestbookKind, guestbook('unlabelled'));
    await mgr.client.create(GuestbookKind, {
      ...guestbook('elsewhere'),
      metadata: { name: 'elsewhere', namespace: 'other', labels: { app: 'web' } },
    });
    const started = Date.now();
    expect(await mgr.client.list(GuestbookKind)).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('a controller of the manager', () => {
  it('defers the reconcile of an object with an unseen own write, and reconciles other keys meanwhile', async () => {
    const reconciled: string[] = [];
    let write: (() => Promise<void>) | undefined;
    const { mgr, api, catchUp } = await startManager({}, (m) =>
      controllerManagedBy(m)
        .for(GuestbookKind)
        .complete({
          async reconcile(request: Request) {
            reconciled.push(request.name);
            if (request.name === 'a' && write) {
              const run = write;
              write = undefined;
              await run();
              // Asks to run again at once: it would read its old object without the deferral.
              return { requeueAfter: 1 };
            }
            return undefined;
          },
        }),
    );
    await api.create(GuestbookKind, guestbook('a'));
    await api.create(GuestbookKind, guestbook('b'));
    write = async () => {
      const read = await mgr.client.get(GuestbookKind, 'a', 'default');
      await mgr.client.update(GuestbookKind, { ...read, spec: { size: 2 } });
    };
    await catchUp('a');
    while (write) await sleep(5);
    await sleep(30);
    await catchUp('b'); // another key, while a's write is unseen
    await sleep(300);
    expect(reconciled).toEqual(['a', 'b']);
    const deferrals = await mgr.metrics.value('kubesmith_reconcile_deferrals_total', {
      controller: 'guestbook',
    });
    expect(deferrals).toBeGreaterThan(0);
    await catchUp('a');
    await sleep(200);
    expect(reconciled.slice(2)).toContain('a');
  });
});
