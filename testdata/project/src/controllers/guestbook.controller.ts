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

import {
  controllerManagedBy,
  findCondition,
  isNotFound,
  setCondition,
  type Client,
  type Manager,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
} from '@kubesmith/runtime';
import { GuestbookKind, type Guestbook } from '../api/webapp/v1/guestbook.types.js';

/** The condition type this controller reports on every Guestbook. */
export const AVAILABLE = 'Available';

// +kubebuilder:rbac:groups=webapp.example.com,resources=guestbooks,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=webapp.example.com,resources=guestbooks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=webapp.example.com,resources=guestbooks/finalizers,verbs=update

/** GuestbookReconciler reconciles Guestbook objects. */
export class GuestbookReconciler implements Reconciler {
  constructor(private readonly client: Client) {}

  /**
   * reconcile is part of the main Kubernetes reconciliation loop: it moves the current state of the cluster
   * closer to the state a Guestbook declares. It is called again after an error (with backoff), so it must
   * be idempotent. `context.logger` writes lines that name the controller, the object and this reconcile;
   * `context.recorder` records Kubernetes events on the object (with an RBAC marker for the events:
   * groups=events.k8s.io,resources=events,verbs=create;patch); `context.signal` aborts when this replica
   * loses leadership (its writes are refused from then on): pass it to long work of your own.
   */
  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const guestbook = await this.fetch(request);
    if (guestbook === undefined) return {}; // deleted since the event was queued

    // TODO(user): compare the Guestbook's spec with the cluster and create, update or delete what differs.

    // Report on the object that it has been reconciled at its current generation.
    const generation = guestbook.metadata?.generation;
    const available = findCondition(guestbook.status?.conditions, AVAILABLE);
    if (available?.status !== 'True' || available.observedGeneration !== generation) {
      const conditions = setCondition(guestbook.status?.conditions ?? [], {
        type: AVAILABLE,
        status: 'True',
        reason: 'Reconciled',
        message: 'Guestbook reconciled',
        observedGeneration: generation,
      });
      await this.client.updateStatus(GuestbookKind, {
        ...guestbook,
        status: { ...guestbook.status, conditions },
      });
      context.logger.info('Guestbook is Available', { generation });
    }
    return {};
  }

  /** setupWithManager registers this reconciler for Guestbook events with the manager. */
  setupWithManager(mgr: Manager): void {
    controllerManagedBy(mgr).for(GuestbookKind).named('guestbook').complete(this);
  }

  private async fetch(request: Request): Promise<Guestbook | undefined> {
    try {
      return await this.client.get(GuestbookKind, request.name, request.namespace);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}
