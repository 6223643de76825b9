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
import { FakeClient, reconcileContext } from '@kubesmith/runtime/testing';
import { describe, expect, it } from 'vitest';
import { PodKind, PodReconciler } from '../../src/controllers/pod.controller.js';

const request = { namespace: 'default', name: 'pod-sample' };

function sample(): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: request.name, namespace: request.namespace },
  } as V1Pod;
}

describe('PodReconciler', () => {
  it('reconciles an existing Pod without error', async () => {
    const client = new FakeClient({ objects: [sample()] });
    await expect(new PodReconciler(client).reconcile(request, reconcileContext())).resolves.toEqual({});
    const pod = await client.get(PodKind, request.name, request.namespace);
    expect(pod.metadata?.name).toBe(request.name);
  });

  it('ignores a Pod that no longer exists', async () => {
    const client = new FakeClient();
    await expect(new PodReconciler(client).reconcile(request, reconcileContext())).resolves.toEqual({});
  });
});
