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

import type { V1EnvVar, V1ResourceRequirements } from '@kubernetes/client-node';
import type { Condition, int32, int64, ObjectMeta } from '@kubesmith/runtime';
import { GroupVersion } from './group-version.js';

// EDIT THIS FILE!  THIS IS SCAFFOLDING FOR YOU TO OWN!
// After an edit, run `npm run manifests` to regenerate the CRD in config/crd/bases.
// The controller in demoapplication.controller.ts turns a DemoApplication into a Deployment and a Service.

/** DemoApplicationPort is a port of the container, exposed by the Service under the same number. */
export interface DemoApplicationPort {
  /**
   * port is the port the container listens on, and the Service's port.
   * +kubebuilder:validation:Minimum=1
   * +kubebuilder:validation:Maximum=65535
   */
  port: int32;

  /**
   * nodePort is the port on every node that forwards to this port, when serviceType is NodePort.
   * Left out, the cluster picks one.
   * +kubebuilder:validation:Minimum=30000
   * +kubebuilder:validation:Maximum=32767
   * +optional
   */
  nodePort?: int32;

  /**
   * name of the port in the container and the Service (an IANA service name). Default: `port-<port>`.
   * +kubebuilder:validation:MaxLength=15
   * +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
   * +optional
   */
  name?: string;
}

/** DemoApplicationSpec defines the desired state of DemoApplication: the Deployment and Service it runs. */
export interface DemoApplicationSpec {
  /**
   * replicas is how many pods run the image.
   * +kubebuilder:validation:Minimum=1
   * +kubebuilder:validation:Maximum=50
   * +kubebuilder:default=1
   * +optional
   */
  replicas?: int32;

  /**
   * image is the container image to run. Left out, the operator's DEMOAPPLICATION_IMAGE environment
   * variable names it (config/manager/manager.yaml pins nginx:1.27).
   * +kubebuilder:validation:MaxLength=512
   * +optional
   */
  image?: string;

  /**
   * command replaces the image's entrypoint.
   * +kubebuilder:validation:MaxItems=64
   * +optional
   */
  command?: string[];

  /**
   * ports the container listens on; the Service exposes each under the same number.
   * +listType=map
   * +listMapKey=port
   * +kubebuilder:validation:MaxItems=16
   * +optional
   */
  ports?: DemoApplicationPort[];

  /**
   * serviceType is how the Service is exposed: ClusterIP (inside the cluster) or NodePort (also on a port
   * of every node).
   * +kubebuilder:default=NodePort
   * +optional
   */
  serviceType?: 'ClusterIP' | 'NodePort';

  /**
   * env is the container's environment.
   * +listType=map
   * +listMapKey=name
   * +kubebuilder:validation:MaxItems=128
   * +optional
   */
  env?: V1EnvVar[];

  /**
   * resources are the container's requests and limits.
   * +optional
   */
  resources?: V1ResourceRequirements;
}

/** DemoApplicationStatus defines the observed state of DemoApplication, taken from its Deployment. */
export interface DemoApplicationStatus {
  /**
   * observedGeneration is the metadata.generation this status was computed for.
   * +optional
   */
  observedGeneration?: int64;

  /**
   * replicas is how many pods the Deployment has.
   * +optional
   */
  replicas?: int32;

  /**
   * readyReplicas is how many of them are ready.
   * +optional
   */
  readyReplicas?: int32;

  /**
   * conditions represent the current state of the DemoApplication resource:
   * - "Available": the Deployment has its minimum of ready pods
   * - "Progressing": a rollout is under way (the spec changed, or pods are not all updated and ready)
   * - "Degraded": the Deployment cannot reach the desired state (progress deadline exceeded, pods
   *   refused, or the operator failed to apply it)
   * +listType=map
   * +listMapKey=type
   * +optional
   */
  conditions?: Condition[];
}

/**
 * DemoApplication is the Schema for the demoapplications API.
 * +kubebuilder:object:root=true
 * +kubebuilder:subresource:status
 * +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
 * +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
 * +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
 * +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
 */
export interface DemoApplication {
  apiVersion: 'demo.example.com/v1';
  kind: 'DemoApplication';
  /** metadata is a standard object metadata. */
  metadata?: ObjectMeta;
  /** spec defines the desired state of DemoApplication. */
  spec: DemoApplicationSpec;
  /** status defines the observed state of DemoApplication. */
  status?: DemoApplicationStatus;
}

/** DemoApplicationKind names the demoapplications resource for the client and the controller builder. */
export const DemoApplicationKind = GroupVersion.kind<DemoApplication>('DemoApplication', {
  plural: 'demoapplications',
  namespaced: true,
});
