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

import type { V1Deployment } from '@kubernetes/client-node';
import { ApiError, findCondition, type Client } from '@kubesmith/runtime';
import { FakeClient, FakeRecorder, reconcileContext } from '@kubesmith/runtime/testing';
import { describe, expect, it } from 'vitest';
import { DemoApplicationKind, type DemoApplication } from '../../src/api/demo/v1/demoapplication.types.js';
import {
  AVAILABLE,
  DEFAULT_IMAGE,
  DEGRADED,
  DeploymentKind,
  FINALIZER,
  PROGRESSING,
  ServiceKind,
  DemoApplicationReconciler,
} from '../../src/controllers/demoapplication.controller.js';

const request = { namespace: 'default', name: 'demoapplication-sample' };
const PORT = 80;

function sample(): DemoApplication {
  return {
    apiVersion: 'demo.example.com/v1',
    kind: 'DemoApplication',
    metadata: { name: request.name, namespace: request.namespace, generation: 1 },
    spec: { replicas: 2, serviceType: 'NodePort', ports: [{ port: PORT, nodePort: 30002 }] },
  };
}

/** A reconciler on a FakeClient holding the sample, with a recorder to read its events. */
function setup(options: { objects?: DemoApplication[]; client?: Client; defaultImage?: string } = {}) {
  const fake = new FakeClient({ objects: options.objects ?? [sample()] });
  const client = options.client ?? fake;
  const recorder = new FakeRecorder();
  const reconciler = new DemoApplicationReconciler(client, {
    ...(options.defaultImage ? { defaultImage: options.defaultImage } : {}),
  });
  const reconcile = () => reconciler.reconcile(request, reconcileContext({ recorder }));
  return { fake, recorder, reconcile };
}

/** What the Deployment controller would report once the pods are up. */
async function rollOut(client: FakeClient, ready: number): Promise<void> {
  const deployment = await client.get(DeploymentKind, request.name, request.namespace);
  await client.updateStatus(DeploymentKind, {
    ...deployment,
    status: {
      observedGeneration: deployment.metadata?.generation ?? 1,
      replicas: ready,
      updatedReplicas: ready,
      readyReplicas: ready,
      availableReplicas: ready,
      conditions: [
        { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' },
        { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' },
      ],
    },
  } satisfies V1Deployment);
}

describe('DemoApplicationReconciler', () => {
  it('creates a Deployment and a Service the DemoApplication owns, restricted and labelled', async () => {
    const { fake, reconcile, recorder } = setup();
    await reconcile();

    const owner = await fake.get(DemoApplicationKind, request.name, request.namespace);
    const deployment = await fake.get(DeploymentKind, request.name, request.namespace);
    expect(deployment.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'DemoApplication', uid: owner.metadata?.uid, controller: true }),
    ]);
    expect(deployment.metadata?.labels).toEqual({
      'app.kubernetes.io/name': 'demoapplication',
      'app.kubernetes.io/instance': request.name,
      'app.kubernetes.io/managed-by': 'demo-application',
    });
    expect(deployment.spec?.replicas).toBe(2);
    const pod = deployment.spec?.template.spec;
    expect(pod?.securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    const container = pod?.containers[0];
    expect(container?.image).toBe(DEFAULT_IMAGE);
    expect(container?.ports).toEqual([{ name: `port-${PORT}`, containerPort: PORT, protocol: 'TCP' }]);
    expect(container?.securityContext).toMatchObject({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });

    const service = await fake.get(ServiceKind, request.name, request.namespace);
    expect(service.metadata?.ownerReferences?.[0]).toMatchObject({
      uid: owner.metadata?.uid,
      controller: true,
    });
    expect(service.spec?.type).toBe('NodePort');
    expect(service.spec?.selector).toEqual(deployment.spec?.selector.matchLabels);
    expect(service.spec?.ports).toEqual([
      { name: `port-${PORT}`, port: PORT, targetPort: PORT, protocol: 'TCP', nodePort: 30002 },
    ]);

    expect(owner.metadata?.finalizers).toEqual([FINALIZER]);
    expect(recorder.events.map((event) => event.reason)).toEqual(['Created', 'Created']);
  });

  it('reports the Deployment: Progressing, then Available with its ready replicas', async () => {
    const { fake, reconcile, recorder } = setup();
    await reconcile();
    let demoApplication = await fake.get(DemoApplicationKind, request.name, request.namespace);
    expect(demoApplication.status).toMatchObject({ observedGeneration: 1, readyReplicas: 0 });
    expect(findCondition(demoApplication.status?.conditions, AVAILABLE)?.status).toBe('False');
    expect(findCondition(demoApplication.status?.conditions, PROGRESSING)).toMatchObject({
      status: 'True',
      reason: 'RollingOut',
    });

    await rollOut(fake, 2);
    await reconcile();
    demoApplication = await fake.get(DemoApplicationKind, request.name, request.namespace);
    expect(demoApplication.status).toMatchObject({ observedGeneration: 1, replicas: 2, readyReplicas: 2 });
    const conditions = demoApplication.status?.conditions;
    expect(findCondition(conditions, AVAILABLE)).toMatchObject({
      status: 'True',
      reason: 'MinimumReplicasAvailable',
    });
    expect(findCondition(conditions, PROGRESSING)).toMatchObject({
      status: 'False',
      reason: 'RolloutComplete',
    });
    expect(findCondition(conditions, DEGRADED)).toMatchObject({ status: 'False', reason: 'AsExpected' });
    expect(recorder.events.at(-1)).toMatchObject({ type: 'Normal', reason: 'Available' });
  });

  it('changes nothing when reconciled again', async () => {
    const { fake, reconcile } = setup();
    await reconcile();
    await rollOut(fake, 2);
    await reconcile();
    const before = fake.all().map((o) => o.metadata?.resourceVersion);
    await reconcile();
    expect(fake.all().map((o) => o.metadata?.resourceVersion)).toEqual(before);
  });

  it('puts back replicas changed by hand, and follows image and port changes of the spec', async () => {
    const { fake, reconcile } = setup();
    await reconcile();
    await fake.patch(DeploymentKind, request.name, request.namespace, { spec: { replicas: 5 } });
    await reconcile();
    expect((await fake.get(DeploymentKind, request.name, request.namespace)).spec?.replicas).toBe(2);

    const demoApplication = await fake.get(DemoApplicationKind, request.name, request.namespace);
    await fake.update(DemoApplicationKind, {
      ...demoApplication,
      spec: { ...demoApplication.spec, image: 'registry.example.com/other:v2', ports: [{ port: 9090 }] },
    });
    await reconcile();
    const deployment = await fake.get(DeploymentKind, request.name, request.namespace);
    expect(deployment.spec?.template.spec?.containers[0]?.image).toBe('registry.example.com/other:v2');
    expect(deployment.spec?.template.spec?.containers[0]?.ports?.map((p) => p.containerPort)).toEqual([9090]);
    const service = await fake.get(ServiceKind, request.name, request.namespace);
    expect(service.spec?.ports?.map((p) => p.port)).toEqual([9090]);
    const after = await fake.get(DemoApplicationKind, request.name, request.namespace);
    expect(after.status?.observedGeneration).toBe(2);
  });

  it('runs the image of DEMOAPPLICATION_IMAGE when the spec names none', async () => {
    const { fake, reconcile } = setup({ defaultImage: 'mirror.example.com/pinned:1.0' });
    await reconcile();
    const deployment = await fake.get(DeploymentKind, request.name, request.namespace);
    expect(deployment.spec?.template.spec?.containers[0]?.image).toBe('mirror.example.com/pinned:1.0');
  });

  it('reports Degraded when the Deployment cannot progress', async () => {
    const { fake, reconcile, recorder } = setup();
    await reconcile();
    const deployment = await fake.get(DeploymentKind, request.name, request.namespace);
    await fake.updateStatus(DeploymentKind, {
      ...deployment,
      status: {
        observedGeneration: 1,
        replicas: 2,
        updatedReplicas: 2,
        readyReplicas: 0,
        conditions: [
          { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable' },
          { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'timed out' },
        ],
      },
    });
    await reconcile();
    const demoApplication = await fake.get(DemoApplicationKind, request.name, request.namespace);
    expect(findCondition(demoApplication.status?.conditions, DEGRADED)).toMatchObject({
      status: 'True',
      reason: 'ProgressDeadlineExceeded',
      message: 'timed out',
    });
    expect(recorder.events.at(-1)).toMatchObject({ type: 'Warning', reason: 'Degraded' });
  });

  it('retries a status update that conflicts with another writer', async () => {
    const fake = new FakeClient({ objects: [sample()] });
    let conflicts = 1;
    // The FakeClient, but its first status update loses a race with another writer.
    const client = new Proxy(fake, {
      get(target, property) {
        if (property === 'updateStatus')
          return async (...args: Parameters<Client['updateStatus']>) => {
            if (conflicts-- > 0) throw new ApiError(409, 'Conflict', 'the object has been modified');
            return target.updateStatus(...args);
          };
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const { reconcile } = setup({ client });
    await reconcile();
    expect(conflicts).toBe(-1);
    const demoApplication = await fake.get(DemoApplicationKind, request.name, request.namespace);
    expect(demoApplication.status?.observedGeneration).toBe(1);
  });

  it('on deletion records it and removes its finalizer, so that the DemoApplication goes', async () => {
    const { fake, reconcile, recorder } = setup();
    await reconcile();
    await fake.delete(DemoApplicationKind, request.name, request.namespace);
    expect(
      (await fake.get(DemoApplicationKind, request.name, request.namespace)).metadata?.deletionTimestamp,
    ).toBeDefined();
    await reconcile();
    await expect(fake.get(DemoApplicationKind, request.name, request.namespace)).rejects.toMatchObject({
      statusCode: 404,
    });
    expect(recorder.events.at(-1)).toMatchObject({ reason: 'Deleting', action: 'Finalize' });
  });

  it('ignores a DemoApplication that no longer exists', async () => {
    const { reconcile } = setup({ objects: [] });
    await expect(reconcile()).resolves.toEqual({});
  });
});
