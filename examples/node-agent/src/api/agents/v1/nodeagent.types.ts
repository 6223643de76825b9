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

import type { V1EnvVar, V1ResourceRequirements, V1Toleration } from '@kubernetes/client-node';
import type { Condition, int32, int64, ObjectMeta } from '@kubesmith/runtime';
import { GroupVersion } from './group-version.js';

// The controller in nodeagent.controller.ts runs a NodeAgent as a DaemonSet: one pod on every node that
// matches nodeSelector (and whose taints the tolerations allow). After an edit, run `npm run manifests`.

/** NodeAgentUpdateStrategy says how a changed pod template reaches the nodes. */
export interface NodeAgentUpdateStrategy {
  /**
   * type is RollingUpdate (replace the pods node by node, maxUnavailable at a time) or OnDelete (a pod
   * changes only when someone deletes it).
   * +kubebuilder:default=RollingUpdate
   * +optional
   */
  type?: 'RollingUpdate' | 'OnDelete';

  /**
   * maxUnavailable is how many nodes may be without a ready agent during a rolling update.
   * +kubebuilder:validation:Minimum=1
   * +kubebuilder:default=1
   * +optional
   */
  maxUnavailable?: int32;
}

/** NodeAgentSpec defines the desired state of NodeAgent: the agent and the nodes it runs on. */
export interface NodeAgentSpec {
  /**
   * image is the agent's container image.
   * +kubebuilder:validation:MinLength=1
   * +kubebuilder:validation:MaxLength=512
   */
  image: string;

  /**
   * nodeSelector picks the nodes: an agent runs on every node whose labels include all of these.
   * Empty, it runs on every node.
   * +kubebuilder:validation:MaxProperties=32
   * +optional
   */
  nodeSelector?: Record<string, string>;

  /**
   * tolerations let the agent run on nodes with matching taints (a control-plane node, for example).
   * +kubebuilder:validation:MaxItems=32
   * +optional
   */
  tolerations?: V1Toleration[];

  /**
   * updateStrategy says how a change of the image or of env reaches the nodes.
   * +optional
   */
  updateStrategy?: NodeAgentUpdateStrategy;

  /**
   * env is the agent's environment.
   * +listType=map
   * +listMapKey=name
   * +kubebuilder:validation:MaxItems=128
   * +optional
   */
  env?: V1EnvVar[];

  /**
   * resources are the agent container's requests and limits (per node).
   * +optional
   */
  resources?: V1ResourceRequirements;
}

/** NodeAgentStatus defines the observed state of NodeAgent, taken from its DaemonSet. */
export interface NodeAgentStatus {
  /**
   * observedGeneration is the metadata.generation this status was computed for.
   * +optional
   */
  observedGeneration?: int64;

  /**
   * desiredNodes is how many nodes should run the agent (they match the selector and tolerations).
   * +optional
   */
  desiredNodes?: int32;

  /**
   * currentNodes is how many of them run an agent pod.
   * +optional
   */
  currentNodes?: int32;

  /**
   * readyNodes is how many of them have a ready agent.
   * +optional
   */
  readyNodes?: int32;

  /**
   * updatedNodes is how many of them run the current pod template.
   * +optional
   */
  updatedNodes?: int32;

  /**
   * conditions represent the current state of the NodeAgent resource:
   * - "Available": every desired node has a ready agent
   * - "Progressing": a rollout is under way (the spec changed, or nodes joined or left)
   * - "Degraded": the operator failed to apply the DaemonSet, or pods are scheduled where they cannot run
   * +listType=map
   * +listMapKey=type
   * +optional
   */
  conditions?: Condition[];
}

/**
 * NodeAgent is the Schema for the nodeagents API.
 * +kubebuilder:object:root=true
 * +kubebuilder:subresource:status
 * +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.status.desiredNodes`
 * +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyNodes`
 * +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
 * +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
 */
export interface NodeAgent {
  apiVersion: 'agents.example.com/v1';
  kind: 'NodeAgent';
  /** metadata is a standard object metadata. */
  metadata?: ObjectMeta;
  /** spec defines the desired state of NodeAgent. */
  spec: NodeAgentSpec;
  /** status defines the observed state of NodeAgent. */
  status?: NodeAgentStatus;
}

/** NodeAgentKind names the nodeagents resource for the client and the controller builder. */
export const NodeAgentKind = GroupVersion.kind<NodeAgent>('NodeAgent', {
  plural: 'nodeagents',
  namespaced: true,
});
