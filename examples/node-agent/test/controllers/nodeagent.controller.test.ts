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

import type { V1DaemonSet } from '@kubernetes/client-node';
import { ApiError, findCondition, type Client } from '@kubesmith/runtime';
import { FakeClient, FakeRecorder, reconcileContext } from '@kubesmith/runtime/testing';
import { describe, expect, it } from 'vitest';
import { NodeAgentKind, type NodeAgent } from '../../src/api/agents/v1/nodeagent.types.js';
import {
  AVAILABLE,
  DaemonSetKind,
  DEGRADED,
  NodeAgentReconciler,
  PROGRESSING,
} from '../../src/controllers/nodeagent.controller.js';

const request = { namespace: 'default', name: 'nodeagent-sample' };
const IMAGE = 'registry.k8s.io/pause:3.10';

function sample(): NodeAgent {
  return {
    apiVersion: 'agents.example.com/v1',
    kind: 'NodeAgent',
    metadata: { name: request.name, namespace: request.namespace, generation: 1, uid: 'uid-1' },
    spec: {
      image: IMAGE,
      nodeSelector: { 'example.com/agent': 'enabled' },
      tolerations: [
        { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
      ],
    },
  };
}

/** A reconciler on a FakeClient holding the sample, with a recorder to read its events. */
function setup(options: { client?: Client } = {}) {
  const fake = new FakeClient({ objects: [sample()] });
  const recorder = new FakeRecorder();
  const reconciler = new NodeAgentReconciler(options.client ?? fake);
  const reconcile = () => reconciler.reconcile(request, reconcileContext({ recorder }));
  return { fake, recorder, reconcile };
}

/** What the DaemonSet controller would report with `ready` of `desired` nodes covered. */
async function report(client: FakeClient, desired: number, ready: number, misscheduled = 0): Promise<void> {
  const daemonSet = await client.get(DaemonSetKind, request.name, request.namespace);
  await client.updateStatus(DaemonSetKind, {
    ...daemonSet,
    status: {
      observedGeneration: daemonSet.metadata?.generation ?? 1,
      desiredNumberScheduled: desired,
      currentNumberScheduled: desired,
      updatedNumberScheduled: desired,
      numberReady: ready,
      numberAvailable: ready,
      numberMisscheduled: misscheduled,
    },
  } satisfies V1DaemonSet);
}

describe('NodeAgentReconciler', () => {
  it('creates a DaemonSet the NodeAgent owns: its image, node selector, tolerations, restricted pods', async () => {
    const { fake, reconcile, recorder } = setup();
    await reconcile();

    const daemonSet = await fake.get(DaemonSetKind, request.name, request.namespace);
    const owner = daemonSet.metadata?.ownerReferences?.[0];
    expect(owner).toMatchObject({ kind: 'NodeAgent', name: request.name, controller: true });
    const pod = daemonSet.spec?.template.spec;
    expect(pod?.containers[0]?.image).toBe(IMAGE);
    expect(pod?.nodeSelector).toEqual({ 'example.com/agent': 'enabled' });
    expect(pod?.tolerations).toEqual(sample().spec.tolerations);
    expect(pod?.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod?.containers[0]?.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(daemonSet.spec?.updateStrategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 1 },
    });
    expect(daemonSet.metadata?.labels).toMatchObject({
      'app.kubernetes.io/name': 'nodeagent',
      'app.kubernetes.io/instance': request.name,
      'app.kubernetes.io/managed-by': 'node-agent',
    });
    expect(recorder.events.map((e) => e.reason)).toEqual(['Created']);
  });

  it('reports the nodes covered: Available once every desired node has a ready agent', async () => {
    const { fake, reconcile, recorder } = setup();
    await reconcile();
    await report(fake, 2, 1);
    await reconcile();
    let status = (await fake.get(NodeAgentKind, request.name, request.namespace)).status;
    expect(status).toMatchObject({ observedGeneration: 1, desiredNodes: 2, currentNodes: 2, readyNodes: 1 });
    expect(findCondition(status?.conditions, AVAILABLE)).toMatchObject({
      status: 'False',
      reason: 'NodesNotReady',
    });
    expect(findCondition(status?.conditions, PROGRESSING)?.status).toBe('True');

    await report(fake, 2, 2);
    await reconcile();
    status = (await fake.get(NodeAgentKind, request.name, request.namespace)).status;
    expect(findCondition(status?.conditions, AVAILABLE)).toMatchObject({
      status: 'True',
      reason: 'AllNodesReady',
      message: '2/2 nodes ready, 2/2 updated',
    });
    expect(findCondition(status?.conditions, PROGRESSING)).toMatchObject({
      status: 'False',
      reason: 'RolloutComplete',
    });
    expect(findCondition(status?.conditions, DEGRADED)?.status).toBe('False');
    expect(recorder.events.map((e) => e.reason)).toEqual(['Created', 'Available']);
  });

  it('says so when no node matches, and when agents run where they should not', async () => {
    const { fake, reconcile } = setup();
    await reconcile();
    await report(fake, 0, 0);
    await reconcile();
    let status = (await fake.get(NodeAgentKind, request.name, request.namespace)).status;
    expect(findCondition(status?.conditions, AVAILABLE)).toMatchObject({
      status: 'False',
      reason: 'NoMatchingNodes',
    });

    await report(fake, 1, 1, 1);
    await reconcile();
    status = (await fake.get(NodeAgentKind, request.name, request.namespace)).status;
    expect(findCondition(status?.conditions, DEGRADED)).toMatchObject({
      status: 'True',
      reason: 'Misscheduled',
    });
  });

  it('wants what the spec says: an OnDelete strategy, a new selector, no tolerations', () => {
    // What the controller applies; the API server's server-side apply removes the fields it stops setting
    // (the integration test checks that on a real cluster).
    const changed = sample();
    changed.spec = { image: 'agent:v2', nodeSelector: { zone: 'a' }, updateStrategy: { type: 'OnDelete' } };
    const spec = new NodeAgentReconciler(new FakeClient()).desiredDaemonSet(changed).spec;
    expect(spec?.updateStrategy).toEqual({ type: 'OnDelete' });
    expect(spec?.template.spec?.nodeSelector).toEqual({ zone: 'a' });
    expect(spec?.template.spec?.tolerations).toBeUndefined();
    expect(spec?.template.spec?.containers[0]?.image).toBe('agent:v2');
  });

  it('reports Degraded and fails when the DaemonSet cannot be applied, so that it is retried', async () => {
    const fake = new FakeClient({ objects: [sample()] });
    const refusing: Client = Object.assign(Object.create(fake) as FakeClient, {
      apply: () => Promise.reject(new ApiError(403, 'Forbidden', 'daemonsets.apps is forbidden')),
    });
    const { reconcile } = setup({ client: refusing });
    await expect(reconcile()).rejects.toThrow(/forbidden/);
    const status = (await fake.get(NodeAgentKind, request.name, request.namespace)).status;
    expect(findCondition(status?.conditions, DEGRADED)).toMatchObject({
      status: 'True',
      reason: 'ApplyFailed',
    });
  });

  it('does nothing for a NodeAgent that is gone', async () => {
    const fake = new FakeClient();
    const reconciler = new NodeAgentReconciler(fake);
    await expect(reconciler.reconcile(request, reconcileContext())).resolves.toEqual({});
    expect(await fake.list(DaemonSetKind)).toEqual([]);
  });
});
