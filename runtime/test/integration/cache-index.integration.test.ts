/**
 * Field indexes, metadata-only informers, the cache's per-informer figures and the warning for informers
 * a read opens, on the real API server (envtest).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../../src/builder.js';
import { HttpClient, type Client } from '../../src/client.js';
import type { Envtest } from '../../src/envtest/index.js';
import { resourceKind } from '../../src/kinds.js';
import type { KubernetesObject } from '../../src/types.js';
import {
  ConfigMapKind,
  createNamespace,
  eventually,
  httpGet,
  runManager,
  startTestEnv,
  WidgetKind,
  type ConfigMap,
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

const SecretKind = resourceKind({
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
});

function configMap(
  ns: string,
  name: string,
  data: Record<string, string>,
  extra: KubernetesObject['metadata'] = {},
) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns, ...extra },
    data,
  } as ConfigMap;
}

const names = (objects: KubernetesObject[]) => objects.map((o) => o.metadata?.name);

describe('field indexes on the real API server', () => {
  it('a list by index follows creates, updates and deletes, in one namespace or in all', async () => {
    const ns1 = await createNamespace(env, 'index');
    const ns2 = await createNamespace(env, 'index');
    await api.create(ConfigMapKind, configMap(ns1, 'a', { team: 'blue' }));
    running = await runManager(env, (mgr) => {
      mgr.cache.indexField(ConfigMapKind, 'data.team', (o) => {
        const team = (o as ConfigMap).data?.['team'];
        return team ? [team] : [];
      });
    });
    const { mgr } = running;
    const team = (value: string, namespace?: string) =>
      mgr.client.list(ConfigMapKind, {
        index: { name: 'data.team', value },
        ...(namespace ? { namespace } : {}),
      });
    expect(names(await team('blue', ns1))).toEqual(['a']);

    await api.create(ConfigMapKind, configMap(ns1, 'b', { team: 'blue' }));
    await api.create(ConfigMapKind, configMap(ns2, 'c', { team: 'blue' }));
    await eventually(async () => (await team('blue')).length === 3, 'three blue ConfigMaps by the index');
    expect(names(await team('blue', ns2))).toEqual(['c']);

    const a = await api.get(ConfigMapKind, 'a', ns1);
    a.data = { team: 'red' };
    await api.update(ConfigMapKind, a);
    await api.delete(ConfigMapKind, 'c', ns2);
    await eventually(async () => (await team('blue')).length === 1, 'the update and the delete in the index');
    expect(names(await team('blue'))).toEqual(['b']);
    expect(names(await team('red', ns1))).toEqual(['a']);
    // Combined with a label selector: none of them has the label.
    expect(
      await mgr.client.list(ConfigMapKind, {
        index: { name: 'data.team', value: 'red' },
        labelSelector: 'x=y',
      }),
    ).toEqual([]);
  });

  it('an index function that throws costs its object only: logged once, the informer goes on', async () => {
    const ns = await createNamespace(env, 'index-throws');
    await api.create(ConfigMapKind, configMap(ns, 'bad', { team: 'boom' }));
    running = await runManager(env, (mgr) => {
      mgr.cache.indexField(ConfigMapKind, 'team', (o) => {
        const team = (o as ConfigMap).data?.['team'];
        if (team === 'boom') throw new Error('no boom');
        return team ? [team] : [];
      });
    });
    const { mgr, lines } = running;
    const bad = await api.get(ConfigMapKind, 'bad', ns);
    bad.metadata!.labels = { touched: 'yes' };
    await api.update(ConfigMapKind, bad);
    await api.create(ConfigMapKind, configMap(ns, 'good', { team: 'blue' }));
    const blue = () =>
      mgr.client.list(ConfigMapKind, { namespace: ns, index: { name: 'team', value: 'blue' } });
    await eventually(
      async () => (await blue()).length > 0,
      'the ConfigMap created after the failure, indexed',
    );
    expect(names(await blue())).toEqual(['good']);
    await eventually(
      async () => (await mgr.client.get(ConfigMapKind, 'bad', ns)).metadata?.labels?.['touched'] === 'yes',
      'the update of the failing object in the cache',
    );
    const failures = lines.filter(
      (l) => String(l['msg']).startsWith('index function failed') && l['name'] === 'bad',
    );
    expect(failures).toHaveLength(1);
  });
});

describe('metadata-only informers on the real API server', () => {
  it('get and list with { metadataOnly: true } answer metadata without data, from a cache of their own', async () => {
    const ns = await createNamespace(env, 'metadata');
    await api.create(
      ConfigMapKind,
      configMap(
        ns,
        'cm',
        { secret: 'x'.repeat(100) },
        { labels: { app: 'web' }, annotations: { note: 'n' } },
      ),
    );
    running = await runManager(env, () => {}, { cache: { namespace: ns } });
    const { mgr } = running;
    const read = await mgr.client.get(ConfigMapKind, 'cm', ns, { metadataOnly: true });
    expect(read).not.toHaveProperty('data');
    expect(read).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: ns, labels: { app: 'web' }, annotations: { note: 'n' } },
    });
    expect(read.metadata).not.toHaveProperty('managedFields');
    const listed = await mgr.client.list(ConfigMapKind, { namespace: ns, metadataOnly: true });
    expect(names(listed)).toContain('cm');
    expect(listed.every((o) => !('data' in o))).toBe(true);
    // A full read opens the kind's full informer beside it.
    expect((await mgr.client.get(ConfigMapKind, 'cm', ns)).data).toEqual({ secret: 'x'.repeat(100) });
    expect(
      mgr.cache
        .stats()
        .filter((s) => s.kind === 'v1/ConfigMap')
        .map((s) => s.metadataOnly),
    ).toEqual([true, false]);
    // Both informers streamed their list (sendInitialEvents): the API server streams metadata too.
    expect(running.lines.filter((l) => String(l['msg']).includes('did not stream'))).toEqual([]);
    // The API server's own metadata answers, through apiReader.
    const direct = await mgr.apiReader.get(ConfigMapKind, 'cm', ns, { metadataOnly: true });
    expect(direct).not.toHaveProperty('data');
    expect(direct.metadata?.labels).toEqual({ app: 'web' });
    const directList = await mgr.apiReader.list(ConfigMapKind, { namespace: ns, metadataOnly: true });
    expect(directList.map((o) => [o.kind, 'data' in o])).toContainEqual(['ConfigMap', false]);
  });

  it('cached objects read back as the API server sends them, managedFields left out, each its own', async () => {
    const ns = await createNamespace(env, 'lean');
    // What the informers share between objects: labels, long annotation values, owners, finalizers.
    const shared = {
      labels: { 'app.kubernetes.io/name': 'web-frontend', tier: 'front' },
      annotations: { 'example.com/owner-team': 'platform-engineering-and-operations' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web-7d9f',
          uid: '7f1d2c3b-0000-4c0e-9a55-2f0a6f1d4c11',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      finalizers: ['example.com/keep-for-the-test'],
    };
    for (const name of ['a', 'b']) {
      await api.create(ConfigMapKind, configMap(ns, name, { k: name }, { ...shared, generateName: 'web-' }));
    }
    running = await runManager(
      env,
      (mgr) => {
        mgr.informerFor(ConfigMapKind);
        // A handler that changes the object it is given (which it must not do) changes no cached one.
        mgr.informerFor(ConfigMapKind, { metadataOnly: true }).on('add', (object) => {
          object.metadata!.labels!['tier'] = 'changed by a handler';
        });
      },
      { cache: { namespace: ns } },
    );
    const { mgr } = running;
    const withoutManagedFields = <T extends KubernetesObject>(object: T): T => {
      const { managedFields, ...metadata } = object.metadata!;
      expect(managedFields).toBeDefined();
      return { ...object, metadata };
    };
    for (const name of ['a', 'b']) {
      const sent = await mgr.apiReader.get(ConfigMapKind, name, ns);
      expect(await mgr.client.get(ConfigMapKind, name, ns)).toStrictEqual(withoutManagedFields(sent));
      const sentMetadata = await mgr.apiReader.get(ConfigMapKind, name, ns, { metadataOnly: true });
      const cached = await mgr.client.get(ConfigMapKind, name, ns, { metadataOnly: true });
      expect(cached).toStrictEqual(withoutManagedFields(sentMetadata));
      expect(cached.metadata?.labels).toEqual(shared.labels);
    }
    // A read is a copy: changing it changes neither the cache nor the object with the same labels.
    const [a] = await mgr.client.list(ConfigMapKind, { namespace: ns, metadataOnly: true });
    a!.metadata!.labels!['tier'] = 'changed by a reader';
    for (const name of ['a', 'b']) {
      const again = await mgr.client.get(ConfigMapKind, name, ns, { metadataOnly: true });
      expect(again.metadata?.labels).toEqual(shared.labels);
    }
  });

  it('the API server answers a metadata-only watch with PartialObjectMetadata events', async () => {
    const ns = await createNamespace(env, 'metadata-watch');
    await api.create(ConfigMapKind, configMap(ns, 'cm', { k: 'v' }));
    const events: KubernetesObject[] = [];
    const http = new HttpClient(env.kubeConfig);
    const watch = await http.watch(
      `/api/v1/namespaces/${ns}/configmaps`,
      {},
      (_type, object) => events.push(object as KubernetesObject),
      () => {},
      { metadataOnly: true },
    );
    await eventually(() => events.length > 0, 'the ADDED event of the ConfigMap');
    watch.abort();
    http.close();
    expect(events[0]).toMatchObject({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata' });
    expect(events[0]).not.toHaveProperty('data');
  });

  it('owns(kind, { metadataOnly: true }) reconciles the owner from metadata events; the watch follows changes', async () => {
    const ns = await createNamespace(env, 'owns-metadata');
    const seen: KubernetesObject[] = [];
    const reconciled: string[] = [];
    running = await runManager(
      env,
      (mgr) => {
        controllerManagedBy(mgr)
          .for(WidgetKind)
          .owns(ConfigMapKind, {
            metadataOnly: true,
            predicates: [
              {
                create: (object) => (seen.push(object), true),
                update: (_old, object) => (seen.push(object), true),
              },
            ],
          })
          .complete({ reconcile: async (request) => void reconciled.push(request.name) });
      },
      { cache: { namespace: ns } },
    );
    const owner = await api.create(WidgetKind, {
      apiVersion: WidgetKind.apiVersion,
      kind: 'Widget',
      metadata: { name: 'owner', namespace: ns },
      spec: { size: 1 },
    } as Widget);
    await api.create(
      ConfigMapKind,
      configMap(
        ns,
        'child',
        { big: 'y'.repeat(500) },
        {
          ownerReferences: [
            {
              apiVersion: WidgetKind.apiVersion,
              kind: 'Widget',
              name: 'owner',
              uid: owner.metadata!.uid!,
              controller: true,
            },
          ],
        },
      ),
    );
    await eventually(
      () => seen.some((o) => o.metadata?.name === 'child'),
      'the child seen by the metadata watch',
    );
    await eventually(() => reconciled.includes('owner'), 'the owner reconciled');
    // The widget does not change from here: a reconcile of it now comes from its child's update, mapped to
    // it by the owner reference of the child's metadata.
    const before = reconciled.length;
    const child = await api.get(ConfigMapKind, 'child', ns);
    child.metadata!.labels = { changed: 'yes' };
    await api.update(ConfigMapKind, child);
    await eventually(
      () => seen.some((o) => o.metadata?.labels?.['changed'] === 'yes'),
      'the child update seen by the metadata watch',
    );
    for (const object of seen.filter((o) => o.metadata?.name === 'child')) {
      expect(object).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
      expect(object).not.toHaveProperty('data');
    }
    await eventually(() => reconciled.length > before, "the owner reconciled for its child's update");
    expect(reconciled.slice(before).every((name) => name === 'owner')).toBe(true);
    const stats = running.mgr.cache.stats().find((s) => s.kind === 'v1/ConfigMap');
    expect(stats).toMatchObject({ metadataOnly: true, objects: 1 });
    // The metrics endpoint shows both informers' figures.
    const metrics = await httpGet(running.mgr.addresses.metrics, '/metrics');
    expect(metrics.body).toMatch(/kubesmith_cache_objects\{kind="v1\/ConfigMap",metadata_only="true"\} 1/);
    expect(metrics.body).toMatch(
      /kubesmith_cache_estimated_bytes\{kind="envtest.kubesmith.dev\/v1\/Widget",metadata_only="false"\} \d+/,
    );
  });

  it('a metadata-only cache of 2,000 ConfigMaps of 1 KiB is estimated at least 4x smaller than the full one', async () => {
    const ns = await createNamespace(env, 'memory');
    const total = 2_000;
    const value = 'v'.repeat(1024);
    for (let start = 0; start < total; start += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, total - start) }, (_, i) =>
          api.create(ConfigMapKind, configMap(ns, `cm-${start + i}`, { payload: value })),
        ),
      );
    }
    running = await runManager(
      env,
      (mgr) => {
        mgr.informerFor(ConfigMapKind);
        mgr.informerFor(ConfigMapKind, { metadataOnly: true });
      },
      { cache: { namespace: ns } },
    );
    const stats = running.mgr.cache.stats();
    const full = stats.find((s) => !s.metadataOnly)!;
    const metadata = stats.find((s) => s.metadataOnly)!;
    expect(full.objects).toBe(total);
    expect(metadata.objects).toBe(total);
    console.log(
      `cache of ${total} ConfigMaps of 1 KiB: full ${full.estimatedBytes} B (${Math.round(full.estimatedBytes / total)} B each), ` +
        `metadata-only ${metadata.estimatedBytes} B (${Math.round(metadata.estimatedBytes / total)} B each), ` +
        `${(full.estimatedBytes / metadata.estimatedBytes).toFixed(1)}x`,
    );
    expect(full.estimatedBytes).toBeGreaterThanOrEqual(4 * metadata.estimatedBytes);
  }, 180_000);
});

describe('informers opened by reads', () => {
  it("a reconcile's read of an undeclared kind opens a cluster-wide informer with one warning, however often it reads", async () => {
    const ns = await createNamespace(env, 'undeclared');
    for (const name of ['w1', 'w2', 'w3']) {
      await api.create(WidgetKind, {
        apiVersion: WidgetKind.apiVersion,
        kind: 'Widget',
        metadata: { name, namespace: ns },
        spec: { size: 1 },
      } as Widget);
    }
    const reads: string[] = [];
    running = await runManager(env, (mgr) => {
      controllerManagedBy(mgr)
        .for(WidgetKind)
        .complete({
          async reconcile(request) {
            await mgr.client.list(SecretKind, { namespace: request.namespace });
            reads.push(request.name);
          },
        });
    });
    await eventually(
      () => ['w1', 'w2', 'w3'].every((n) => reads.includes(n)),
      'three reconciles that read Secrets',
    );
    const warnings = running.lines.filter(
      (l) => l['level'] === 'warn' && String(l['msg']).includes('no controller declared'),
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.['msg']).toContain('a read opened a cluster-wide informer for v1/Secret');
    expect(String(warnings[0]?.['hint'])).toContain('metadataOnly: true');
    // It points at the reconciler's line that read.
    expect(String(warnings[0]?.['readFrom'])).toMatch(
      /reconcile .*cache-index\.integration\.test\.ts:\d+:\d+/,
    );
  });
});
