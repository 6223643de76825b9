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

import { findCondition } from '@kubesmith/runtime';
import { FakeClient, loadCrds, reconcileContext, validate } from '@kubesmith/runtime/testing';
import { describe, expect, it } from 'vitest';
import { GuestbookKind, type Guestbook } from '../../src/api/webapp/v1/guestbook.types.js';
import { AVAILABLE, GuestbookReconciler } from '../../src/controllers/guestbook.controller.js';

const request = { namespace: 'default', name: 'guestbook-sample' };

function sample(): Guestbook {
  return {
    apiVersion: 'webapp.example.com/v1',
    kind: 'Guestbook',
    metadata: { name: request.name, namespace: request.namespace, generation: 1 },
    spec: {},
  };
}

describe('GuestbookReconciler', () => {
  it('starts from a Guestbook the API server would take', async () => {
    // The CRD `kubesmith manifests` made: its schema and CEL rules, checked as the API server checks them.
    const crds = await loadCrds(new URL('../../config/crd/bases/', import.meta.url));
    expect((await validate(GuestbookKind, sample(), { crds })).errors).toEqual([]);
  });

  it('reports the Guestbook Available at its generation', async () => {
    const client = new FakeClient({ objects: [sample()] });
    await new GuestbookReconciler(client).reconcile(request, reconcileContext());

    const guestbook = await client.get(GuestbookKind, request.name, request.namespace);
    expect(findCondition(guestbook.status?.conditions, AVAILABLE)).toMatchObject({
      status: 'True',
      reason: 'Reconciled',
      observedGeneration: 1,
    });
  });

  it('changes nothing when reconciled again', async () => {
    const client = new FakeClient({ objects: [sample()] });
    const reconciler = new GuestbookReconciler(client);
    await reconciler.reconcile(request, reconcileContext());
    const first = await client.get(GuestbookKind, request.name, request.namespace);
    await reconciler.reconcile(request, reconcileContext());
    const second = await client.get(GuestbookKind, request.name, request.namespace);
    expect(second.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
  });

  it('ignores a Guestbook that no longer exists', async () => {
    const client = new FakeClient();
    await expect(new GuestbookReconciler(client).reconcile(request, reconcileContext())).resolves.toEqual({});
  });
});
