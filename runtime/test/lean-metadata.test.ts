/**
 * What the informers keep of each object (internal/lean-metadata.ts and cache.ts's informerStorage): the
 * same object as the API server sent it, managedFields left out, in less heap. The heap is measured on the
 * built runtime, in a process of its own (fixtures/informer-heap.mjs), after a full GC: in the test's own
 * process, what vitest allocates meanwhile moves the figure by more than the objects take.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { LabelSets, leanMetadata, metadataOnlyStore, StringInterner } from '../src/internal/lean-metadata.js';
import { groupVersion } from '../src/kinds.js';
import type { KubernetesObject, ObjectMeta } from '../src/types.js';

const run = promisify(execFile);
const Widget = groupVersion('bench.example.com', 'v1').kind('Widget', { plural: 'widgets' });

const managedFields = [
  {
    manager: 'kubectl',
    operation: 'Update',
    apiVersion: 'bench.example.com/v1',
    time: '2026-11-26T23:23:31Z',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } },
  },
];

/** A metadata as the API server sends it (ObjectMeta's order, managedFields last), freshly parsed. */
function parsedMetadata(): ObjectMeta {
  return JSON.parse(
    JSON.stringify({
      name: 'web-7d9f-abcde',
      generateName: 'web-7d9f-',
      namespace: 'production-east',
      uid: '0d6f5b7e-3a7c-4c0e-9a55-2f0a6f1d4c11',
      resourceVersion: '81234',
      generation: 1,
      creationTimestamp: '2026-11-26T23:23:31Z',
      labels: { 'app.kubernetes.io/name': 'web-frontend', 'pod-template-hash': '7d9f' },
      annotations: { 'example.com/owner-team': 'platform-engineering' },
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
      finalizers: ['example.com/cleanup-before-delete'],
      managedFields,
    }),
  ) as ObjectMeta;
}

describe('leanMetadata', () => {
  it('drops managedFields and keeps the rest of the metadata as sent, in its order', () => {
    const sent = parsedMetadata();
    const { managedFields: _dropped, ...expected } = structuredClone(sent);
    const lean = leanMetadata(sent, new StringInterner(), false);
    expect(lean).toStrictEqual(expected);
    expect(Object.keys(lean)).toEqual(Object.keys(expected));
  });

  it('keeps managedFields when asked, in the metadata itself', () => {
    const sent = parsedMetadata();
    const expected = structuredClone(sent);
    expect(leanMetadata(sent, new StringInterner(), true)).toBe(sent);
    expect(sent).toStrictEqual(expected);
  });

  it('keeps metadata of any order (a custom resource is sent with its keys sorted)', () => {
    const sent = JSON.parse(
      '{"creationTimestamp":"t","generation":2,"labels":{"a":"b"},"managedFields":[],"name":"n","uid":"u"}',
    ) as ObjectMeta;
    const lean = leanMetadata(sent, new StringInterner(), false);
    expect(lean).toStrictEqual({
      creationTimestamp: 't',
      generation: 2,
      labels: { a: 'b' },
      name: 'n',
      uid: 'u',
    });
    expect(Object.keys(lean)).toEqual(['creationTimestamp', 'generation', 'labels', 'name', 'uid']);
  });
  it('keeps the keys of each metadata when objects of different keys come one after the other', () => {
    const interner = new StringInterner();
    const texts = [
      '{"name":"a","uid":"u","generation":1,"managedFields":[]}',
      '{"name":"b","uid":"v","labels":{"x":"y"},"managedFields":[]}',
      '{"name":"c","uid":"w","generation":2.5,"managedFields":[]}',
      '{"name":"d","generation":"odd","uid":"x","managedFields":[]}',
    ];
    for (const text of [...texts, ...texts]) {
      const { managedFields: _dropped, ...expected } = JSON.parse(text) as ObjectMeta;
      const lean = leanMetadata(JSON.parse(text) as ObjectMeta, interner, false);
      expect(lean).toStrictEqual(expected);
      expect(Object.keys(lean)).toEqual(Object.keys(expected));
    }
  });
});

describe('the sharing tables are bounded', () => {
  it('StringInterner starts over at its bound and keeps no long string', () => {
    const interner = new StringInterner(100, 16);
    for (let i = 0; i < 1_000; i++) expect(interner.intern(`value-${i}`)).toBe(`value-${i}`);
    expect(interner.size).toBeLessThanOrEqual(100);
    const before = interner.size;
    expect(interner.intern('x'.repeat(17))).toBe('x'.repeat(17));
    expect(interner.size).toBe(before);
  });

  it('LabelSets gives objects with equal labels one labels object, and starts over at its bound', () => {
    const sets = new LabelSets(10);
    const first = sets.share({ app: 'web', tier: 'front' });
    expect(sets.share({ app: 'web', tier: 'front' })).toBe(first);
    expect(sets.share({ app: 'web', tier: 'back' })).not.toBe(first);
    for (let i = 0; i < 100; i++) sets.share({ app: `app-${i}` });
    expect(sets.size).toBeLessThanOrEqual(10);
  });
});

describe('a metadata-only store', () => {
  it('gives out objects of their own: changing one changes neither the store nor an object of the same labels', () => {
    const store = metadataOnlyStore(Widget, new LabelSets());
    const stored = ['a', 'b'].map((name) =>
      store.pack({ metadata: { name, labels: { app: 'web' } } } as KubernetesObject),
    );
    const a = store.unpack(stored[0]);
    expect(a).toStrictEqual({
      apiVersion: 'bench.example.com/v1',
      kind: 'Widget',
      metadata: { name: 'a', labels: { app: 'web' } },
    });
    a.metadata!.labels!['app'] = 'changed';
    expect(store.unpack(stored[0]).metadata?.labels).toEqual({ app: 'web' });
    expect(store.unpack(stored[1]).metadata?.labels).toEqual({ app: 'web' });
  });
});

const fixture = fileURLToPath(new URL('./fixtures/informer-heap.mjs', import.meta.url));

/**
 * The heap per cached object of an informer of 10,000 Widgets of the built runtime, in a process of its
 * own (fixtures/informer-heap.mjs): metadata-only or full.
 */
async function heapPerObject(mode: 'metadata' | 'full'): Promise<number> {
  const { stdout } = await run(process.execPath, ['--expose-gc', fixture, mode, '10000'], {
    timeout: 120_000,
  });
  return (JSON.parse(stdout) as { bytesPerObject: number }).bytesPerObject;
}

describe('the heap an informer takes', () => {
  it('a metadata-only informer of 10,000 Widgets takes at least 4x less heap than the full one (issue 24)', async () => {
    const metadata = await heapPerObject('metadata');
    const full = await heapPerObject('full');
    console.log(
      `heap per cached Widget: metadata-only ${metadata.toFixed(0)} B, full ${full.toFixed(0)} B: ${(full / metadata).toFixed(2)}x`,
    );
    expect(full).toBeGreaterThanOrEqual(4 * metadata);
  }, 240_000);
});
