/**
 * The manager's client on a real API server: reads from the informer cache (deep copies, an informer
 * started on the first read of a kind, the manager's namespace and cache selectors respected), writes to
 * the API server; `mgr.apiReader` reads the API server.
 */
import https from 'node:https';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../../src/builder.js';
import { reflectorInformerFactory, type Informer } from '../../src/cache.js';
import { HttpClient, type Client } from '../../src/client.js';
import type { Envtest } from '../../src/envtest/index.js';
import { isNotFound } from '../../src/errors.js';
import { withDefaults } from '../../src/options.js';
import {
  ConfigMapKind,
  createNamespace,
  eventually,
  memoryLogger,
  runManager,
  startTestEnv,
  WidgetKind,
  type RunningManager,
  type Widget,
} from './helpers.js';

let env: Envtest;
let api: Client;
let running: RunningManager | undefined;

beforeAll(async () => {
  env = await startTestEnv();
  api = new HttpClient(env.kubeConfig);
}, 90_000);
afterEach(async () => {
  await running?.mgr.stop();
  running = undefined;
});
afterAll(async () => {
  await env?.stop();
}, 30_000);

function widget(ns: string, name: string, labels: Record<string, string> = {}): Widget {
  return {
    apiVersion: WidgetKind.apiVersion,
    kind: 'Widget',
    metadata: { name, namespace: ns, labels },
    spec: { size: 1 },
  };
}

describe("the manager's client", () => {
  it('a reconciler reads through the cache and writes through the API: it converges, retrying conflicts', async () => {
    const ns = await createNamespace(env, 'cached');
    running = await runManager(env, (mgr) => {
      controllerManagedBy(mgr)
        .for(WidgetKind)
        .complete({
          async reconcile(request) {
            let object: Widget;
            try {
              object = await mgr.client.get(WidgetKind, request.name, request.namespace);
            } catch (error) {
              if (isNotFound(error)) return;
              throw error;
            }
            // Mutating what was read is safe: it is a copy of the cached object.
            object.spec = { size: (object.spec?.size ?? 0) + 1 };
            if ((object.spec.size ?? 0) > 4) return;
            // A stale read (the cache behind the API) is a 409 Conflict: thrown, so retried.
            await mgr.client.update(WidgetKind, object);
          },
        });
    });
    await api.create(WidgetKind, widget(ns, 'counter'));
    await eventually(
      async () => (await api.get(WidgetKind, 'counter', ns)).spec?.size === 4,
      'the widget counted up to 4 by read-modify-write reconciles',
    );
    const { mgr } = running;
    await eventually(
      async () => (await mgr.client.get(WidgetKind, 'counter', ns)).spec?.size === 4,
      'the cache to see the last write',
    );
    // Every cached read was a copy: the mutations above never reached the cache.
    const fromCache = await mgr.client.get(WidgetKind, 'counter', ns);
    fromCache.spec!.size = 100;
    expect((await mgr.client.get(WidgetKind, 'counter', ns)).spec?.size).toBe(4);
  });

  it('reads are served from the cache while the API server is away; apiReader goes to the API server', async () => {
    const ns = await createNamespace(env, 'away');
    await api.create(WidgetKind, widget(ns, 'kept'));
    running = await runManager(env, (mgr) => {
      controllerManagedBy(mgr)
        .for(WidgetKind)
        .complete({ reconcile: async () => {} });
    });
    const { mgr } = running;
    await eventually(
      async () => (await mgr.client.list(WidgetKind, { namespace: ns })).length === 1,
      'the widget in the cache',
    );
    await env.stopApiServer({ kill: true });
    try {
      expect((await mgr.client.get(WidgetKind, 'kept', ns)).metadata?.name).toBe('kept');
      expect((await mgr.client.list(WidgetKind, { namespace: ns })).map((w) => w.metadata?.name)).toEqual([
        'kept',
      ]);
      await expect(mgr.apiReader.get(WidgetKind, 'kept', ns)).rejects.toThrow();
      await expect(mgr.client.create(WidgetKind, widget(ns, 'new'))).rejects.toThrow();
    } finally {
      await env.startApiServer();
    }
  }, 60_000);

  it('the first read of a kind starts its informer; later objects reach the cache by its watch', async () => {
    const ns = await createNamespace(env, 'lazy');
    await api.create(ConfigMapKind, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', namespace: ns },
    });
    running = await runManager(env, (mgr) => {
      controllerManagedBy(mgr)
        .for(WidgetKind)
        .complete({ reconcile: async () => {} });
    });
    const { mgr } = running;
    // No controller watches ConfigMaps: this read starts an informer and waits for its list.
    expect((await mgr.client.get(ConfigMapKind, 'a', ns)).metadata?.name).toBe('a');
    await api.create(ConfigMapKind, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'b', namespace: ns },
      data: { k: 'v' },
    });
    await eventually(
      async () => (await mgr.client.list(ConfigMapKind, { namespace: ns })).length === 2,
      'the ConfigMap created after the first read, in the cache',
    );
    expect((await mgr.client.get(ConfigMapKind, 'b', ns)).data).toEqual({ k: 'v' });
  });

  it("with the manager's namespace, a read of another namespace is an error; apiReader reads it", async () => {
    const watched = await createNamespace(env, 'watched');
    const other = await createNamespace(env, 'other');
    await api.create(WidgetKind, widget(watched, 'inside'));
    await api.create(WidgetKind, widget(other, 'outside'));
    running = await runManager(
      env,
      (mgr) => {
        controllerManagedBy(mgr)
          .for(WidgetKind)
          .complete({ reconcile: async () => {} });
      },
      { cache: { namespace: watched } },
    );
    const { mgr } = running;
    expect((await mgr.client.list(WidgetKind)).map((w) => w.metadata?.namespace)).toEqual([watched]);
    expect((await mgr.client.get(WidgetKind, 'inside', watched)).metadata?.name).toBe('inside');
    await expect(mgr.client.get(WidgetKind, 'outside', other)).rejects.toThrow(
      `cannot get Widget ${other}/outside from the cache: it holds namespace "${watched}" only`,
    );
    expect((await mgr.apiReader.get(WidgetKind, 'outside', other)).metadata?.name).toBe('outside');
  });

  it('with a cache selector, an object outside it is NotFound through the client, found by apiReader', async () => {
    const ns = await createNamespace(env, 'selector');
    await api.create(WidgetKind, widget(ns, 'mine', { team: 'a' }));
    await api.create(WidgetKind, widget(ns, 'theirs', { team: 'b' }));
    running = await runManager(
      env,
      (mgr) => {
        controllerManagedBy(mgr)
          .for(WidgetKind)
          .complete({ reconcile: async () => {} });
      },
      { cache: { byObject: [{ kind: WidgetKind, labelSelector: 'team=a' }] } },
    );
    const { mgr } = running;
    expect((await mgr.client.list(WidgetKind, { namespace: ns })).map((w) => w.metadata?.name)).toEqual([
      'mine',
    ]);
    const theirs = mgr.client.get(WidgetKind, 'theirs', ns);
    await expect(theirs).rejects.toSatisfy(isNotFound);
    await expect(theirs).rejects.toThrow('(the cache holds only labels team=a)');
    expect((await mgr.apiReader.get(WidgetKind, 'theirs', ns)).metadata?.labels).toEqual({ team: 'b' });
  });

  it('informers list in pages and drop managedFields, from the list and from the watch, unless kept', async () => {
    const ns = await createNamespace(env, 'transform');
    for (let i = 0; i < 5; i++) await api.create(WidgetKind, widget(ns, `w${i}`));
    const { logger } = memoryLogger();
    // Pages of 2: the 5 objects take 3 requests, linked by continue tokens.
    const factory = reflectorInformerFactory(
      env.kubeConfig,
      logger,
      withDefaults({ cache: { listPageSize: 2, streamingList: false } }),
    );
    const informers: Informer[] = [factory(WidgetKind, { namespace: ns })];
    informers.push(factory(WidgetKind, { namespace: ns, keepManagedFields: true }));
    try {
      await Promise.all(informers.map((informer) => informer.start()));
      const [stripped, kept] = informers as [Informer, Informer];
      expect(stripped.list(ns).map((w) => w.metadata?.name)).toEqual(['w0', 'w1', 'w2', 'w3', 'w4']);
      expect(stripped.list(ns).filter((w) => w.metadata?.managedFields !== undefined)).toEqual([]);
      expect(kept.list(ns).every((w) => (w.metadata?.managedFields?.length ?? 0) > 0)).toBe(true);

      await api.patch(WidgetKind, 'w0', ns, { metadata: { labels: { changed: 'yes' } } });
      await eventually(() => stripped.get('w0', ns)?.metadata?.labels?.['changed'] === 'yes', 'the update');
      expect(stripped.get('w0', ns)?.metadata?.managedFields).toBeUndefined();
      await eventually(() => kept.get('w0', ns)?.metadata?.labels?.['changed'] === 'yes', 'the update, kept');
      expect(kept.get('w0', ns)?.metadata?.managedFields?.length).toBeGreaterThan(0);
    } finally {
      await Promise.all(informers.map((informer) => informer.stop()));
    }
  });
});

const FALLBACK = 'the API server did not stream the list; reading it in pages';

/** How many requests of `verb` on `resource` the API server has answered (its apiserver_request_total). */
async function requestsServed(server: Envtest, verb: string, resource: string): Promise<number> {
  const options: https.RequestOptions = {};
  await server.kubeConfig.applyToHTTPSOptions(options);
  const url = new URL('/metrics', server.kubeConfig.getCurrentCluster()!.server);
  const text = await new Promise<string>((resolve, reject) => {
    const request = https.get(url, { ...options, timeout: 10_000 }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve(body));
    });
    request.on('timeout', () => request.destroy(new Error('GET /metrics timed out')));
    request.on('error', reject);
  });
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    if (!line.includes(`verb="${verb}"`) || !line.includes(`resource="${resource}"`)) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

describe('informers stream their list', () => {
  /** Starts an informer of the Widgets of a new namespace holding three; returns it with its log. */
  async function informerOfThree(server: Envtest, client: Client) {
    const ns = await createNamespace(server, 'stream');
    for (let i = 0; i < 3; i++) await client.create(WidgetKind, widget(ns, `w${i}`));
    const { logger, lines } = memoryLogger();
    const informer = reflectorInformerFactory(
      server.kubeConfig,
      logger,
      withDefaults(),
    )(WidgetKind, {
      namespace: ns,
    });
    return { ns, informer, lines };
  }

  it('in one watch (sendInitialEvents), without a list request, and keep watching on it', async () => {
    const listsBefore = await requestsServed(env, 'LIST', 'widgets');
    const { ns, informer, lines } = await informerOfThree(env, api);
    await informer.start();
    try {
      expect(informer.list(ns).map((w) => w.metadata?.name)).toEqual(['w0', 'w1', 'w2']);
      expect(await requestsServed(env, 'LIST', 'widgets')).toBe(listsBefore);
      expect(lines.filter((line) => line['msg'] === FALLBACK)).toEqual([]);
      await api.create(WidgetKind, widget(ns, 'late'));
      await eventually(() => informer.get('late', ns), 'the object created after the list');
    } finally {
      await informer.stop();
    }
  });

  it('from a server with WatchList off (422), read in pages instead, and say so', async () => {
    const old = await startTestEnv({ apiServerArgs: ['--feature-gates=WatchList=false'] });
    const oldApi = new HttpClient(old.kubeConfig);
    try {
      const listsBefore = await requestsServed(old, 'LIST', 'widgets');
      const { ns, informer, lines } = await informerOfThree(old, oldApi);
      await informer.start();
      try {
        expect(informer.list(ns).map((w) => w.metadata?.name)).toEqual(['w0', 'w1', 'w2']);
        expect(await requestsServed(old, 'LIST', 'widgets')).toBe(listsBefore + 1);
        const fallback = lines.find((line) => line['msg'] === FALLBACK);
        expect(fallback?.['reason']).toMatchObject({
          name: 'ApiError',
          message: expect.stringContaining(
            'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
          ) as string,
        });
        await oldApi.create(WidgetKind, widget(ns, 'late'));
        await eventually(() => informer.get('late', ns), 'the object created after the list');
      } finally {
        await informer.stop();
      }
    } finally {
      oldApi.close();
      await old.stop();
    }
  }, 90_000);
});
