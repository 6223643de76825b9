/**
 * The types `kubesmith manifests` maps to fixed schemas. They are recognised by name and by coming from
 * this package, so their TypeScript shape only has to be convenient to program with.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';

/** A 32-bit integer: `type: integer, format: int32` in a CRD. At run time, a number. */
export type int32 = number & { readonly __kubesmithType?: 'int32' };
/** A 64-bit integer: `type: integer, format: int64` in a CRD. At run time, a number (safe to 2^53). */
export type int64 = number & { readonly __kubesmithType?: 'int64' };
/** A number or a string, as Kubernetes' intstr.IntOrString (a port `8080` or `"http"`, `"25%"`). */
export type IntOrString = number | string;
/** A Kubernetes quantity such as `"500m"`, `"1Gi"` or `2`. */
export type Quantity = string | number;
/** An RFC 3339 time, as metav1.Time serialises: `"2026-11-23T08:00:00Z"`. */
export type Time = string;
/** An RFC 3339 time with microseconds, as metav1.MicroTime serialises. */
export type MicroTime = string;
/** A Go duration string such as `"30s"` or `"1h5m"`, as metav1.Duration serialises. */
export type Duration = string;
/** Any JSON object, kept as it is (runtime.RawExtension): `x-kubernetes-preserve-unknown-fields`. */
export type RawExtension = Record<string, unknown>;
/** Standard object metadata. */
export type ObjectMeta = V1ObjectMeta;

/** A condition of an object's status, as metav1.Condition. */
export interface Condition {
  /** The condition's type in CamelCase, such as `Available` or `Progressing`. */
  type: string;
  status: 'True' | 'False' | 'Unknown';
  /** The `metadata.generation` the condition was set for. */
  observedGeneration?: number;
  /** When the status last changed. */
  lastTransitionTime: Time;
  /** A CamelCase reason for the last transition. */
  reason: string;
  /** A human-readable message about the transition. */
  message: string;
}

/** Any Kubernetes object. */
export interface KubernetesObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}
