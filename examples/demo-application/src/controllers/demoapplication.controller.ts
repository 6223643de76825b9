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

import type { V1Container, V1Deployment, V1DeploymentCondition, V1Service } from '@kubernetes/client-node';
import {
  addFinalizer,
  containsFinalizer,
  controllerManagedBy,
  findCondition,
  isConflict,
  isNotFound,
  removeFinalizer,
  resourceKind,
  retryOnConflict,
  setCondition,
  setControllerReference,
  type Client,
  type Condition,
  type KubernetesObject,
  type Manager,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type ResourceKind,
  type Result,
} from '@kubesmith/runtime';
import {
  DemoApplicationKind,
  type DemoApplication,
  type DemoApplicationPort,
  type DemoApplicationStatus,
} from '../api/demo/v1/demoapplication.types.js';

/** The condition types this controller reports on every DemoApplication. */
export const AVAILABLE = 'Available';
export const PROGRESSING = 'Progressing';
export const DEGRADED = 'Degraded';

/**
 * Server-side apply records this name as the owner of every field the controller sets on the Deployment
 * and the Service. A field someone else changes (`kubectl scale`, `kubectl edit`) is taken back on the
 * next apply (`force: true`), and a field the controller stops setting is removed.
 */
export const FIELD_MANAGER = 'demoapplication-controller';

/**
 * Held on every DemoApplication so that the controller sees it being deleted. The Deployment and the Service
 * need no finalizer: their owner reference hands them to the garbage collector. What ownership cannot
 * express is an action taken *before* the DemoApplication disappears; here that is recording it (an event on the
 * DemoApplication and a log line). Put there what your application needs at its end (deregistering it from an
 * external system, a final backup ...).
 */
export const FINALIZER = 'demo.example.com/finalizer';

/** The environment variable of the manager that names the default image (config/manager/manager.yaml). */
export const IMAGE_ENV = 'DEMOAPPLICATION_IMAGE';
/** The image when neither the DemoApplication nor DEMOAPPLICATION_IMAGE names one. */
export const DEFAULT_IMAGE = 'nginx:1.27';
/** The container's command when the DemoApplication gives none (empty: the image's entrypoint). */
export const DEFAULT_COMMAND: readonly string[] = [];

export const DeploymentKind = resourceKind<V1Deployment>({
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  plural: 'deployments',
  namespaced: true,
});
export const ServiceKind = resourceKind<V1Service>({
  group: '',
  version: 'v1',
  kind: 'Service',
  plural: 'services',
  namespaced: true,
});

// What this controller does and no more: it reads and watches DemoApplication objects, updates them to add and
// remove its finalizer, writes their status; applies (create + patch), reads and watches Deployments and
// Services, deletes a Service it no longer needs, and records events.
// +kubebuilder:rbac:groups=demo.example.com,resources=demoapplications,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=demo.example.com,resources=demoapplications/status,verbs=get;update
// +kubebuilder:rbac:groups=demo.example.com,resources=demoapplications/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=core,resources=services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

/** The reason of the event recorded when a condition changes. */
const EVENT_REASONS: Record<string, string> = {
  'Available=True': 'Available',
  'Available=False': 'Unavailable',
  'Degraded=True': 'Degraded',
  'Degraded=False': 'Recovered',
};

export interface DemoApplicationReconcilerOptions {
  /** The image of a DemoApplication that names none. Default: $DEMOAPPLICATION_IMAGE, else DEFAULT_IMAGE. */
  defaultImage?: string;
}

/**
 * DemoApplicationReconciler runs each DemoApplication as a Deployment and a Service that it owns, keeps them as the
 * DemoApplication says, and reports the Deployment's state in the DemoApplication's status.
 */
export class DemoApplicationReconciler implements Reconciler {
  private readonly defaultImage: string;

  constructor(
    private readonly client: Client,
    options: DemoApplicationReconcilerOptions = {},
  ) {
    this.defaultImage = options.defaultImage ?? (process.env[IMAGE_ENV] || DEFAULT_IMAGE);
  }

  /**
   * Called for every change of a DemoApplication, and of a Deployment or Service it owns; called again after an
   * error, with backoff. Idempotent: applying the same configuration twice changes nothing.
   */
  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    let demoApplication = await this.fetch(request);
    if (demoApplication === undefined) return {}; // deleted since the event was queued

    if (demoApplication.metadata?.deletionTimestamp) {
      await this.finalize(demoApplication, context);
      return {};
    }
    if (!containsFinalizer(demoApplication, FINALIZER)) {
      const updated = await this.updateWithRetry(request, (fresh) => addFinalizer(fresh, FINALIZER));
      if (updated === undefined) return {};
      demoApplication = updated;
    }

    let deployment: V1Deployment;
    try {
      deployment = await this.applyDeployment(demoApplication, context);
      await this.reconcileService(demoApplication, context);
    } catch (err) {
      // Say so on the object (Degraded) and fail: the controller retries with backoff.
      const message = err instanceof Error ? err.message : String(err);
      await this.writeStatus(demoApplication, context, (conditions) => ({
        conditions: setCondition(conditions, {
          type: DEGRADED,
          status: 'True',
          reason: 'ApplyFailed',
          message: message.slice(0, 1024),
          observedGeneration: demoApplication.metadata?.generation,
        }),
      }));
      throw err;
    }
    await this.writeStatus(demoApplication, context, (conditions) =>
      statusFromDeployment(demoApplication, deployment, conditions),
    );
    return {};
  }

  /** The Deployment, as this controller wants it: only the fields it manages. */
  desiredDeployment(demoApplication: DemoApplication): V1Deployment {
    const labels = labelsFor(demoApplication);
    const command = demoApplication.spec.command ?? DEFAULT_COMMAND;
    const container: V1Container = {
      name: 'demoapplication',
      image: demoApplication.spec.image || this.defaultImage,
      ...(command.length > 0 ? { command: [...command] } : {}),
      ports: (demoApplication.spec.ports ?? []).map((port) => ({
        name: portName(port),
        containerPort: port.port,
        protocol: 'TCP',
      })),
      ...(demoApplication.spec.env ? { env: demoApplication.spec.env } : {}),
      ...(demoApplication.spec.resources ? { resources: demoApplication.spec.resources } : {}),
      // The restricted pod security standard: https://kubernetes.io/docs/concepts/security/pod-security-standards/
      securityContext: {
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      },
    };
    const deployment: V1Deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name: demoApplication.metadata?.name ?? '',
        namespace: demoApplication.metadata?.namespace ?? '',
        labels,
      },
      spec: {
        replicas: demoApplication.spec.replicas ?? 1,
        // The selector cannot change once the Deployment exists: it holds only labels that never do.
        selector: { matchLabels: selectorFor(demoApplication) },
        template: {
          metadata: { labels },
          spec: {
            securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [container],
          },
        },
      },
    };
    return setControllerReference(demoApplication, deployment, DemoApplicationKind);
  }

  /** The Service, as this controller wants it; undefined when the DemoApplication has no ports. */
  desiredService(demoApplication: DemoApplication): V1Service | undefined {
    const ports = demoApplication.spec.ports ?? [];
    if (ports.length === 0) return undefined;
    const type = demoApplication.spec.serviceType ?? 'NodePort';
    const service: V1Service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: demoApplication.metadata?.name ?? '',
        namespace: demoApplication.metadata?.namespace ?? '',
        labels: labelsFor(demoApplication),
      },
      spec: {
        type,
        selector: selectorFor(demoApplication),
        ports: ports.map((port) => ({
          name: portName(port),
          port: port.port,
          targetPort: port.port,
          protocol: 'TCP',
          ...(type === 'NodePort' && port.nodePort !== undefined ? { nodePort: port.nodePort } : {}),
        })),
      },
    };
    return setControllerReference(demoApplication, service, DemoApplicationKind);
  }

  /** setupWithManager registers this reconciler with the manager: the DemoApplication, and what it owns. */
  setupWithManager(mgr: Manager): void {
    controllerManagedBy(mgr)
      .for(DemoApplicationKind)
      // A change to an owned Deployment or Service (drift, or the Deployment's status) reconciles its owner.
      .owns(DeploymentKind)
      .owns(ServiceKind)
      .named('demoapplication')
      .complete(this);
  }

  private async applyDeployment(
    demoApplication: DemoApplication,
    context: ReconcileContext,
  ): Promise<V1Deployment> {
    const desired = this.desiredDeployment(demoApplication);
    const before = await this.fetchOptional(DeploymentKind, desired);
    const applied = await this.client.apply(DeploymentKind, desired, {
      fieldManager: FIELD_MANAGER,
      force: true,
    });
    if (before === undefined) {
      context.logger.info('created the Deployment', { deployment: desired.metadata?.name });
      await context.recorder.event(
        demoApplication,
        'Normal',
        'Created',
        'Apply',
        `Created Deployment ${desired.metadata?.name}`,
        applied,
      );
    } else if (applied.metadata?.generation !== before.metadata?.generation) {
      context.logger.info('updated the Deployment', {
        deployment: desired.metadata?.name,
        generation: applied.metadata?.generation,
      });
    }
    return applied;
  }

  private async reconcileService(demoApplication: DemoApplication, context: ReconcileContext): Promise<void> {
    const desired = this.desiredService(demoApplication);
    const name = demoApplication.metadata?.name ?? '';
    const namespace = demoApplication.metadata?.namespace ?? '';
    if (desired === undefined) {
      // No ports: no Service. Delete the one this DemoApplication controls, if any (never someone else's).
      const current = await this.fetchOptional(ServiceKind, { metadata: { name, namespace } });
      const owner = current?.metadata?.ownerReferences?.find((ref) => ref.controller === true);
      if (current && owner?.uid === demoApplication.metadata?.uid) {
        await this.client.delete(ServiceKind, name, namespace).catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
        await context.recorder.event(
          demoApplication,
          'Normal',
          'Deleted',
          'Apply',
          `Deleted Service ${name}: no ports`,
        );
      }
      return;
    }
    const before = await this.fetchOptional(ServiceKind, desired);
    const applied = await this.client.apply(ServiceKind, desired, {
      fieldManager: FIELD_MANAGER,
      force: true,
    });
    if (before === undefined) {
      context.logger.info('created the Service', { service: name });
      await context.recorder.event(
        demoApplication,
        'Normal',
        'Created',
        'Apply',
        `Created Service ${name}`,
        applied,
      );
    }
  }

  /** The DemoApplication is being deleted: do what ownership cannot (see FINALIZER), then let it go. */
  private async finalize(demoApplication: DemoApplication, context: ReconcileContext): Promise<void> {
    if (!containsFinalizer(demoApplication, FINALIZER)) return;
    const name = demoApplication.metadata?.name ?? '';
    context.logger.info(
      'DemoApplication deleted: its Deployment and Service go with it (garbage collection)',
    );
    await context.recorder.event(
      demoApplication,
      'Normal',
      'Deleting',
      'Finalize',
      `Deleting ${name}: the garbage collector removes Deployment ${name} and Service ${name}`,
    );
    await this.updateWithRetry({ name, namespace: demoApplication.metadata?.namespace ?? '' }, (fresh) =>
      removeFinalizer(fresh, FINALIZER),
    );
  }

  /**
   * Writes the status `compute` returns (given the current conditions) when it differs from what the
   * object has. A 409 Conflict (the object changed since it was read) reads it again and retries; the
   * new status keeps the observedGeneration of the spec the controller acted on.
   */
  private async writeStatus(
    demoApplication: DemoApplication,
    context: ReconcileContext,
    compute: (conditions: readonly Condition[]) => DemoApplicationStatus,
  ): Promise<void> {
    const before = demoApplication.status;
    let current: DemoApplication | undefined = demoApplication;
    await retryOnConflict(async () => {
      if (current === undefined) return;
      const status = { ...current.status, ...compute(current.status?.conditions ?? []) };
      if (JSON.stringify(status) === JSON.stringify(current.status)) return;
      try {
        await this.client.updateStatus(DemoApplicationKind, { ...current, status });
      } catch (err) {
        // Someone changed the object since it was read: read it again for the next attempt.
        if (isConflict(err))
          current = await this.fetch({
            name: current.metadata?.name ?? '',
            namespace: current.metadata?.namespace ?? '',
          });
        throw err;
      }
      await this.announce(demoApplication, context, before, status);
    });
  }

  /** An event and a log line when Available or Degraded changes (not for a first False). */
  private async announce(
    demoApplication: DemoApplication,
    context: ReconcileContext,
    before: DemoApplicationStatus | undefined,
    after: DemoApplicationStatus,
  ): Promise<void> {
    for (const type of [AVAILABLE, DEGRADED]) {
      const was = findCondition(before?.conditions, type);
      const now = findCondition(after.conditions, type);
      if (!now || (was?.status === now.status && was.reason === now.reason)) continue;
      if (was === undefined && now.status !== 'True') continue;
      const reason = EVENT_REASONS[`${type}=${now.status}`] ?? type;
      const warning = type === DEGRADED && now.status === 'True';
      context.logger.info(`${type}=${now.status}`, { reason: now.reason, message: now.message });
      await context.recorder.event(
        demoApplication,
        warning ? 'Warning' : 'Normal',
        reason,
        'Reconcile',
        now.message,
      );
    }
  }

  /** Reads the DemoApplication again and applies `mutate` to it, retrying on conflict; undefined when it is gone. */
  private async updateWithRetry(
    request: Request,
    mutate: (demoApplication: DemoApplication) => boolean,
  ): Promise<DemoApplication | undefined> {
    return retryOnConflict(async () => {
      const fresh = await this.fetch(request);
      if (fresh === undefined || !mutate(fresh)) return fresh;
      return this.client.update(DemoApplicationKind, fresh);
    });
  }

  private async fetch(request: Request): Promise<DemoApplication | undefined> {
    try {
      return await this.client.get(DemoApplicationKind, request.name, request.namespace);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private async fetchOptional<T>(kind: ResourceKind<T>, object: KubernetesObject): Promise<T | undefined> {
    try {
      return await this.client.get(kind, object.metadata?.name ?? '', object.metadata?.namespace);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}

/**
 * The labels of the Deployment, its pods and the Service (https://kubernetes.io/docs/concepts/overview/working-with-objects/common-labels/).
 */
export function labelsFor(demoApplication: DemoApplication): Record<string, string> {
  return { ...selectorFor(demoApplication), 'app.kubernetes.io/managed-by': 'demo-application' };
}

/** The labels that select the pods: fixed for the life of the DemoApplication. */
function selectorFor(demoApplication: DemoApplication): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'demoapplication',
    'app.kubernetes.io/instance': demoApplication.metadata?.name ?? '',
  };
}

function portName(port: DemoApplicationPort): string {
  return port.name ?? `port-${port.port}`;
}

function deploymentCondition(deployment: V1Deployment, type: string): V1DeploymentCondition | undefined {
  return deployment.status?.conditions?.find((condition) => condition.type === type);
}

/**
 * The DemoApplication's status from its Deployment's: replica counts, and the conditions Available (the
 * Deployment's own), Progressing (a rollout under way) and Degraded (it cannot get there).
 */
export function statusFromDeployment(
  demoApplication: DemoApplication,
  deployment: V1Deployment,
  conditions: readonly Condition[],
): DemoApplicationStatus {
  const generation = demoApplication.metadata?.generation;
  const desired = demoApplication.spec.replicas ?? 1;
  const status = deployment.status ?? {};
  const replicas = status.replicas ?? 0;
  const ready = status.readyReplicas ?? 0;
  const updated = status.updatedReplicas ?? 0;
  const seen = (status.observedGeneration ?? 0) >= (deployment.metadata?.generation ?? 1);
  const counts = `${ready}/${desired} replicas ready, ${updated}/${desired} updated`;

  const available = deploymentCondition(deployment, 'Available');
  const progressing = deploymentCondition(deployment, 'Progressing');
  const failure = deploymentCondition(deployment, 'ReplicaFailure');
  const rolledOut = seen && updated === desired && ready === desired && replicas === desired;

  let next = setCondition(conditions, {
    type: AVAILABLE,
    status: available?.status === 'True' ? 'True' : 'False',
    reason: available?.reason ?? 'DeploymentPending',
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
  const stuck =
    progressing?.reason === 'ProgressDeadlineExceeded'
      ? { reason: 'ProgressDeadlineExceeded', message: progressing.message ?? 'progress deadline exceeded' }
      : failure?.status === 'True'
        ? { reason: 'ReplicaFailure', message: failure.message ?? 'pods cannot be created' }
        : undefined;
  next = setCondition(next, {
    type: DEGRADED,
    status: stuck ? 'True' : 'False',
    reason: stuck?.reason ?? 'AsExpected',
    message: stuck?.message ?? 'The Deployment progresses as expected',
    observedGeneration: generation,
  });
  return { observedGeneration: generation, replicas, readyReplicas: ready, conditions: next };
}
