/**
 * The cache's field indexes and metadata-only informers, on informers fed by hand (ManualInformer); the
 * FakeClient's indexes, which unit tests of reconcilers use. On the real API server:
 * integration/cache-index.integration.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { InformerCache, type InformerOptions } from '../src/cache.js';
import { HttpClient } from '../src/client.js';
import { realClock } from '../src/clock.js';
import { groupVersion, type ResourceKind } from '../src/kinds.js';
import { createLogger } from '../src/logger.js';
import { Metrics } from '../src/metrics.js';
import { estimateBytes, estimateTotalBytes } from '../src/internal/object-size.js';
import { FakeClient } from '../src/testing/index.js';
import { ManualInformer } from '../src/testing/informer.js';
import type { KubernetesObject } from '../src/types.js';

interface Pod extends KubernetesObject {
  spec?: { nodeName?: string };
}
const PodKind = groupVersion('', 'v1').kind<Pod>('Pod', { plural: 'pods' });
const NodeKind = groupVersion('', 'v1').kind('Node', { plural: 'nodes', namespaced: false });

function pod(name: string, namespace: string, nodeName?: string, labels: Record<string, string> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels, resourceVersion: String(Math.random()) },
    spec: nodeName === undefined ? {} : { nodeName },
  };
}

const byNode = (object: KubernetesObject) => {
  const node = (object as Pod).spec?.nodeName;
  return node ? [node] : [];
};

function logged() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** An InformerCache over ManualInformers (one per informer it makes, kept in `informers`). */
function cacheOf(seed: KubernetesObject[] = [], config: { namespace?: string; metrics?: Metrics } = {}) {
  const informers: { kind: string; options: InformerOptions; informer: ManualInformer }[] = [];
  const { logger, lines } = logged();
  const cache = new InformerCache(
    (kind: ResourceKind<unknown>, options) => {
      const informer = new ManualInformer(seed.filter((o) => o.kind === kind.kind));
      informers.push({ kind: kind.kind, options, informer });
      return informer;
    },
    {
      namespace: config.namespace,
      byObject: [],
      syncTimeoutMs: 1_000,
      clock: realClock,
      logger,
      ...(config.metrics ? { metrics: config.metrics } : {}),
    },
  );
  const informer = (kind: string, metadataOnly = false) =>
    informers.find((i) => i.kind === kind && !!i.options.metadataOnly === metadataOnly)!.informer;
  return { cache, informers, informer, lines };
}

const names = (objects: KubernetesObject[]) => objects.map((o) => o.metadata?.name);

describe('field indexes', () => {
  it('list by index follows adds, updates and deletes, per namespace or in all of them', async () => {
    const { cache, informer } = cacheOf([pod('a', 'ns1', 'node-1'), pod('b', 'ns2', 'node-1')]);
    cache.indexField(PodKind, 'spec.nodeName', byNode);
    await cache.start();
    const onNode = (node: string, namespace?: string) =>
      cache.list(PodKind, {
        index: { name: 'spec.nodeName', value: node },
        ...(namespace ? { namespace } : {}),
      });

    expect(names(await onNode('node-1'))).toEqual(['a', 'b']);
    expect(names(await onNode('node-1', 'ns2'))).toEqual(['b']);

    const pods = informer('Pod');
    pods.apply(pod('c', 'ns1', 'node-2'));
    pods.apply(pod('a', 'ns1', 'node-2')); // moved
    pods.remove(pod('b', 'ns2'));
    expect(names(await onNode('node-1'))).toEqual([]);
    expect(names(await onNode('node-2'))).toEqual(['a', 'c']);
    expect(names(await onNode('node-2', 'ns2'))).toEqual([]);
  });

  it('combines with label and field selectors, and answers deep copies', async () => {
    const { cache } = cacheOf([
      pod('a', 'ns1', 'node-1', { app: 'web' }),
      pod('b', 'ns1', 'node-1', { app: 'db' }),
    ]);
    cache.indexField(PodKind, 'node', byNode);
    await cache.start();
    const [found] = await cache.list(PodKind, {
      index: { name: 'node', value: 'node-1' },
      labelSelector: 'app=db',
    });
    expect(found?.metadata?.name).toBe('b');
    found!.spec!.nodeName = 'changed';
    expect(names(await cache.list(PodKind, { index: { name: 'node', value: 'node-1' } }))).toEqual([
      'a',
      'b',
    ]);
    expect(
      names(
        await cache.list(PodKind, {
          index: { name: 'node', value: 'node-1' },
          fieldSelector: 'metadata.name=a',
        }),
      ),
    ).toEqual(['a']);
  });

  it('an index registered while its informer runs indexes the objects it holds already', async () => {
    const { cache } = cacheOf([pod('a', 'ns1', 'node-1')]);
    cache.informerFor(PodKind);
    await cache.start();
    cache.indexField(PodKind, 'node', byNode);
    expect(names(await cache.list(PodKind, { index: { name: 'node', value: 'node-1' } }))).toEqual(['a']);
  });

  it('an index function that throws leaves that object out, is logged once per object, and the informer goes on', async () => {
    const { cache, informer, lines } = cacheOf([pod('good', 'ns1', 'node-1'), pod('bad', 'ns1', 'boom')]);
    cache.indexField(PodKind, 'node', (object) => {
      if ((object as Pod).spec?.nodeName === 'boom') throw new Error('cannot index this one');
      return byNode(object);
    });
    const seen: string[] = [];
    cache.informerFor(PodKind).on('update', (object) => seen.push(object.metadata?.name ?? ''));
    await cache.start();
    const pods = informer('Pod');
    pods.apply(pod('bad', 'ns1', 'boom'));
    pods.apply(pod('bad', 'ns1', 'boom'));
    pods.apply(pod('good', 'ns1', 'node-1'));
    expect(seen).toEqual(['bad', 'bad', 'good']);
    expect(names(await cache.list(PodKind, { index: { name: 'node', value: 'node-1' } }))).toEqual(['good']);
    expect(await cache.list(PodKind, { index: { name: 'node', value: 'boom' } })).toEqual([]);
    const failures = lines.filter((line) => String(line['msg']).startsWith('index function failed'));
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ name: 'bad', namespace: 'ns1', index: 'node', kind: 'v1/Pod' });
    // Fixed, it is indexed; broken again, it is logged again.
    pods.apply(pod('bad', 'ns1', 'node-1'));
    expect(names(await cache.list(PodKind, { index: { name: 'node', value: 'node-1' } }))).toEqual([
      'bad',
      'good',
    ]);
  });

  it('an index function that returns no list of strings is a failure too', async () => {
    const { cache, lines } = cacheOf([pod('a', 'ns1', 'node-1')]);
    cache.indexField(PodKind, 'node', () => 'node-1' as unknown as string[]);
    await cache.start();
    expect(await cache.list(PodKind, { index: { name: 'node', value: 'node-1' } })).toEqual([]);
    expect(lines.some((line) => JSON.stringify(line).includes('not a list of strings'))).toBe(true);
  });

  it('a list by an index nobody registered fails with a hint, and opens no informer', async () => {
    const { cache, informers } = cacheOf();
    await cache.start();
    await expect(cache.list(PodKind, { index: { name: 'node', value: 'x' } })).rejects.toThrow(
      /no index named "node"\nhint: register it before mgr.start\(\) with mgr.cache.indexField/,
    );
    expect(informers).toHaveLength(0);
    cache.indexField(PodKind, 'node', byNode);
    expect(() => cache.indexField(PodKind, 'node', byNode)).toThrow(/has an index named "node" already/);
  });

  it('a list by index that would go to the API server is refused before any request, with a hint', async () => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    await expect(
      new HttpClient(kubeConfig).list(PodKind, { index: { name: 'node', value: 'a' } }),
    ).rejects.toThrow(
      /cannot list Pod by the index "node": field indexes are the cache's.*\nhint: list through mgr.client/,
    );
  });

  it('indexes cluster-scoped kinds', async () => {
    const node = (name: string, zone: string): KubernetesObject => ({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels: { zone } },
    });
    const { cache } = cacheOf([node('n1', 'a'), node('n2', 'b')]);
    cache.indexField(NodeKind, 'zone', (o) => [o.metadata?.labels?.['zone'] ?? '']);
    await cache.start();
    expect(names(await cache.list(NodeKind, { index: { name: 'zone', value: 'b' } }))).toEqual(['n2']);
  });
});

describe('metadata-only informers', () => {
  it('are a cache of their own beside the full one, read with { metadataOnly: true }', async () => {
    const { cache, informers } = cacheOf([pod('a', 'ns1', 'node-1')]);
    cache.informerFor(PodKind, { metadataOnly: true });
    cache.informerFor(PodKind);
    expect(informers.map((i) => [i.kind, !!i.options.metadataOnly])).toEqual([
      ['Pod', true],
      ['Pod', false],
    ]);
    await cache.start();
    expect((await cache.get(PodKind, 'a', 'ns1')).spec?.nodeName).toBe('node-1');
    expect(names(await cache.list(PodKind, { metadataOnly: true }))).toEqual(['a']);
  });

  it('have field indexes of their own', async () => {
    const { cache } = cacheOf([pod('a', 'ns1', 'node-1', { app: 'web' })]);
    cache.indexField(PodKind, 'app', (o) => [o.metadata?.labels?.['app'] ?? ''], { metadataOnly: true });
    await cache.start();
    const found = await cache.list(PodKind, { metadataOnly: true, index: { name: 'app', value: 'web' } });
    expect(names(found)).toEqual(['a']);
    await expect(cache.list(PodKind, { index: { name: 'app', value: 'web' } })).rejects.toThrow(
      /the cache of v1\/Pod has no index named "app"/,
    );
  });
});

describe('cache statistics', () => {
  it('counts the objects and estimates the bytes of each informer, on /metrics too', async () => {
    const metrics = new Metrics();
    const { cache, informer } = cacheOf([pod('a', 'ns1', 'node-1'), pod('b', 'ns1', 'node-1')], { metrics });
    cache.informerFor(PodKind);
    await cache.start();
    const [stats] = cache.stats();
    expect(stats).toMatchObject({ kind: 'v1/Pod', metadataOnly: false, objects: 2 });
    expect(stats!.estimatedBytes).toBeGreaterThan(200);
    expect(await metrics.value('kubesmith_cache_objects', { kind: 'v1/Pod', metadata_only: 'false' })).toBe(
      2,
    );
    informer('Pod').remove(pod('b', 'ns1'));
    expect(await metrics.value('kubesmith_cache_objects', { kind: 'v1/Pod', metadata_only: 'false' })).toBe(
      1,
    );
    expect(
      await metrics.value('kubesmith_cache_estimated_bytes', { kind: 'v1/Pod', metadata_only: 'false' }),
    ).toBe(cache.stats()[0]!.estimatedBytes);
  });
});

describe('the estimate of bytes', () => {
  it('counts strings, objects and arrays, and samples 1,000 objects of a larger cache', () => {
    const small = { metadata: { name: 'a' } };
    const big = { metadata: { name: 'a' }, data: { payload: 'x'.repeat(1_000) } };
    expect(estimateBytes(small)).toBe(24 + 8 + (24 + 8 + 17));
    expect(estimateBytes(big)).toBe(estimateBytes(small) + 8 + 24 + 8 + 1_016);
    expect(estimateBytes(['a', 1, 1.5, null])).toBe(32 + 4 * 8 + 17 + 0 + 16 + 0);
    // 10,000 objects, every other one big: the sample of 1,000 sees both about as often.
    const objects = Array.from({ length: 10_000 }, (_, i) => (i % 2 ? big : small));
    const exact = 5_000 * estimateBytes(small) + 5_000 * estimateBytes(big);
    expect(Math.abs(estimateTotalBytes(objects) - exact) / exact).toBeLessThan(0.05);
    expect(estimateTotalBytes(objects.slice(0, 1_000))).toBe(
      500 * estimateBytes(small) + 500 * estimateBytes(big),
    );
  });
});

describe('informers opened by reads', () => {
  const warnings = (lines: Record<string, unknown>[]) =>
    lines.filter(
      (line) => line['level'] === 'warn' && String(line['msg']).includes('no controller declared'),
    );

  it('a read that opens a cluster-wide informer is warned about once per kind, naming the kind and how to declare it', async () => {
    const { cache, lines } = cacheOf([pod('a', 'ns1')]);
    cache.informerFor(NodeKind);
    await cache.start();
    await cache.list(NodeKind);
    expect(warnings(lines)).toHaveLength(0);
    await cache.list(PodKind);
    await cache.get(PodKind, 'a', 'ns1');
    await cache.list(PodKind, { metadataOnly: true });
    expect(warnings(lines)).toHaveLength(1);
    expect(warnings(lines)[0]?.['msg']).toContain('cluster-wide informer for v1/Pod');
    expect(String(warnings(lines)[0]?.['hint'])).toMatch(/\.owns\(PodKind\).*metadataOnly: true/);
  });

  it("no warning for an informer of the manager's namespace", async () => {
    const { cache, lines } = cacheOf([pod('a', 'ns1')], { namespace: 'ns1' });
    await cache.start();
    await cache.list(PodKind);
    expect(warnings(lines)).toHaveLength(0);
  });

  it('readerFailOnMissingInformer refuses the read instead', async () => {
    const cache = new InformerCache(() => new ManualInformer(), {
      namespace: undefined,
      byObject: [],
      syncTimeoutMs: 1_000,
      clock: realClock,
      readerFailOnMissingInformer: true,
    });
    await cache.start();
    await expect(cache.get(PodKind, 'a', 'ns1')).rejects.toThrow(
      /no informer for v1\/Pod and cache.readerFailOnMissingInformer is set\nhint: declare it/,
    );
  });
});

describe("the FakeClient's indexes", () => {
  it('answer list by index as the cache does, following writes', async () => {
    const client = new FakeClient({ objects: [pod('a', 'ns1', 'node-1'), pod('b', 'ns2', 'node-1')] });
    client.indexField(PodKind, 'node', byNode);
    const onNode = (value: string, namespace?: string) =>
      client.list(PodKind, { index: { name: 'node', value }, ...(namespace ? { namespace } : {}) });
    expect(names(await onNode('node-1'))).toEqual(['a', 'b']);
    expect(names(await onNode('node-1', 'ns1'))).toEqual(['a']);
    const a = await client.get(PodKind, 'a', 'ns1');
    a.spec = { nodeName: 'node-2' };
    await client.update(PodKind, a);
    await client.delete(PodKind, 'b', 'ns2');
    expect(names(await onNode('node-1'))).toEqual([]);
    expect(names(await onNode('node-2'))).toEqual(['a']);
    await expect(client.list(PodKind, { index: { name: 'other', value: 'x' } })).rejects.toThrow(
      /no index named "other".*\nhint: register it with client.indexField/,
    );
  });

  it('read metadata only with { metadataOnly: true }', async () => {
    const client = new FakeClient({ objects: [pod('a', 'ns1', 'node-1', { app: 'web' })] });
    const read = await client.get(PodKind, 'a', 'ns1', { metadataOnly: true });
    expect(read).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: expect.objectContaining({ name: 'a', labels: { app: 'web' } }),
    });
    const [listed] = await client.list(PodKind, { metadataOnly: true });
    expect(listed).not.toHaveProperty('spec');
  });
});
