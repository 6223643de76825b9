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

import type { Condition, ObjectMeta } from '@kubesmith/runtime';
import { GroupVersion } from './group-version.js';

// EDIT THIS FILE!  THIS IS SCAFFOLDING FOR YOU TO OWN!
// After an edit, run `npm run manifests` to regenerate the CRD in config/crd/bases.

/** GuestbookSpec defines the desired state of Guestbook. */
export interface GuestbookSpec {
  // INSERT ADDITIONAL SPEC FIELDS - desired state of cluster.
  // Important: run `npm run manifests` to regenerate the CRD after modifying this file.
  // The markers (+kubebuilder:validation:...) in the doc comments become the CRD's validation.

  /**
   * foo is an example field of Guestbook. Edit guestbook.types.ts to remove or update it.
   * +kubebuilder:validation:MaxLength=253
   */
  foo?: string;
}

/** GuestbookStatus defines the observed state of Guestbook. */
export interface GuestbookStatus {
  // INSERT ADDITIONAL STATUS FIELDS - observed state of cluster.

  /**
   * conditions represent the current state of the Guestbook resource.
   * Each condition has a unique type and reflects the status of a specific aspect of the resource.
   *
   * Standard condition types include:
   * - "Available": the resource is fully functional
   * - "Progressing": the resource is being created or updated
   * - "Degraded": the resource failed to reach or maintain its desired state
   *
   * The status of each condition is one of True, False, or Unknown.
   * +listType=map
   * +listMapKey=type
   */
  conditions?: Condition[];
}

/**
 * Guestbook is the Schema for the guestbooks API.
 * +kubebuilder:object:root=true
 * +kubebuilder:subresource:status
 */
export interface Guestbook {
  apiVersion: 'webapp.example.com/v2';
  kind: 'Guestbook';
  /** metadata is a standard object metadata. */
  metadata?: ObjectMeta;
  /** spec defines the desired state of Guestbook. */
  spec: GuestbookSpec;
  /** status defines the observed state of Guestbook. */
  status?: GuestbookStatus;
}

/** GuestbookKind names the guestbooks resource for the client and the controller builder. */
export const GuestbookKind = GroupVersion.kind<Guestbook>('Guestbook', {
  plural: 'guestbooks',
  namespaced: true,
});
