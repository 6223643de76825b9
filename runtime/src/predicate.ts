/**
 * Predicates filter the events a controller's watches enqueue, as controller-runtime's `predicate`
 * package: `for(kind, { predicates: [generationChangedPredicate] })` ignores status-only and metadata-only
 * updates. A predicate that leaves an event type out lets those events through.
 */
import type { KubernetesObject } from './types.js';

export interface Predicate {
  /** An object appeared (also for every object of the first list). */
  create?(object: KubernetesObject): boolean;
  /** An object changed; `oldObject` is undefined when the informer had not seen it before. */
  update?(oldObject: KubernetesObject | undefined, newObject: KubernetesObject): boolean;
  delete?(object: KubernetesObject): boolean;
}

export type WatchEvent = 'create' | 'update' | 'delete';

/** Whether `predicates` all let an event through. */
export function passes(
  predicates: readonly Predicate[],
  type: WatchEvent,
  object: KubernetesObject,
  oldObject?: KubernetesObject,
): boolean {
  return predicates.every((predicate) => {
    if (type === 'update') return predicate.update?.(oldObject, object) ?? true;
    return predicate[type]?.(object) ?? true;
  });
}

/**
 * Updates pass only when `metadata.generation` changed: spec changes, not status or metadata changes
 * (custom resources with a status subresource, and most built-ins, bump the generation on spec changes
 * only). Create and delete events pass.
 */
export const generationChangedPredicate: Predicate = {
  update: (oldObject, newObject) =>
    oldObject === undefined || oldObject.metadata?.generation !== newObject.metadata?.generation,
};

/** Updates pass only when the labels changed. */
export const labelChangedPredicate: Predicate = {
  update: (oldObject, newObject) =>
    oldObject === undefined || !sameMap(oldObject.metadata?.labels, newObject.metadata?.labels),
};

/** Updates pass only when the annotations changed. */
export const annotationChangedPredicate: Predicate = {
  update: (oldObject, newObject) =>
    oldObject === undefined || !sameMap(oldObject.metadata?.annotations, newObject.metadata?.annotations),
};

/** An event passes when any of `predicates` lets it through. */
export function or(...predicates: Predicate[]): Predicate {
  return {
    create: (object) => predicates.some((p) => passes([p], 'create', object)),
    update: (oldObject, newObject) => predicates.some((p) => passes([p], 'update', newObject, oldObject)),
    delete: (object) => predicates.some((p) => passes([p], 'delete', object)),
  };
}

/** An event passes when every one of `predicates` lets it through. */
export function and(...predicates: Predicate[]): Predicate {
  return {
    create: (object) => passes(predicates, 'create', object),
    update: (oldObject, newObject) => passes(predicates, 'update', newObject, oldObject),
    delete: (object) => passes(predicates, 'delete', object),
  };
}

function sameMap(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const left = Object.entries(a ?? {});
  if (left.length !== Object.keys(b ?? {}).length) return false;
  return left.every(([key, value]) => b?.[key] === value);
}
