/** An EventRecorder for tests: it keeps the events it is given. */
import type { EventRecorder, EventType } from '../events.js';
import type { KubernetesObject } from '../types.js';

/** One event a FakeRecorder kept. */
export interface RecordedEvent {
  regarding: KubernetesObject;
  type: EventType;
  reason: string;
  action: string;
  note?: string;
  related?: KubernetesObject;
}

/** An EventRecorder that keeps what it is given, for assertions (controller-runtime's FakeRecorder). */
export class FakeRecorder implements EventRecorder {
  readonly events: RecordedEvent[] = [];

  async event(
    regarding: KubernetesObject,
    type: EventType,
    reason: string,
    action: string,
    note?: string,
    related?: KubernetesObject,
  ): Promise<void> {
    this.events.push({
      regarding,
      type,
      reason,
      action,
      ...(note !== undefined ? { note } : {}),
      ...(related ? { related } : {}),
    });
  }
}
