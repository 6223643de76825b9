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
  isConflict,
  isNotFound,
  resourceKind,
  retryOnConflict,
  type Client,
  type KindSelector,
  type Manager,
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

/** Pods annotated with this, set to "true", get the pod-name label. */
export const ADD_POD_NAME_LABEL_ANNOTATION = 'example.com/add-pod-name-label';
/** The label that carries the pod's name. */
export const POD_NAME_LABEL = 'example.com/pod-name';

/**
 * What the manager's cache holds of pods: only those still running or to run. A pod that has finished
 * (Succeeded or Failed) needs no label, and on a busy cluster finished pods (of Jobs) can outnumber the
 * others; with this selector the API server filters them out of the list and the watch, so they cost the
 * operator neither memory nor reconciles (controller-runtime's `cache.Options.ByObject`). main.ts passes it
 * to the manager: `Manager.create({ cache: { byObject: CACHE_SELECTORS } })`.
 */
export const CACHE_SELECTORS: KindSelector[] = [
  { kind: PodKind, fieldSelector: 'status.phase!=Succeeded,status.phase!=Failed' },
];

// The labeler reads and updates pods; it never creates or deletes them.
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;update;patch

/**
 * PodReconciler is the pod labeler of the Kubernetes blog post "Writing a controller for pod labels": a pod
 * annotated `example.com/add-pod-name-label: "true"` gets the label `example.com/pod-name` with its name,
 * and loses the label when the annotation goes.
 */
export class PodReconciler implements Reconciler {
  constructor(private readonly client: Client) {}

  async reconcile(request: Request): Promise<Result> {
    try {
      // Someone may change the pod between our read and our update (409 Conflict): read it again and
      // re-apply the change, up to 5 times 10 ms apart (client-go's DefaultRetry).
      await retryOnConflict(() => this.labelPod(request));
    } catch (err) {
      // Still conflicting (the cache has not caught up yet): reconcile again later, with backoff.
      if (isConflict(err)) return { requeue: true };
      throw err;
    }
    return {};
  }

  /** One read-modify-write of the pod's label; a no-op when the label is as it should be. */
  private async labelPod(request: Request): Promise<void> {
    const pod = await this.fetch(request);
    if (pod === undefined) return; // deleted since the event was queued

    const name = pod.metadata?.name ?? request.name;
    const labels = { ...pod.metadata?.labels };
    const wanted = pod.metadata?.annotations?.[ADD_POD_NAME_LABEL_ANNOTATION] === 'true';
    const present = labels[POD_NAME_LABEL] === name;
    if (wanted === present && (wanted || !(POD_NAME_LABEL in labels))) return;

    if (wanted) labels[POD_NAME_LABEL] = name;
    else delete labels[POD_NAME_LABEL];
    // The update carries the resourceVersion read above: a concurrent writer makes it fail with 409.
    await this.client.update(PodKind, { ...pod, metadata: { ...pod.metadata, labels } });
  }

  /** setupWithManager registers this reconciler for Pod events with the manager. */
  setupWithManager(mgr: Manager): void {
    controllerManagedBy(mgr).for(PodKind).named('pod-labeler').complete(this);
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
