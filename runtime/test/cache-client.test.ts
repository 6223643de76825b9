/**
 * The manager's client reads from the informer cache and writes to the API: informers fed by hand, a
 * FakeClient as the API server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Informer, type InformerOptions } from '../src/cache.js';
import { ManualInformer } from '../src/testing/informer.js';
import { isNotFound } from '../src/errors.js';
import { fieldMatcher, labelMatcher } from '../src/internal/selector.js';
import { groupVersion, type ResourceKind } from '../src/kinds.js';
import { createLogger } from '../src/logger.js';
import { Manager, type ManagerOptions } from '../src/manager.js';
import { FakeClient } from '../src/testing/index.js';
import type { KubernetesObject } from '../src/types.js';

interface Guestbook extends KubernetesObject {
  spec?: { size?: number; tags?: string[] };
}
const gv = groupVersion('webapp.example.com', 'v1');
const GuestbookKind = gv.kind<Guestbook>('Guestbook', { plural: 'guestbooks' });
const ClusterKind = gv.kind('Cluster', { plural: 'clusters', namespaced: false });

function guestbook(name: string, namespace = 'default', labels: Record<string, string> = {}): Guestbook {
  return {
    apiVersion: GuestbookKind.apiVersion,
    kind: 'Guestbook',
    metadata: { name, namespace, labels },
    spec: { size: 1, tags: ['a'] },
  };
}

let running: { mgr: Manager; done: Promise<void> } | undefined;
afterEach(async () => {
  await running?.mgr.stop();
  await running?.done;
  running = undefined;
});

/** A started manager over `api` whose informers are ManualInformers seeded from `cached` (by kind). */
async function startManager(
  cached: Record<string, KubernetesObject[]>,
  options: Partial<ManagerOptions> & { api?: FakeClient; hold?: string } = {},
) {
  const { api = new FakeClient(), hold, ...rest } = options;
  const informers = new Map<string, ManualInformer>();
  const made: { kind: string; options: InformerOptions }[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const mgr = Manager.create({
    newClient: () => api,
    newInformer: (kind: ResourceKind<unknown>, informerOptions): Informer => {
      made.push({ kind: kind.kind, options: informerOptions });
      const informer = new ManualInformer(cached[kind.kind] ?? []);
      if (kind.kind === hold) {
        const start = informer.start.bind(informer);
        informer.start = async () => {
          await held;
          await start();
        };
      }
      informers.set(kind.kind, informer);
      return informer;
    },
    metrics: { bindAddress: '0' },
    healthProbeBindAddress: '0',
    handleSignals: false,
    logger: createLogger({ write: () => {} }),
    ...rest,
  });
  mgr.informerFor(GuestbookKind);
  const done = mgr.start();
  running = { mgr, done };
  await mgr.ready();
  return { mgr, api, informers, made, release };
}

describe("the manager's client", () => {
  it('reads from the cache and writes to the API server; apiReader reads the API server', async () => {
    const api = new FakeClient({ objects: [{ ...guestbook('api-only'), spec: { size: 9 } } as Guestbook] });
    const { mgr } = await startManager({ Guestbook: [guestbook('cached')] }, { api });
    expect((await mgr.client.get(GuestbookKind, 'cached', 'default')).metadata?.name).toBe('cached');
    // Not in the cache (the informer has not seen it): NotFound, as controller-runtime's cached client.
    await expect(mgr.client.get(GuestbookKind, 'api-only', 'default')).rejects.toSatisfy(isNotFound);
    expect((await mgr.apiReader.get(GuestbookKind, 'api-only', 'default')).spec?.size).toBe(9);
    expect(mgr.getAPIReader()).toBe(mgr.apiReader);
    expect(mgr.getClient()).toBe(mgr.client);

    await mgr.client.create(GuestbookKind, guestbook('new'));
    expect((await api.get(GuestbookKind, 'new', 'default')).metadata?.name).toBe('new');
    await mgr.client.patch(GuestbookKind, 'api-only', 'default', { spec: { size: 3 } });
    expect((await api.get(GuestbookKind, 'api-only', 'default')).spec?.size).toBe(3);
  });

  it('hands out deep copies: a reconciler mutating what it read does not change the cache', async () => {
    const { mgr, informers } = await startManager({ Guestbook: [guestbook('g')] });
    const first = await mgr.client.get(GuestbookKind, 'g', 'default');
    first.spec!.size = 42;
    first.spec!.tags!.push('mutated');
    first.metadata!.labels!['x'] = 'y';
    const [listed] = await mgr.client.list(GuestbookKind);
    listed!.spec!.tags!.length = 0;
    const again = await mgr.client.get(GuestbookKind, 'g', 'default');
    expect(again.spec).toEqual({ size: 1, tags: ['a'] });
    expect(again.metadata?.labels).toEqual({});
    expect(informers.get('Guestbook')?.get('g', 'default')).toEqual(guestbook('g'));
  });

  it('lists with label and field selectors, sorted by namespace and name', async () => {
    const { mgr } = await startManager({
      Guestbook: [
        guestbook('b', 'default', { app: 'web', tier: 'front' }),
        guestbook('a', 'default', { app: 'web', tier: 'back' }),
        guestbook('c', 'other', { app: 'db' }),
      ],
    });
    const names = async (options: Parameters<Manager['client']['list']>[1]) =>
      (await mgr.client.list(GuestbookKind, options)).map((g) => g.metadata?.name);
    expect(await names({})).toEqual(['a', 'b', 'c']);
    expect(await names({ namespace: 'default' })).toEqual(['a', 'b']);
    expect(await names({ labelSelector: 'app=web,tier!=front' })).toEqual(['a']);
    expect(await names({ labelSelector: 'app in (db, cache)' })).toEqual(['c']);
    expect(await names({ labelSelector: '!tier' })).toEqual(['c']);
    expect(await names({ fieldSelector: 'metadata.namespace=other' })).toEqual(['c']);
  });

  it('starts an informer for a kind read for the first time, and waits for it to sync', async () => {
    const cluster = { apiVersion: ClusterKind.apiVersion, kind: 'Cluster', metadata: { name: 'one' } };
    const { mgr, made, release } = await startManager({ Cluster: [cluster] }, { hold: 'Cluster' });
    expect(made.map((m) => m.kind)).toEqual(['Guestbook']);
    let answered = false;
    const reading = mgr.client.get(ClusterKind, 'one').then((object) => {
      answered = true;
      return object;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(made.map((m) => m.kind)).toEqual(['Guestbook', 'Cluster']);
    expect(answered).toBe(false); // waiting for the informer's first list
    release();
    expect(await reading).toEqual(cluster);
    // The informer stays: the next read of the kind is served at once, by the same informer.
    expect((await mgr.client.list(ClusterKind)).length).toBe(1);
    expect(made.length).toBe(2);
  });

  it('gives up on a kind whose informer does not sync within controller.cacheSyncTimeoutMs', async () => {
    const { mgr } = await startManager(
      {},
      { hold: 'Cluster', controller: { cacheSyncTimeoutMs: 50 }, healthProbeBindAddress: '127.0.0.1:0' },
    );
    await expect(mgr.client.get(ClusterKind, 'one')).rejects.toThrow(
      'timed out after 50 ms waiting for the cache of webapp.example.com/v1/Cluster to sync',
    );
    // The operator stays ready: only the informers it started with count for /readyz.
    const readyz = await fetch(`http://127.0.0.1:${mgr.addresses.healthProbe?.port}/readyz`);
    expect(readyz.status).toBe(200);
  });

  it('with a namespace: reads of other namespaces are errors that name apiReader, not NotFound', async () => {
    const api = new FakeClient({ objects: [guestbook('elsewhere', 'other')] });
    const { mgr, made } = await startManager(
      { Guestbook: [guestbook('here', 'team-a')] },
      { api, cache: { namespace: 'team-a' } },
    );
    expect(made[0]?.options.namespace).toBe('team-a');
    expect((await mgr.client.list(GuestbookKind)).map((g) => g.metadata?.name)).toEqual(['here']);
    expect((await mgr.client.get(GuestbookKind, 'here', 'team-a')).metadata?.name).toBe('here');
    const outside = mgr.client.get(GuestbookKind, 'elsewhere', 'other');
    await expect(outside).rejects.toThrow(
      'cannot get Guestbook other/elsewhere from the cache: it holds namespace "team-a" only',
    );
    await expect(outside).rejects.not.toSatisfy(isNotFound);
    await expect(mgr.client.list(GuestbookKind, { namespace: 'other' })).rejects.toThrow(/mgr\.apiReader/);
    expect((await mgr.apiReader.get(GuestbookKind, 'elsewhere', 'other')).metadata?.name).toBe('elsewhere');
    // Cluster-scoped kinds are not restricted by the namespace.
    await expect(mgr.client.list(ClusterKind)).resolves.toEqual([]);
  });

  it('with a cache selector: an object outside it is NotFound, and the message says why', async () => {
    const { mgr } = await startManager(
      { Guestbook: [guestbook('mine', 'default', { team: 'a' })] },
      { cache: { byObject: [{ kind: GuestbookKind, labelSelector: 'team=a' }] } },
    );
    await expect(mgr.client.get(GuestbookKind, 'theirs', 'default')).rejects.toSatisfy(isNotFound);
    await expect(mgr.client.get(GuestbookKind, 'theirs', 'default')).rejects.toThrow(
      'guestbooks.webapp.example.com "theirs" not found (the cache holds only labels team=a)',
    );
  });

  it('client.disableCacheFor: those kinds are read from the API server, without an informer', async () => {
    const api = new FakeClient({ objects: [guestbook('api-only')] });
    const { mgr, made } = await startManager(
      {},
      { api, client: { disableCacheFor: [ClusterKind, GuestbookKind] } },
    );
    expect((await mgr.client.get(GuestbookKind, 'api-only', 'default')).metadata?.name).toBe('api-only');
    await mgr.client.list(ClusterKind);
    expect(made.map((m) => m.kind)).toEqual(['Guestbook']); // the one informer the test asked for
  });

  it('before start(), reads fail and say when they work', async () => {
    const mgr = Manager.create({
      newClient: () => new FakeClient(),
      newInformer: () => new ManualInformer(),
      logger: createLogger({ write: () => {} }),
    });
    await expect(mgr.client.get(GuestbookKind, 'g', 'default')).rejects.toThrow(
      'the cache is not started: cannot read Guestbook objects before mgr.start()',
    );
  });
});

describe('selectors in memory', () => {
  const object = (labels: Record<string, string>): KubernetesObject => ({
    metadata: { name: 'x', namespace: 'ns', labels },
  });

  it('match labels as the API server does', () => {
    expect(labelMatcher('a=1,b!=2')(object({ a: '1', b: '3' }))).toBe(true);
    expect(labelMatcher('a==1')(object({ a: '2' }))).toBe(false);
    expect(labelMatcher('a notin (1,2)')(object({}))).toBe(true);
    expect(labelMatcher('a notin (1,2)')(object({ a: '2' }))).toBe(false);
    expect(labelMatcher('a in (1, 2),b')(object({ a: '2', b: '' }))).toBe(true);
    expect(labelMatcher('a in (1,2)')(object({}))).toBe(false);
    expect(labelMatcher('!a')(object({ a: '' }))).toBe(false);
    expect(labelMatcher('')(object({}))).toBe(true);
    expect(() => labelMatcher('a in 1')).toThrow('cannot parse the label selector term "a in 1"');
  });

  it('match fields by dotted path', () => {
    expect(fieldMatcher('metadata.name=x,metadata.namespace!=y')(object({}))).toBe(true);
    expect(fieldMatcher('status.phase=Running')(object({}))).toBe(false);
    expect(fieldMatcher('status.phase=')(object({}))).toBe(true);
  });
});
