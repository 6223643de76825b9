import { describe, expect, it } from 'vitest';
import { isAlreadyExists, isConflict, isNotFound } from '../src/errors.js';
import { groupVersion, resourceKind } from '../src/kinds.js';
import { FakeClient } from '../src/testing/index.js';
import type { KubernetesObject } from '../src/types.js';

interface Guestbook extends KubernetesObject {
  spec: { size?: number };
  status?: { phase?: string };
}
const GuestbookKind = groupVersion('webapp.example.com', 'v1').kind<Guestbook>('Guestbook', {
  plural: 'guestbooks',
});
const NodeKind = resourceKind({ group: '', version: 'v1', kind: 'Node', plural: 'nodes', namespaced: false });

function guestbook(name = 'g', labels: Record<string, string> = {}): Guestbook {
  return {
    apiVersion: GuestbookKind.apiVersion,
    kind: 'Guestbook',
    metadata: { name, namespace: 'default', labels },
    spec: { size: 1 },
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (err: unknown) => err,
  );
}

describe('FakeClient', () => {
  it('stores, returns copies, and assigns uid, resourceVersion and generation', async () => {
    const client = new FakeClient({ objects: [guestbook()] });
    const got = await client.get(GuestbookKind, 'g', 'default');
    expect(got.metadata).toMatchObject({ generation: 1, resourceVersion: '1' });
    expect(got.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    got.spec.size = 99;
    expect((await client.get(GuestbookKind, 'g', 'default')).spec.size).toBe(1);
  });

  it('answers 404 and 409 as the API server does', async () => {
    const client = new FakeClient({ objects: [guestbook()] });
    const missing = await rejection(client.get(GuestbookKind, 'nope', 'default'));
    expect(isNotFound(missing)).toBe(true);
    expect((missing as Error).message).toBe('guestbooks.webapp.example.com "nope" not found');
    expect(isAlreadyExists(await rejection(client.create(GuestbookKind, guestbook())))).toBe(true);
    const stale = await client.get(GuestbookKind, 'g', 'default');
    await client.update(GuestbookKind, { ...stale, spec: { size: 2 } });
    expect(isConflict(await rejection(client.update(GuestbookKind, { ...stale, spec: { size: 3 } })))).toBe(
      true,
    );
  });

  it('bumps generation on spec changes only, and keeps status out of updates', async () => {
    const client = new FakeClient({ objects: [guestbook()] });
    let g = await client.get(GuestbookKind, 'g', 'default');
    g = await client.updateStatus(GuestbookKind, { ...g, status: { phase: 'Ready' } });
    expect(g.metadata?.generation).toBe(1);
    g = await client.update(GuestbookKind, { ...g, spec: { size: 5 }, status: { phase: 'ignored' } });
    expect(g.metadata?.generation).toBe(2);
    expect((await client.get(GuestbookKind, 'g', 'default')).status).toEqual({ phase: 'Ready' });
    await client.update(GuestbookKind, { ...g, metadata: { ...g.metadata, labels: { a: 'b' } } });
    expect((await client.get(GuestbookKind, 'g', 'default')).metadata?.generation).toBe(2);
  });

  it('holds a deleted object while it has finalizers', async () => {
    const client = new FakeClient({
      objects: [{ ...guestbook(), metadata: { ...guestbook().metadata, finalizers: ['x/y'] } }],
    });
    await client.delete(GuestbookKind, 'g', 'default');
    const held = await client.get(GuestbookKind, 'g', 'default');
    expect(held.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    await client.update(GuestbookKind, { ...held, metadata: { ...held.metadata, finalizers: [] } });
    expect(isNotFound(await rejection(client.get(GuestbookKind, 'g', 'default')))).toBe(true);
  });

  it('lists by namespace and label selector', async () => {
    const client = new FakeClient({
      objects: [
        guestbook('a', { tier: 'web' }),
        guestbook('b', { tier: 'db' }),
        {
          ...guestbook('c', { tier: 'web' }),
          metadata: { name: 'c', namespace: 'prod', labels: { tier: 'web' } },
        },
      ],
    });
    const names = async (options: object) =>
      (await client.list(GuestbookKind, options)).map((g) => g.metadata?.name);
    expect(await names({})).toEqual(['a', 'b', 'c']);
    expect(await names({ namespace: 'default' })).toEqual(['a', 'b']);
    expect(await names({ labelSelector: 'tier=web' })).toEqual(['a', 'c']);
    expect(await names({ labelSelector: 'tier!=web' })).toEqual(['b']);
    expect(await names({ fieldSelector: 'metadata.name=b' })).toEqual(['b']);
  });

  it('applies merge and JSON patches', async () => {
    const client = new FakeClient({ objects: [guestbook('g', { keep: 'yes', drop: 'yes' })] });
    await client.patch(GuestbookKind, 'g', 'default', { metadata: { labels: { drop: null, added: 'x' } } });
    let g = await client.get(GuestbookKind, 'g', 'default');
    expect(g.metadata?.labels).toEqual({ keep: 'yes', added: 'x' });
    await client.patch(
      GuestbookKind,
      'g',
      'default',
      [{ op: 'replace', path: '/spec/size', value: 7 }],
      'json',
    );
    g = await client.get(GuestbookKind, 'g', 'default');
    expect(g.spec.size).toBe(7);
    expect(g.metadata?.generation).toBe(2);
  });

  it('ignores namespaces for cluster-scoped kinds', async () => {
    const client = new FakeClient();
    await client.create(NodeKind, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1', namespace: 'x' },
    });
    expect((await client.get(NodeKind, 'n1')).metadata?.namespace).toBeUndefined();
  });
});

describe('FakeClient.apply', () => {
  it('creates when absent, merges into the object when present, and needs a field manager', async () => {
    const client = new FakeClient();
    const created = await client.apply(GuestbookKind, guestbook('applied'), { fieldManager: 'm' });
    expect(created.metadata?.uid).toBeTruthy();
    const merged = await client.apply(
      GuestbookKind,
      {
        apiVersion: GuestbookKind.apiVersion,
        kind: 'Guestbook',
        metadata: { name: 'applied', namespace: 'default', labels: { a: 'b' } },
        spec: { size: 3 },
      },
      { fieldManager: 'm' },
    );
    expect(merged.spec.size).toBe(3);
    expect(merged.metadata?.labels).toEqual({ a: 'b' });
    await expect(client.apply(GuestbookKind, guestbook('x'), { fieldManager: '' })).rejects.toThrow(
      /fieldManager/,
    );
  });

  it('keeps the resourceVersion when a write changes nothing, as the API server does', async () => {
    const client = new FakeClient();
    const first = await client.apply(GuestbookKind, guestbook('same'), { fieldManager: 'm' });
    const again = await client.apply(GuestbookKind, guestbook('same'), { fieldManager: 'm' });
    expect(again.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
    const updated = await client.update(GuestbookKind, again);
    expect(updated.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
    const changed = await client.apply(
      GuestbookKind,
      { ...guestbook('same'), spec: { size: 2 } },
      {
        fieldManager: 'm',
      },
    );
    expect(changed.metadata?.resourceVersion).not.toBe(first.metadata?.resourceVersion);
    expect(changed.metadata?.generation).toBe(2);
  });

  it('refuses names and namespaces that are not path segments, as HttpClient does', async () => {
    const client = new FakeClient({ objects: [guestbook()] });
    await expect(client.delete(GuestbookKind, '..', 'default')).rejects.toThrow(
      `Guestbook: invalid resource name "..": may not be '..'`,
    );
    await expect(client.get(GuestbookKind, 'g', '..')).rejects.toThrow(
      `invalid namespace "..": may not be '..'`,
    );
    await expect(client.patch(GuestbookKind, 'a/b', 'default', {})).rejects.toThrow(`may not contain '/'`);
    await expect(client.list(GuestbookKind, { namespace: '%2e' })).rejects.toThrow(`may not contain '%'`);
    await expect(
      client.create(GuestbookKind, { ...guestbook('x'), metadata: { name: 'x', namespace: '.' } }),
    ).rejects.toThrow('invalid namespace');
    await expect(client.update(GuestbookKind, guestbook('..'))).rejects.toThrow('invalid resource name');
    expect(client.all()).toHaveLength(1);
  });
});
