/**
 * Events through events.k8s.io/v1, what `kubectl describe` and `kubectl events` show about an object:
 * `mgr.getEventRecorderFor('widget-controller').event(widget, 'Normal', 'Scaled', 'Scale', 'to 3 replicas')`.
 * One recorder per controller (its name is the event's reportingController). As client-go's
 * `tools/events`: an event repeated within six minutes (same object, whatever its resourceVersion, same
 * type, reason, action and note) is not created again, its `series` counts it.
 * Recording never throws and never holds up a reconcile: a failure is logged.
 */
import type { Client } from './client.js';
import { realClock, type Clock } from './clock.js';
import { isNotFound } from './errors.js';
import { nodeCrypto, nodeOs } from './internal/node-modules.js';
import { resourceKind } from './kinds.js';
import { microTime } from './leaderelection.js';
import type { Logger } from './logger.js';
import type { KubernetesObject, MicroTime } from './types.js';

export type EventType = 'Normal' | 'Warning';

/** An events.k8s.io/v1 Event, as it travels. */
export interface Event extends KubernetesObject {
  eventTime: MicroTime;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  type: EventType;
  note?: string;
  regarding: ObjectReference;
  related?: ObjectReference;
  series?: { count: number; lastObservedTime: MicroTime };
}

export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

export const EventKind = resourceKind<Event>({
  group: 'events.k8s.io',
  version: 'v1',
  kind: 'Event',
  plural: 'events',
  namespaced: true,
});

export interface EventRecorder {
  /**
   * Records that `action` happened to `regarding` for `reason` (CamelCase, such as `Scaled`); `note` is
   * for humans (cut at 1 KiB). Resolves once the event is written or the failure logged; never rejects,
   * so a reconciler need not await it.
   */
  event(
    regarding: KubernetesObject,
    type: EventType,
    reason: string,
    action: string,
    note?: string,
    related?: KubernetesObject,
  ): Promise<void>;
}

export interface EventRecorderOptions {
  client: Client;
  /** The reportingController: the controller's name. */
  name: string;
  /** The reportingInstance. Default: `<name>-<hostname>`. */
  instance?: string;
  logger: Logger;
  clock?: Clock;
}

/** How long a repeated event counts into the series of the first one (client-go's six minutes). */
const SERIES_WINDOW_MS = 6 * 60_000;
const NOTE_LIMIT = 1024;

export function newEventRecorder(options: EventRecorderOptions): EventRecorder {
  const clock = options.clock ?? realClock;
  const instance = options.instance ?? `${options.name}-${nodeOs().hostname()}`.slice(0, 128);
  const log = options.logger.child({ eventRecorder: options.name });
  const recent = new Map<string, { name: string; namespace: string; count: number; first: number }>();

  return {
    async event(regarding, type, reason, action, note, related) {
      const meta = regarding.metadata ?? {};
      const namespace = meta.namespace || 'default';
      const text = note && note.length > NOTE_LIMIT ? note.slice(0, NOTE_LIMIT) : note;
      const reference = referenceTo(regarding);
      // As client-go's key, but without resourceVersion: a reconcile that records the same event about
      // the same object after each change adds to one series.
      const key = JSON.stringify([
        { ...reference, resourceVersion: undefined },
        related ? referenceTo(related).uid : null,
        type,
        reason,
        action,
        text,
      ]);
      const now = clock.now();
      for (const [k, entry] of recent) if (now - entry.first > SERIES_WINDOW_MS) recent.delete(k);
      try {
        const seen = recent.get(key);
        if (seen) {
          seen.count++;
          try {
            await options.client.patch(EventKind, seen.name, seen.namespace, {
              series: { count: seen.count, lastObservedTime: microTime(now) },
            });
            return;
          } catch (error) {
            if (!isNotFound(error)) throw error;
            recent.delete(key); // deleted meanwhile: start a new one
          }
        }
        const name = `${meta.name ?? 'object'}.${now.toString(16)}${nodeCrypto().randomBytes(2).toString('hex')}`;
        await options.client.create(EventKind, {
          apiVersion: EventKind.apiVersion,
          kind: EventKind.kind,
          metadata: { name, namespace },
          eventTime: microTime(now),
          reportingController: options.name,
          reportingInstance: instance,
          action,
          reason,
          type,
          ...(text ? { note: text } : {}),
          regarding: reference,
          ...(related ? { related: referenceTo(related) } : {}),
        });
        recent.set(key, { name, namespace, count: 1, first: now });
      } catch (error) {
        log.warn('cannot record an event', {
          error,
          reason,
          regarding: `${reference.kind ?? ''} ${namespace}/${reference.name ?? ''}`,
        });
      }
    },
  };
}

function referenceTo(object: KubernetesObject): ObjectReference {
  const meta = object.metadata ?? {};
  return {
    ...(object.apiVersion ? { apiVersion: object.apiVersion } : {}),
    ...(object.kind ? { kind: object.kind } : {}),
    ...(meta.name ? { name: meta.name } : {}),
    ...(meta.namespace ? { namespace: meta.namespace } : {}),
    ...(meta.uid ? { uid: meta.uid } : {}),
    ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
  };
}
