/** Helpers every reconciler needs: owner references, finalizers and status conditions. */
import type { ResourceKind } from './kinds.js';
import type { Condition, KubernetesObject } from './types.js';

/**
 * Makes `owner` the controller of `object` (an owner reference with `controller: true` and
 * `blockOwnerDeletion: true`), so that `owns()` maps the object's events to the owner and the garbage
 * collector deletes it with its owner. Throws when another object already controls it, or when a
 * namespaced owner is in another namespace.
 */
export function setControllerReference<T extends KubernetesObject>(
  owner: KubernetesObject,
  object: T,
  ownerKind?: ResourceKind<unknown>,
): T {
  const apiVersion = ownerKind?.apiVersion ?? owner.apiVersion;
  const kind = ownerKind?.kind ?? owner.kind;
  const name = owner.metadata?.name;
  const uid = owner.metadata?.uid;
  if (!apiVersion || !kind || !name || !uid) {
    throw new Error(
      'setControllerReference: the owner needs apiVersion, kind, metadata.name and metadata.uid',
    );
  }
  const ownerNamespace = owner.metadata?.namespace;
  if (ownerNamespace && object.metadata?.namespace !== ownerNamespace) {
    throw new Error(
      `setControllerReference: ${kind} ${ownerNamespace}/${name} cannot own an object in namespace ` +
        `"${object.metadata?.namespace ?? ''}": owner and object must share a namespace`,
    );
  }
  const metadata = (object.metadata ??= {});
  const references = (metadata.ownerReferences ??= []);
  const existing = references.find((ref) => ref.controller === true);
  if (existing && existing.uid !== uid) {
    throw new Error(
      `setControllerReference: ${object.kind ?? 'object'} ${metadata.name ?? ''} is already controlled by ` +
        `${existing.kind} ${existing.name}`,
    );
  }
  const reference = { apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true };
  const index = references.findIndex((ref) => ref.uid === uid);
  if (index >= 0) references[index] = reference;
  else references.push(reference);
  return object;
}

export function containsFinalizer(object: KubernetesObject, finalizer: string): boolean {
  return object.metadata?.finalizers?.includes(finalizer) ?? false;
}

/** Adds `finalizer`; returns whether the object changed (and so needs an update). */
export function addFinalizer(object: KubernetesObject, finalizer: string): boolean {
  if (containsFinalizer(object, finalizer)) return false;
  const metadata = (object.metadata ??= {});
  metadata.finalizers = [...(metadata.finalizers ?? []), finalizer];
  return true;
}

/** Removes `finalizer`; returns whether the object changed (and so needs an update). */
export function removeFinalizer(object: KubernetesObject, finalizer: string): boolean {
  if (!containsFinalizer(object, finalizer)) return false;
  const metadata = object.metadata ?? {};
  metadata.finalizers = (metadata.finalizers ?? []).filter((item) => item !== finalizer);
  return true;
}

export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((condition) => condition.type === type);
}

/** A condition to set: lastTransitionTime is computed. */
export type NewCondition = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'> & {
  observedGeneration?: number | undefined;
  lastTransitionTime?: string;
};

/**
 * Returns `conditions` with `condition` set, as apimachinery's meta.SetStatusCondition: the
 * lastTransitionTime moves only when the status changes; reason, message and observedGeneration are
 * updated in place. The input array is not modified.
 */
export function setCondition(
  conditions: readonly Condition[],
  condition: NewCondition,
  now: Date = new Date(),
): Condition[] {
  const time = condition.lastTransitionTime ?? rfc3339(now);
  const existing = findCondition(conditions, condition.type);
  const next: Condition = {
    type: condition.type,
    status: condition.status,
    reason: condition.reason,
    message: condition.message,
    lastTransitionTime: existing && existing.status === condition.status ? existing.lastTransitionTime : time,
    ...(condition.observedGeneration !== undefined
      ? { observedGeneration: condition.observedGeneration }
      : {}),
  };
  if (!existing) return [...conditions, next];
  return conditions.map((item) => (item === existing ? next : item));
}

/** Kubernetes times have second precision: `2026-11-23T08:00:00Z`. */
function rfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
