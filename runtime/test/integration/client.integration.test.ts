/**
 * The Client on a real kube-apiserver: CRUD of a custom resource and of built-ins, selectors, pagination,
 * the status subresource, patches, deletion with a propagation policy, and the typed errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Envtest } from '../../src/envtest/index.js';
import { HttpClient } from '../../src/client.js';
import { isAlreadyExists, isConflict, isNotFound, ApiError } from '../../src/errors.js';
import {
  ConfigMapKind,
  createNamespace,
  DeploymentKind,
  GadgetKind,
  startTestEnv,
  WidgetKind,
  type ConfigMap,
  type Widget,
} from './helpers.js';

let env: Envtest;
let client: HttpClient;
let ns: string;

beforeAll(async () => {
  env = await startTestEnv();
  client = new HttpClient(env.kubeConfig);
  ns = await createNamespace(env, 'client');
}, 90_000);
afterAll(async () => {
  await env?.stop();
}, 30_000);

function widget(name: string, size?: number, labels?: Record<string, string>): Widget {
  return {
    apiVersion: WidgetKind.apiVersion,
    kind: 'Widget',
    metadata: { name, namespace: ns, ...(labels ? { labels } : {}) },
    spec: size === undefined ? {} : { size },
  };
}

function configMap(name: string, labels: Record<string, string> = {}): ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels }, data: { a: '1' } };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  );
}

describe('Client on a custom resource', () => {
  it('creates (with the schema default), gets and lists', async () => {
    const created = await client.create(WidgetKind, widget('crud'));
    expect(created.metadata?.uid).toBeTruthy();
    expect(created.spec?.size).toBe(3);
    const got = await client.get(WidgetKind, 'crud', ns);
    expect(got.metadata?.uid).toBe(created.metadata?.uid);
    const listed = await client.list(WidgetKind, { namespace: ns });
    expect(listed.map((w) => w.metadata?.name)).toContain('crud');
    // Items of a list come back with apiVersion and kind, ready to be sent again.
    expect(listed[0]).toMatchObject({ apiVersion: 'envtest.kubesmith.dev/v1', kind: 'Widget' });
  });

  it('updates with optimistic locking: a stale resourceVersion is a Conflict', async () => {
    const first = await client.create(WidgetKind, widget('locked', 1));
    const updated = await client.update(WidgetKind, { ...first, spec: { size: 2 } });
    expect(updated.spec?.size).toBe(2);
    expect(updated.metadata?.generation).toBe(2);
    const error = await rejection(client.update(WidgetKind, { ...first, spec: { size: 5 } }));
    expect(isConflict(error)).toBe(true);
    expect(isAlreadyExists(error)).toBe(false);
    expect((await client.get(WidgetKind, 'locked', ns)).spec?.size).toBe(2);
  });

  it('updates the status subresource only through updateStatus', async () => {
    const created = await client.create(WidgetKind, widget('status', 1));
    // update() ignores status (the subresource is separate) ...
    const viaUpdate = await client.update(WidgetKind, { ...created, status: { ready: true } });
    expect(viaUpdate.status?.ready).toBeUndefined();
    // ... updateStatus() sets it, and ignores spec.
    const viaStatus = await client.updateStatus(WidgetKind, {
      ...viaUpdate,
      spec: { size: 9 },
      status: { ready: true },
    });
    expect(viaStatus.status?.ready).toBe(true);
    expect(viaStatus.spec?.size).toBe(1);
    expect(viaStatus.metadata?.generation).toBe(viaUpdate.metadata?.generation);
  });

  it('applies merge patches and JSON patches', async () => {
    await client.create(WidgetKind, widget('patched', 1));
    const merged = await client.patch(WidgetKind, 'patched', ns, {
      metadata: { labels: { tier: 'gold' } },
      spec: { size: 4 },
    });
    expect(merged.metadata?.labels).toEqual({ tier: 'gold' });
    expect(merged.spec?.size).toBe(4);
    const patched = await client.patch(
      WidgetKind,
      'patched',
      ns,
      [
        { op: 'test', path: '/spec/size', value: 4 },
        { op: 'replace', path: '/spec/size', value: 6 },
        { op: 'remove', path: '/metadata/labels/tier' },
      ],
      'json',
    );
    expect(patched.spec?.size).toBe(6);
    expect(patched.metadata?.labels ?? {}).toEqual({});
    // A failing `test` operation rejects the whole patch.
    const error = await rejection(
      client.patch(WidgetKind, 'patched', ns, [{ op: 'test', path: '/spec/size', value: 4 }], 'json'),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).statusCode).toBe(422);
  });

  it('rejects invalid objects with the schema message', async () => {
    const error = await rejection(client.create(WidgetKind, widget('tiny', 0)));
    expect((error as ApiError).statusCode).toBe(422);
    expect((error as ApiError).reason).toBe('Invalid');
    expect((error as ApiError).message).toMatch(/spec\.size/);
  });

  it('deletes; get and delete of a missing object are NotFound', async () => {
    await client.create(WidgetKind, widget('doomed'));
    await client.delete(WidgetKind, 'doomed', ns);
    expect(isNotFound(await rejection(client.get(WidgetKind, 'doomed', ns)))).toBe(true);
    expect(isNotFound(await rejection(client.delete(WidgetKind, 'doomed', ns)))).toBe(true);
  });

  it('creating an existing name is AlreadyExists, not a Conflict', async () => {
    await client.create(WidgetKind, widget('twice'));
    const error = await rejection(client.create(WidgetKind, widget('twice')));
    expect(isAlreadyExists(error)).toBe(true);
    expect(isConflict(error)).toBe(false);
  });

  it('handles cluster-scoped kinds', async () => {
    const created = await client.create(GadgetKind, {
      apiVersion: GadgetKind.apiVersion,
      kind: 'Gadget',
      metadata: { name: 'g1' },
    });
    expect(created.metadata?.namespace).toBeUndefined();
    expect((await client.get(GadgetKind, 'g1')).metadata?.uid).toBe(created.metadata?.uid);
    expect((await client.list(GadgetKind)).map((g) => g.metadata?.name)).toEqual(['g1']);
    await client.delete(GadgetKind, 'g1');
    expect(isNotFound(await rejection(client.get(GadgetKind, 'g1')))).toBe(true);
  });
});

describe('Client on built-in kinds', () => {
  it('lists with label selectors, field selectors and across pages', async () => {
    for (let i = 0; i < 7; i++) {
      await client.create(
        ConfigMapKind,
        configMap(`cm-${i}`, { app: 'web', parity: i % 2 ? 'odd' : 'even' }),
      );
    }
    await client.create(ConfigMapKind, configMap('other', { app: 'db' }));

    const web = await client.list(ConfigMapKind, { namespace: ns, labelSelector: 'app=web' });
    expect(web.map((c) => c.metadata?.name).sort()).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `cm-${i}`));
    const odd = await client.list(ConfigMapKind, { namespace: ns, labelSelector: 'app=web,parity!=even' });
    expect(odd.map((c) => c.metadata?.name).sort()).toEqual(['cm-1', 'cm-3', 'cm-5']);
    const set = await client.list(ConfigMapKind, { namespace: ns, labelSelector: 'app in (db)' });
    expect(set.map((c) => c.metadata?.name)).toEqual(['other']);

    const byName = await client.list(ConfigMapKind, { namespace: ns, fieldSelector: 'metadata.name=cm-4' });
    expect(byName.map((c) => c.metadata?.name)).toEqual(['cm-4']);
    // Across namespaces, a field selector on the namespace.
    const inNs = await client.list(ConfigMapKind, {
      fieldSelector: `metadata.namespace=${ns}`,
      labelSelector: 'app',
    });
    expect(inNs).toHaveLength(8);

    // Pages of 3: the continue token is followed to the end, nothing is missing or repeated.
    const paged = await client.list(ConfigMapKind, { namespace: ns, labelSelector: 'app', pageSize: 3 });
    const names = paged.map((c) => c.metadata?.name);
    expect(names).toHaveLength(8);
    expect(new Set(names).size).toBe(8);
  });

  it('creates, updates and patches a Deployment', async () => {
    const created = await client.create(DeploymentKind, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: ns },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
        },
      },
    });
    expect(created.metadata?.generation).toBe(1);
    const scaled = await client.update(DeploymentKind, {
      ...created,
      spec: { ...created.spec!, replicas: 3 },
    });
    expect(scaled.spec?.replicas).toBe(3);
    const patched = await client.patch(DeploymentKind, 'web', ns, { spec: { replicas: 2 } });
    expect(patched.spec?.replicas).toBe(2);
    expect(patched.metadata?.generation).toBe(3);
  });

  it('deletes with a propagation policy', async () => {
    // Without a garbage collector, foreground and orphan deletions stay pending with their finalizer:
    // proof that the policy reached the server.
    await client.create(ConfigMapKind, configMap('fg'));
    await client.delete(ConfigMapKind, 'fg', ns, { propagationPolicy: 'Foreground' });
    const foreground = await client.get(ConfigMapKind, 'fg', ns);
    expect(foreground.metadata?.deletionTimestamp).toBeTruthy();
    expect(foreground.metadata?.finalizers).toEqual(['foregroundDeletion']);

    await client.create(ConfigMapKind, configMap('orphan'));
    await client.delete(ConfigMapKind, 'orphan', ns, { propagationPolicy: 'Orphan' });
    expect((await client.get(ConfigMapKind, 'orphan', ns)).metadata?.finalizers).toEqual(['orphan']);

    await client.create(ConfigMapKind, configMap('bg'));
    await client.delete(ConfigMapKind, 'bg', ns, { propagationPolicy: 'Background' });
    expect(isNotFound(await rejection(client.get(ConfigMapKind, 'bg', ns)))).toBe(true);
  });
});

describe('server-side apply', () => {
  it('creates, then owns its fields: another manager conflicts unless it forces, fields left out go', async () => {
    const applied = await client.apply(
      ConfigMapKind,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'applied', namespace: ns, labels: { team: 'a' } },
        data: { colour: 'blue', size: 'L' },
      },
      { fieldManager: 'widget-controller' },
    );
    expect(applied.data).toEqual({ colour: 'blue', size: 'L' });
    expect(applied.metadata?.managedFields?.map((f) => [f.manager, f.operation])).toEqual([
      ['widget-controller', 'Apply'],
    ]);

    // Another manager setting a field the first one owns: 409 Conflict naming the owner.
    const error = await rejection(
      client.apply(
        ConfigMapKind,
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'applied', namespace: ns },
          data: { colour: 'red' },
        },
        { fieldManager: 'someone-else' },
      ),
    );
    expect(isConflict(error)).toBe(true);
    expect((error as ApiError).message).toMatch(/widget-controller/);
    // With force it takes the field over.
    const forced = await client.apply(
      ConfigMapKind,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'applied', namespace: ns },
        data: { colour: 'red' },
      },
      { fieldManager: 'someone-else', force: true },
    );
    expect(forced.data).toEqual({ colour: 'red', size: 'L' });

    // The first manager applies again without `size` and the label: they go; `colour` is no longer its own.
    const again = await client.apply(
      ConfigMapKind,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', namespace: ns }, data: {} },
      { fieldManager: 'widget-controller' },
    );
    expect(again.data).toEqual({ colour: 'red' });
    expect(again.metadata?.labels ?? {}).toEqual({});
  });

  it('applies to a custom resource and keeps fields of other managers', async () => {
    await client.create(WidgetKind, {
      ...widget('mixed', 2),
      metadata: { name: 'mixed', namespace: ns, labels: { by: 'hand' } },
    });
    const applied = await client.apply(
      WidgetKind,
      {
        apiVersion: WidgetKind.apiVersion,
        kind: 'Widget',
        metadata: { name: 'mixed', namespace: ns, annotations: { note: 'x' } },
      },
      { fieldManager: 'widget-controller' },
    );
    expect(applied.metadata?.labels).toEqual({ by: 'hand' });
    expect(applied.metadata?.annotations).toEqual({ note: 'x' });
    expect(applied.spec?.size).toBe(2);
  });
});
