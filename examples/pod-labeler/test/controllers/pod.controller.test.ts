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

import type { V1Pod } from '@kubernetes/client-node';
import type { ResourceKind } from '@kubesmith/runtime';
import { FakeClient } from '@kubesmith/runtime/testing';
import { describe, expect, it } from 'vitest';
import {
  ADD_POD_NAME_LABEL_ANNOTATION,
  POD_NAME_LABEL,
  PodKind,
  PodReconciler,
} from '../../src/controllers/pod.controller.js';

const request = { namespace: 'default', name: 'web-1' };

/**
 * A client where another writer updates the pod right after each of the first `races` reads: the
 * reader's update is stale.
 */
class RacingClient extends FakeClient {
  races = Infinity;
  reads = 0;

  override async get<T>(kind: ResourceKind<T>, name: string, namespace?: string): Promise<T> {
    const read = await super.get(kind, name, namespace);
    if (++this.reads > this.races) return read;
    const current = await super.get(PodKind, request.name, request.namespace);
    // Each write changes the pod (a counter), so that it gets a new resourceVersion, as on an API server.
    await super.update(PodKind, {
      ...current,
      metadata: {
        ...current.metadata,
        labels: { writer: 'other' },
        annotations: { ...current.metadata?.annotations, 'other-writes': String(this.reads) },
      },
    });
    return read;
  }
}

function pod(annotations: Record<string, string> = {}, labels: Record<string, string> = {}): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: request.name, namespace: request.namespace, annotations, labels },
    spec: { containers: [{ name: 'web', image: 'nginx' }] },
  };
}

async function labelsAfterReconcile(start: V1Pod): Promise<Record<string, string> | undefined> {
  const client = new FakeClient({ objects: [start] });
  await new PodReconciler(client).reconcile(request);
  return (await client.get(PodKind, request.name, request.namespace)).metadata?.labels;
}

describe('PodReconciler', () => {
  it('labels an annotated pod with its name', async () => {
    expect(
      await labelsAfterReconcile(pod({ [ADD_POD_NAME_LABEL_ANNOTATION]: 'true' }, { app: 'web' })),
    ).toEqual({
      app: 'web',
      [POD_NAME_LABEL]: 'web-1',
    });
  });

  it('removes the label when the annotation is gone or not "true"', async () => {
    expect(await labelsAfterReconcile(pod({}, { app: 'web', [POD_NAME_LABEL]: 'web-1' }))).toEqual({
      app: 'web',
    });
    expect(
      await labelsAfterReconcile(
        pod({ [ADD_POD_NAME_LABEL_ANNOTATION]: 'false' }, { [POD_NAME_LABEL]: 'web-1' }),
      ),
    ).toEqual({});
  });

  it('leaves a pod that needs nothing untouched', async () => {
    const client = new FakeClient({ objects: [pod({}, { app: 'web' })] });
    const before = await client.get(PodKind, request.name, request.namespace);
    await new PodReconciler(client).reconcile(request);
    const after = await client.get(PodKind, request.name, request.namespace);
    expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
  });

  it('reads the pod again and labels it when another writer changed it meanwhile', async () => {
    const client = new RacingClient({ objects: [pod({ [ADD_POD_NAME_LABEL_ANNOTATION]: 'true' })] });
    client.races = 2;
    await expect(new PodReconciler(client).reconcile(request)).resolves.toEqual({});
    expect(client.reads).toBe(3);
    const labels = (await client.get(PodKind, request.name, request.namespace)).metadata?.labels;
    expect(labels).toEqual({ writer: 'other', [POD_NAME_LABEL]: 'web-1' });
  });

  it('asks to be requeued when the pod still conflicts after 5 attempts', async () => {
    const client = new RacingClient({ objects: [pod({ [ADD_POD_NAME_LABEL_ANNOTATION]: 'true' })] });
    await expect(new PodReconciler(client).reconcile(request)).resolves.toEqual({ requeue: true });
  });

  it('ignores a pod that no longer exists', async () => {
    await expect(new PodReconciler(new FakeClient()).reconcile(request)).resolves.toEqual({});
  });
});
