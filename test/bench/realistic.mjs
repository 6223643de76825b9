/**
 * The realistic corpus of the generator benchmark: kinds shaped more like real operators' than
 * synthetic.mjs's (about 170 lines of TypeScript each). Each kind has named nested types four levels deep
 * (Spec -> Workload -> Template -> Container -> Probe), string-literal unions (named and inline), defaults,
 * patterns and bounds on most fields, a map list, a set list, a status subresource with conditions, and
 * imports one shared types file (an endpoint, a secret reference, resource requirements, two unions).
 * `writeRealisticProject` and `writeRealisticGoTwin` write it with synthetic.mjs's project and module
 * writers; the Go twin has the same markers, documentation, required and optional fields, so that
 * controller-gen's CRDs are kubesmith's as data.
 */
import { writeGoModule, writeProject } from './synthetic.mjs';

const SHARED = `import type { int32 } from '@kubesmith/runtime';

/** Endpoint is where a component is served. */
export interface Endpoint {
  /**
   * Host name of the endpoint.
   * +kubebuilder:validation:MinLength=1
   * +kubebuilder:validation:MaxLength=253
   * +kubebuilder:validation:Pattern=\`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$\`
   */
  host: string;
  /**
   * Port of the endpoint.
   * +kubebuilder:validation:Minimum=1
   * +kubebuilder:validation:Maximum=65535
   * +kubebuilder:default=443
   */
  port?: int32;
  /**
   * Protocol spoken on the port.
   * +kubebuilder:default=TCP
   */
  protocol?: 'TCP' | 'UDP';
}

/** SecretKeyRef selects a key of a Secret in the same namespace. */
export interface SecretKeyRef {
  /**
   * Name of the Secret.
   * +kubebuilder:validation:MaxLength=253
   * +kubebuilder:validation:Pattern=\`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$\`
   */
  name: string;
  /**
   * Key in the Secret.
   * +kubebuilder:validation:MinLength=1
   */
  key: string;
}

/** Resources are the compute resources of a container. */
export interface Resources {
  /** Requests are the minimum resources. */
  requests?: Record<string, string>;
  /** Limits are the maximum resources. */
  limits?: Record<string, string>;
}

/** Tier of service. */
export type Tier = 'bronze' | 'silver' | 'gold';

/** PullPolicy says when the image is pulled. */
export type PullPolicy = 'Always' | 'IfNotPresent' | 'Never';
`;

function kindSource(kind) {
  const plural = `${kind.toLowerCase()}s`;
  return `import type { Condition, int32, int64, ObjectMeta } from '@kubesmith/runtime';
import { GroupVersion } from './group-version.js';
import type { Endpoint, PullPolicy, Resources, SecretKeyRef, Tier } from './shared.js';

/** ${kind}Phase is the lifecycle phase of a ${kind}. */
export type ${kind}Phase = 'Pending' | 'Running' | 'Degraded' | 'Failed';

/** ${kind}Probe checks the health of a container. */
export interface ${kind}Probe {
  /**
   * Path of the HTTP check.
   * +kubebuilder:validation:Pattern=\`^/[A-Za-z0-9/._-]*$\`
   * +kubebuilder:validation:MaxLength=1024
   */
  path: string;
  /**
   * Port of the check.
   * +kubebuilder:validation:Minimum=1
   * +kubebuilder:validation:Maximum=65535
   * +kubebuilder:default=8080
   */
  port?: int32;
  /**
   * Scheme of the check.
   * +kubebuilder:default=HTTP
   */
  scheme?: 'HTTP' | 'HTTPS';
  /**
   * Seconds between two checks.
   * +kubebuilder:validation:Minimum=1
   * +kubebuilder:validation:Maximum=3600
   * +kubebuilder:default=10
   */
  periodSeconds?: int32;
}

/** ${kind}EnvVar is one environment variable of a container. */
export interface ${kind}EnvVar {
  /**
   * Name of the variable.
   * +kubebuilder:validation:Pattern=\`^[A-Za-z_][A-Za-z0-9_]*$\`
   */
  name: string;
  /**
   * Value of the variable.
   * +kubebuilder:validation:MaxLength=4096
   */
  value?: string;
  /** SecretKeyRef takes the value from a Secret. */
  secretKeyRef?: SecretKeyRef;
}

/** ${kind}Container is one container of a ${kind}. */
export interface ${kind}Container {
  /**
   * Name of the container.
   * +kubebuilder:validation:Pattern=\`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$\`
   * +kubebuilder:validation:MaxLength=63
   */
  name: string;
  /**
   * Image of the container.
   * +kubebuilder:validation:MinLength=1
   */
  image: string;
  /**
   * PullPolicy of the image.
   * +kubebuilder:default=IfNotPresent
   */
  pullPolicy?: PullPolicy;
  /**
   * Env of the container.
   * +listType=map
   * +listMapKey=name
   * +kubebuilder:validation:MaxItems=64
   */
  env?: ${kind}EnvVar[];
  /**
   * Ports the container listens on.
   * +listType=set
   */
  ports?: int32[];
  /** Resources of the container. */
  resources?: Resources;
  /** Liveness restarts the container when it fails. */
  liveness?: ${kind}Probe;
  /** Readiness takes the container out of service when it fails. */
  readiness?: ${kind}Probe;
}

/** ${kind}Template is the template of the pods of a ${kind}. */
export interface ${kind}Template {
  /** Labels of the pods. */
  labels?: Record<string, string>;
  /**
   * Containers of the pods.
   * +kubebuilder:validation:MinItems=1
   * +kubebuilder:validation:MaxItems=10
   */
  containers: ${kind}Container[];
  /**
   * TerminationGracePeriodSeconds before the pods are killed.
   * +kubebuilder:validation:Minimum=0
   * +kubebuilder:default=30
   */
  terminationGracePeriodSeconds?: int64;
}

/** ${kind}Workload is how the pods of a ${kind} are run. */
export interface ${kind}Workload {
  /**
   * Replicas of the pods.
   * +kubebuilder:validation:Minimum=0
   * +kubebuilder:validation:Maximum=1000
   * +kubebuilder:default=1
   */
  replicas?: int32;
  /**
   * Strategy of an update.
   * +kubebuilder:default=RollingUpdate
   */
  strategy?: 'RollingUpdate' | 'Recreate';
  /** Template of the pods. */
  template: ${kind}Template;
}

/** ${kind}Spec defines the desired state of ${kind}. */
export interface ${kind}Spec {
  /** Workload runs the pods. */
  workload: ${kind}Workload;
  /**
   * Tier of service.
   * +kubebuilder:default=silver
   */
  tier?: Tier;
  /**
   * Endpoints the ${kind} serves.
   * +kubebuilder:validation:MaxItems=8
   */
  endpoints?: Endpoint[];
  /**
   * Schedule of the backups, in cron format.
   * +kubebuilder:validation:Pattern=\`^(\\S+\\s+){4}\\S+$\`
   */
  schedule?: string;
  /**
   * Suspend stops the reconciliation.
   * +kubebuilder:default=false
   */
  suspend?: boolean;
}

/** ${kind}Status defines the observed state of ${kind}. */
export interface ${kind}Status {
  /**
   * Conditions of the ${kind}.
   * +listType=map
   * +listMapKey=type
   */
  conditions?: Condition[];
  /** Phase of the ${kind}. */
  phase?: ${kind}Phase;
  /**
   * ObservedGeneration is the generation last reconciled.
   * +kubebuilder:validation:Minimum=0
   */
  observedGeneration?: int64;
  /**
   * ReadyReplicas is the number of ready pods.
   * +kubebuilder:validation:Minimum=0
   */
  readyReplicas?: int32;
}

/**
 * ${kind} is the Schema for the ${plural} API.
 * +kubebuilder:object:root=true
 * +kubebuilder:subresource:status
 */
export interface ${kind} {
  apiVersion: 'bench.example.com/v1';
  kind: '${kind}';
  metadata?: ObjectMeta;
  spec: ${kind}Spec;
  status?: ${kind}Status;
}

/** ${kind}Kind names the ${plural} resource for the client and the controller builder. */
export const ${kind}Kind = GroupVersion.kind<${kind}>('${kind}', {
  plural: '${plural}',
  namespaced: true,
});
`;
}

const GO_SHARED = `package v1

// Endpoint is where a component is served.
type Endpoint struct {
	// Host name of the endpoint.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=\`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$\`
	Host string \`json:"host"\`
	// Port of the endpoint.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=443
	Port int32 \`json:"port,omitempty"\`
	// Protocol spoken on the port.
	// +kubebuilder:validation:Enum=TCP;UDP
	// +kubebuilder:default=TCP
	Protocol string \`json:"protocol,omitempty"\`
}

// SecretKeyRef selects a key of a Secret in the same namespace.
type SecretKeyRef struct {
	// Name of the Secret.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=\`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$\`
	Name string \`json:"name"\`
	// Key in the Secret.
	// +kubebuilder:validation:MinLength=1
	Key string \`json:"key"\`
}

// Resources are the compute resources of a container.
type Resources struct {
	// Requests are the minimum resources.
	Requests map[string]string \`json:"requests,omitempty"\`
	// Limits are the maximum resources.
	Limits map[string]string \`json:"limits,omitempty"\`
}

// Tier of service.
// +kubebuilder:validation:Enum=bronze;silver;gold
type Tier string

// PullPolicy says when the image is pulled.
// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
type PullPolicy string
`;

function goKindSource(kind) {
  const plural = `${kind.toLowerCase()}s`;
  return `package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ${kind}Phase is the lifecycle phase of a ${kind}.
// +kubebuilder:validation:Enum=Pending;Running;Degraded;Failed
type ${kind}Phase string

// ${kind}Probe checks the health of a container.
type ${kind}Probe struct {
	// Path of the HTTP check.
	// +kubebuilder:validation:Pattern=\`^/[A-Za-z0-9/._-]*$\`
	// +kubebuilder:validation:MaxLength=1024
	Path string \`json:"path"\`
	// Port of the check.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=8080
	Port int32 \`json:"port,omitempty"\`
	// Scheme of the check.
	// +kubebuilder:validation:Enum=HTTP;HTTPS
	// +kubebuilder:default=HTTP
	Scheme string \`json:"scheme,omitempty"\`
	// Seconds between two checks.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	// +kubebuilder:default=10
	PeriodSeconds int32 \`json:"periodSeconds,omitempty"\`
}

// ${kind}EnvVar is one environment variable of a container.
type ${kind}EnvVar struct {
	// Name of the variable.
	// +kubebuilder:validation:Pattern=\`^[A-Za-z_][A-Za-z0-9_]*$\`
	Name string \`json:"name"\`
	// Value of the variable.
	// +kubebuilder:validation:MaxLength=4096
	Value string \`json:"value,omitempty"\`
	// SecretKeyRef takes the value from a Secret.
	SecretKeyRef *SecretKeyRef \`json:"secretKeyRef,omitempty"\`
}

// ${kind}Container is one container of a ${kind}.
type ${kind}Container struct {
	// Name of the container.
	// +kubebuilder:validation:Pattern=\`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$\`
	// +kubebuilder:validation:MaxLength=63
	Name string \`json:"name"\`
	// Image of the container.
	// +kubebuilder:validation:MinLength=1
	Image string \`json:"image"\`
	// PullPolicy of the image.
	// +kubebuilder:default=IfNotPresent
	PullPolicy PullPolicy \`json:"pullPolicy,omitempty"\`
	// Env of the container.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Env []${kind}EnvVar \`json:"env,omitempty"\`
	// Ports the container listens on.
	// +listType=set
	Ports []int32 \`json:"ports,omitempty"\`
	// Resources of the container.
	Resources *Resources \`json:"resources,omitempty"\`
	// Liveness restarts the container when it fails.
	Liveness *${kind}Probe \`json:"liveness,omitempty"\`
	// Readiness takes the container out of service when it fails.
	Readiness *${kind}Probe \`json:"readiness,omitempty"\`
}

// ${kind}Template is the template of the pods of a ${kind}.
type ${kind}Template struct {
	// Labels of the pods.
	Labels map[string]string \`json:"labels,omitempty"\`
	// Containers of the pods.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	Containers []${kind}Container \`json:"containers"\`
	// TerminationGracePeriodSeconds before the pods are killed.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=30
	TerminationGracePeriodSeconds int64 \`json:"terminationGracePeriodSeconds,omitempty"\`
}

// ${kind}Workload is how the pods of a ${kind} are run.
type ${kind}Workload struct {
	// Replicas of the pods.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=1
	Replicas int32 \`json:"replicas,omitempty"\`
	// Strategy of an update.
	// +kubebuilder:validation:Enum=RollingUpdate;Recreate
	// +kubebuilder:default=RollingUpdate
	Strategy string \`json:"strategy,omitempty"\`
	// Template of the pods.
	Template ${kind}Template \`json:"template"\`
}

// ${kind}Spec defines the desired state of ${kind}.
type ${kind}Spec struct {
	// Workload runs the pods.
	Workload ${kind}Workload \`json:"workload"\`
	// Tier of service.
	// +kubebuilder:default=silver
	Tier Tier \`json:"tier,omitempty"\`
	// Endpoints the ${kind} serves.
	// +kubebuilder:validation:MaxItems=8
	Endpoints []Endpoint \`json:"endpoints,omitempty"\`
	// Schedule of the backups, in cron format.
	// +kubebuilder:validation:Pattern=\`^(\\S+\\s+){4}\\S+$\`
	Schedule string \`json:"schedule,omitempty"\`
	// Suspend stops the reconciliation.
	// +kubebuilder:default=false
	Suspend bool \`json:"suspend,omitempty"\`
}

// ${kind}Status defines the observed state of ${kind}.
type ${kind}Status struct {
	// Conditions of the ${kind}.
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition \`json:"conditions,omitempty"\`
	// Phase of the ${kind}.
	Phase ${kind}Phase \`json:"phase,omitempty"\`
	// ObservedGeneration is the generation last reconciled.
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 \`json:"observedGeneration,omitempty"\`
	// ReadyReplicas is the number of ready pods.
	// +kubebuilder:validation:Minimum=0
	ReadyReplicas int32 \`json:"readyReplicas,omitempty"\`
}

// ${kind} is the Schema for the ${plural} API.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type ${kind} struct {
	metav1.TypeMeta   \`json:",inline"\`
	metav1.ObjectMeta \`json:"metadata,omitempty"\`

	Spec   ${kind}Spec   \`json:"spec"\`
	Status ${kind}Status \`json:"status,omitempty"\`
}
`;
}

/** Writes a project of `kinds` realistic kinds into `dir` (see writeProject); returns the kinds' names. */
export const writeRealisticProject = (dir, kinds) => writeProject(dir, kinds, { shared: SHARED, kindSource });

/** Writes the Go twin of `writeRealisticProject`'s API into `dir` for controller-gen (see writeGoModule). */
export const writeRealisticGoTwin = (dir, kinds) =>
  writeGoModule(dir, kinds, { shared: GO_SHARED, kindSource: goKindSource });
