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

import type { V1Container, V1DaemonSet, V1DaemonSetUpdateStrategy } from '@kubernetes/client-node';
import {
  controllerManagedBy,
  findCondition,
  isConflict,
  isNotFound,
  resourceKind,
  retryOnConflict,
  setCondition,
  setControllerReference,
  type Client,
  type Condition,
  type Manager,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
} from '@kubesmith/runtime';
import { NodeAgentKind, type NodeAgent, type NodeAgentStatus } from '../api/agents/v1/nodeagent.types.js';

/** The condition types this controller reports on every NodeAgent. */
export const AVAILABLE = 'Available';
export const PROGRESSING = 'Progressing';
export const DEGRADED = 'Degraded';

/**
 * Server-side apply records this name as the owner of every field the controller sets on the DaemonSet:
 * a field someone else changes is taken back on the next apply (`force: true`), and a field the
 * controller stops setting (a toleration removed from the spec) is removed.
 */
export const FIELD_MANAGER = 'nodeagent-controller';

export const DaemonSetKind = resourceKind<V1DaemonSet>({
  group: 'apps',
  version: 'v1',
  kind: 'DaemonSet',
  plural: 'daemonsets',
  namespaced: true,
});

// What this controller does and no more: it reads and watches NodeAgent objects and writes their status;
// applies (create + patch), reads and watches DaemonSets; records events. It does not watch Nodes: which
// nodes run an agent is the DaemonSet controller's work, and a node that joins or leaves changes the
// DaemonSet's status, which reconciles its NodeAgent (owns() below).
// +kubebuilder:rbac:groups=agents.example.com,resources=nodeagents,verbs=get;list;watch
// +kubebuilder:rbac:groups=agents.example.com,resources=nodeagents/status,verbs=get;update
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

/** The reason of the event recorded when a condition changes. */
const EVENT_REASONS: Record<string, string> = {
  'Available=True': 'Available',
  'Available=False': 'Unavailable',
  'Degraded=True': 'Degraded',
  'Degraded=False': 'Recovered',
};

/**
 * NodeAgentReconciler runs each NodeAgent as a DaemonSet that it owns (one agent pod per matching node),
 * keeps it as the NodeAgent says, and reports how many nodes are covered in the NodeAgent's status.
 */
export class NodeAgentReconciler implements Reconciler {
  constructor(private readonly client: Client) {}

  /**
   * Called for every change of a NodeAgent and of the DaemonSet it owns; called again after an error,
   * with backoff. Idempotent: applying the same configuration twice changes nothing.
   */
  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const nodeAgent = await this.fetch(request);
    // Deleted since the event was queued: the garbage collector removes the DaemonSet and its pods.
    if (nodeAgent === undefined || nodeAgent.metadata?.deletionTimestamp) return {};

    let daemonSet: V1DaemonSet;
    try {
      daemonSet = await this.applyDaemonSet(nodeAgent, context);
    } catch (err) {
      // Say so on the object (Degraded) and fail: the controller retries with backoff.
      const message = err instanceof Error ? err.message : String(err);
      await this.writeStatus(nodeAgent, context, (conditions) => ({
        conditions: setCondition(conditions, {
          type: DEGRADED,
          status: 'True',
          reason: 'ApplyFailed',
          message: message.slice(0, 1024),
          observedGeneration: nodeAgent.metadata?.generation,
        }),
      }));
      throw err;
    }
    await this.writeStatus(nodeAgent, context, (conditions) =>
      statusFromDaemonSet(nodeAgent, daemonSet, conditions),
    );
    return {};
  }

  /** The DaemonSet, as this controller wants it: only the fields it manages. */
  desiredDaemonSet(nodeAgent: NodeAgent): V1DaemonSet {
    const labels = labelsFor(nodeAgent);
    const container: V1Container = {
      name: 'agent',
      image: nodeAgent.spec.image,
      ...(nodeAgent.spec.env ? { env: nodeAgent.spec.env } : {}),
      ...(nodeAgent.spec.resources ? { resources: nodeAgent.spec.resources } : {}),
      // The restricted pod security standard: https://kubernetes.io/docs/concepts/security/pod-security-standards/
      securityContext: {
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      },
    };
    const strategy = nodeAgent.spec.updateStrategy;
    const updateStrategy: V1DaemonSetUpdateStrategy =
      strategy?.type === 'OnDelete'
        ? { type: 'OnDelete' }
        : { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: strategy?.maxUnavailable ?? 1 } };
    const nodeSelector = nodeAgent.spec.nodeSelector ?? {};
    const daemonSet: V1DaemonSet = {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: {
        name: nodeAgent.metadata?.name ?? '',
        namespace: nodeAgent.metadata?.namespace ?? '',
        labels,
      },
      spec: {
        // The selector cannot change once the DaemonSet exists: it holds only labels that never do.
        selector: { matchLabels: selectorFor(nodeAgent) },
        updateStrategy,
        template: {
          metadata: { labels },
          spec: {
            securityContext: {
              runAsNonRoot: true,
              runAsUser: 65532,
              seccompProfile: { type: 'RuntimeDefault' },
            },
            ...(Object.keys(nodeSelector).length > 0 ? { nodeSelector } : {}),
            ...(nodeAgent.spec.tolerations?.length ? { tolerations: nodeAgent.spec.tolerations } : {}),
            containers: [container],
          },
        },
      },
    };
    return setControllerReference(nodeAgent, daemonSet, NodeAgentKind);
  }

  /** setupWithManager registers this reconciler with the manager: the NodeAgent, and its DaemonSet. */
  setupWithManager(mgr: Manager): void {
    controllerManagedBy(mgr)
      .for(NodeAgentKind)
      // A change to the owned DaemonSet (drift, nodes joining or leaving, pods becoming ready) reconciles
      // its NodeAgent.
      .owns(DaemonSetKind)
      .named('nodeagent')
      .complete(this);
  }

  private async applyDaemonSet(nodeAgent: NodeAgent, context: ReconcileContext): Promise<V1DaemonSet> {
    const desired = this.desiredDaemonSet(nodeAgent);
    const name = desired.metadata?.name ?? '';
    const before = await this.client
      .get(DaemonSetKind, name, desired.metadata?.namespace)
      .catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
    const applied = await this.client.apply(DaemonSetKind, desired, {
      fieldManager: FIELD_MANAGER,
      force: true,
    });
    if (before === undefined) {
      context.logger.info('created the DaemonSet', { daemonSet: name });
      await context.recorder.event(
        nodeAgent,
        'Normal',
        'Created',
        'Apply',
        `Created DaemonSet ${name}`,
        applied,
      );
    } else if (applied.metadata?.generation !== before.metadata?.generation) {
      context.logger.info('updated the DaemonSet', {
        daemonSet: name,
        generation: applied.metadata?.generation,
      });
    }
    return applied;
  }

  /**
   * Writes the status `compute` returns (given the current conditions) when it differs from what the
   * object has. A 409 Conflict (the object changed since it was read) reads it again and retries.
   */
  private async writeStatus(
    nodeAgent: NodeAgent,
    context: ReconcileContext,
    compute: (conditions: readonly Condition[]) => NodeAgentStatus,
  ): Promise<void> {
    const before = nodeAgent.status;
    let current: NodeAgent | undefined = nodeAgent;
    await retryOnConflict(async () => {
      if (current === undefined) return;
      const status = { ...current.status, ...compute(current.status?.conditions ?? []) };
      if (JSON.stringify(status) === JSON.stringify(current.status)) return;
      try {
        await this.client.updateStatus(NodeAgentKind, { ...current, status });
      } catch (err) {
        // Someone changed the object since it was read: read it again for the next attempt.
        if (isConflict(err))
          current = await this.fetch({
            name: current.metadata?.name ?? '',
            namespace: current.metadata?.namespace ?? '',
          });
        throw err;
      }
      await this.announce(nodeAgent, context, before, status);
    });
  }

  /** An event and a log line when Available or Degraded turns True or False (not for a first False). */
  private async announce(
    nodeAgent: NodeAgent,
    context: ReconcileContext,
    before: NodeAgentStatus | undefined,
    after: NodeAgentStatus,
  ): Promise<void> {
    for (const type of [AVAILABLE, DEGRADED]) {
      const was = findCondition(before?.conditions, type);
      const now = findCondition(after.conditions, type);
      if (!now || was?.status === now.status) continue;
      if (was === undefined && now.status !== 'True') continue;
      const reason = EVENT_REASONS[`${type}=${now.status}`] ?? type;
      const warning = type === DEGRADED && now.status === 'True';
      context.logger.info(`${type}=${now.status}`, { reason: now.reason, message: now.message });
      await context.recorder.event(
        nodeAgent,
        warning ? 'Warning' : 'Normal',
        reason,
        'Reconcile',
        now.message,
      );
    }
  }

  private async fetch(request: Request): Promise<NodeAgent | undefined> {
    try {
      return await this.client.get(NodeAgentKind, request.name, request.namespace);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}

/**
 * The labels of the DaemonSet and its pods (https://kubernetes.io/docs/concepts/overview/working-with-objects/common-labels/).
 */
export function labelsFor(nodeAgent: NodeAgent): Record<string, string> {
  return { ...selectorFor(nodeAgent), 'app.kubernetes.io/managed-by': 'node-agent' };
}

/** The labels that select the pods: fixed for the life of the NodeAgent. */
function selectorFor(nodeAgent: NodeAgent): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'nodeagent',
    'app.kubernetes.io/instance': nodeAgent.metadata?.name ?? '',
  };
}

/**
 * The NodeAgent's status from its DaemonSet's: node counts, and the conditions Available (every desired
 * node has a ready agent), Progressing (a rollout, or nodes joining, under way) and Degraded (agents on
 * nodes that should not run one).
 */
export function statusFromDaemonSet(
  nodeAgent: NodeAgent,
  daemonSet: V1DaemonSet,
  conditions: readonly Condition[],
): NodeAgentStatus {
  const generation = nodeAgent.metadata?.generation;
  const status = daemonSet.status;
  const desired = status?.desiredNumberScheduled ?? 0;
  const current = status?.currentNumberScheduled ?? 0;
  const ready = status?.numberReady ?? 0;
  const updated = status?.updatedNumberScheduled ?? 0;
  const misscheduled = status?.numberMisscheduled ?? 0;
  const seen = (status?.observedGeneration ?? 0) >= (daemonSet.metadata?.generation ?? 1);
  const counts = `${ready}/${desired} nodes ready, ${updated}/${desired} updated`;
  const rolledOut = seen && current === desired && updated === desired && ready === desired;

  let next = setCondition(conditions, {
    type: AVAILABLE,
    status: seen && desired > 0 && ready === desired ? 'True' : 'False',
    reason: !seen
      ? 'DaemonSetPending'
      : desired === 0
        ? 'NoMatchingNodes'
        : ready === desired
          ? 'AllNodesReady'
          : 'NodesNotReady',
    message: counts,
    observedGeneration: generation,
  });
  next = setCondition(next, {
    type: PROGRESSING,
    status: rolledOut ? 'False' : 'True',
    reason: rolledOut ? 'RolloutComplete' : 'RollingOut',
    message: counts,
    observedGeneration: generation,
  });
  next = setCondition(next, {
    type: DEGRADED,
    status: misscheduled > 0 ? 'True' : 'False',
    reason: misscheduled > 0 ? 'Misscheduled' : 'AsExpected',
    message:
      misscheduled > 0
        ? `${misscheduled} agent pod(s) on nodes that should not run one`
        : 'The DaemonSet progresses as expected',
    observedGeneration: generation,
  });
  return {
    observedGeneration: generation,
    desiredNodes: desired,
    currentNodes: current,
    readyNodes: ready,
    updatedNodes: updated,
    conditions: next,
  };
}
