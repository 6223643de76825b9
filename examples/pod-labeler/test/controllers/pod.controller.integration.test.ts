/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

/**
 * The pod labeler on a real API server (the envtest of the test run, test/envtest.setup.ts: etcd and
 * kube-apiserver; no scheduler or kubelet, so the pods never run, which a labeler does not need), in a
 * namespace of this file's own.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { createLogger, HttpClient, isConflict, isNotFound, Manager, type Client } from '@kubesmith/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADD_POD_NAME_LABEL_ANNOTATION,
  CACHE_SELECTORS,
  POD_NAME_LABEL,
  PodKind,
  PodReconciler,
} from '../../src/controllers/pod.controller.js';
import { createNamespace, sharedEnvtest } from '../envtest.js';

// Undefined, and the tests skipped, when the binaries are missing; under CI=true that fails the run instead.
const envtest = sharedEnvtest();
let namespace: string;
let mgr: Manager | undefined;
let running: Promise<void> | undefined;
let client: Client;

beforeAll(async () => {
  if (envtest === undefined) return;
  namespace = await createNamespace(envtest, 'pod-labeler-');
  mgr = Manager.create({
    kubeConfig: envtest.kubeConfig,
    cache: { namespace, byObject: CACHE_SELECTORS },
    metrics: { bindAddress: '0' },
    healthProbeBindAddress: '0',
    handleSignals: false,
    logger: createLogger({ level: 'error' }),
  });
  // The test and its other writer act as users do, on the API server; the labeler reads from its cache.
  client = new HttpClient(envtest.kubeConfig);
  new PodReconciler(mgr.client).setupWithManager(mgr);
  running = mgr.start();
  await mgr.ready();
}, 60_000);

afterAll(async () => {
  await mgr?.stop();
  await running;
}, 30_000);

function pod(name: string, annotate: boolean, labels: Record<string, string> = {}): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels,
      annotations: annotate ? { [ADD_POD_NAME_LABEL_ANNOTATION]: 'true' } : {},
    },
    spec: { containers: [{ name: 'web', image: 'nginx' }] },
  };
}

async function podLabel(name: string): Promise<string | undefined> {
  return (await client.get(PodKind, name, namespace)).metadata?.labels?.[POD_NAME_LABEL];
}

describe.skipIf(envtest === undefined)('the pod labeler', () => {
  it('labels annotated pods with their names and leaves the others alone', async () => {
    await client.create(PodKind, pod('labeled-1', true));
    await client.create(PodKind, pod('labeled-2', true));
    await client.create(PodKind, pod('plain', false, { app: 'web' }));
    await expect.poll(() => podLabel('labeled-1'), { timeout: 20_000 }).toBe('labeled-1');
    await expect.poll(() => podLabel('labeled-2'), { timeout: 20_000 }).toBe('labeled-2');
    expect((await client.get(PodKind, 'plain', namespace)).metadata?.labels).toEqual({ app: 'web' });
  });

  it('removes the label when the annotation goes', async () => {
    await client.create(PodKind, pod('unlabel', true));
    await expect.poll(() => podLabel('unlabel'), { timeout: 20_000 }).toBe('unlabel');
    await client.patch(PodKind, 'unlabel', namespace, {
      metadata: { annotations: { [ADD_POD_NAME_LABEL_ANNOTATION]: null } },
    });
    await expect.poll(() => podLabel('unlabel'), { timeout: 20_000 }).toBeUndefined();
  });

  it('leaves finished pods out of its cache, and so unlabelled', async () => {
    await client.create(PodKind, pod('finished', false));
    const created = await client.get(PodKind, 'finished', namespace);
    await client.updateStatus(PodKind, { ...created, status: { phase: 'Succeeded' } });
    await client.patch(PodKind, 'finished', namespace, {
      metadata: { annotations: { [ADD_POD_NAME_LABEL_ANNOTATION]: 'true' } },
    });
    // A pod annotated after those writes: once it is labelled, the labeler has seen them too.
    await client.create(PodKind, pod('witness', true));
    await expect.poll(() => podLabel('witness'), { timeout: 20_000 }).toBe('witness');
    expect(await podLabel('finished')).toBeUndefined();
    await expect(mgr!.client.get(PodKind, 'finished', namespace)).rejects.toSatisfy(isNotFound);
  });

  it('gets every pod labeled while another writer updates the same pods', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `busy-${i}`);
    for (const name of names) await client.create(PodKind, pod(name, false));
    // The other writer: read-modify-write updates of a label of its own on every pod, as fast as it can,
    // while the annotation that asks for the pod-name label is added.
    let writes = 0;
    let conflicts = 0;
    let stop = false;
    // One writer loop per pod, all at once.
    const writer = Promise.all(
      names.map(async (name) => {
        while (!stop) {
          const current = await client.get(PodKind, name, namespace);
          const labels = { ...current.metadata?.labels, writer: String(writes) };
          try {
            await client.update(PodKind, { ...current, metadata: { ...current.metadata, labels } });
            writes++;
          } catch (err) {
            if (!isConflict(err)) throw err;
            conflicts++;
          }
        }
      }),
    );
    for (const name of names) {
      await client.patch(PodKind, name, namespace, {
        metadata: { annotations: { [ADD_POD_NAME_LABEL_ANNOTATION]: 'true' } },
      });
    }
    try {
      for (const name of names) await expect.poll(() => podLabel(name), { timeout: 30_000 }).toBe(name);
    } finally {
      stop = true;
      await writer;
    }
    // Both writers' changes survive: the labeler retried its conflicts instead of overwriting.
    for (const name of names) {
      const labels = (await client.get(PodKind, name, namespace)).metadata?.labels ?? {};
      expect(labels[POD_NAME_LABEL]).toBe(name);
      expect(labels['writer']).toMatch(/^\d+$/);
    }
    expect(writes).toBeGreaterThan(names.length);
    // The writers really raced (the labeler too: 3 to 10 of its updates refused with 409 per run here,
    // each retried; the unit test pins that path down deterministically).
    expect(conflicts).toBeGreaterThan(0);
  }, 60_000);
});
