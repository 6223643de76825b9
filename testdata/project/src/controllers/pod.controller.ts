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
import {
  controllerManagedBy,
  isNotFound,
  resourceKind,
  type Client,
  type Manager,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
} from '@kubesmith/runtime';

/** PodKind names the built-in pods resource for the client and the controller builder. */
export const PodKind = resourceKind<V1Pod>({
  group: '',
  version: 'v1',
  kind: 'Pod',
  plural: 'pods',
  namespaced: true,
});

// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=pods/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=core,resources=pods/finalizers,verbs=update

/** PodReconciler reconciles Pod objects. */
export class PodReconciler implements Reconciler {
  constructor(private readonly client: Client) {}

  /**
   * reconcile is part of the main Kubernetes reconciliation loop: it moves the current state of the cluster
   * closer to the desired state. It is called again after an error (with backoff), so it must be idempotent.
   * `context.logger` writes lines that name the controller, the object and this reconcile;
   * `context.recorder` records Kubernetes events on the object (with an RBAC marker for the events:
   * groups=events.k8s.io,resources=events,verbs=create;patch); `context.signal` aborts when this replica
   * loses leadership (its writes are refused from then on): pass it to long work of your own.
   */
  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const pod = await this.fetch(request);
    if (pod === undefined) return {}; // deleted since the event was queued
    context.logger.debug('reconciling Pod', { resourceVersion: pod.metadata?.resourceVersion });

    // TODO(user): your logic here. For example, to label the Pod by read-modify-write: an update
    // refused with 409 Conflict (another writer changed it since it was read) is read and changed again,
    // up to 5 times 10 ms apart, as client-go's RetryOnConflict (import it from '@kubesmith/runtime'):
    //   await retryOnConflict(async () => {
    //     const latest = await this.client.get(PodKind, request.name, request.namespace);
    //     const labels = { ...latest.metadata?.labels, 'example.com/seen': 'true' };
    //     await this.client.update(PodKind, { ...latest, metadata: { ...latest.metadata, labels } });
    //   });
    // Or with no read at all, a strategic merge patch (lists such as containers merge by name):
    //   await this.client.patch(PodKind, request.name, request.namespace,
    //     { metadata: { labels: { 'example.com/seen': 'true' } } }, { type: 'strategic' });
    return {};
  }

  /** setupWithManager registers this reconciler for Pod events with the manager. */
  setupWithManager(mgr: Manager): void {
    controllerManagedBy(mgr).for(PodKind).named('pod').complete(this);
  }

  private async fetch(request: Request): Promise<V1Pod | undefined> {
    try {
      return await this.client.get(PodKind, request.name, request.namespace);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}
