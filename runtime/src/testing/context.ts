/** A reconcile's context for unit tests that call `reconciler.reconcile(request, context)` directly. */
import { randomUUID } from 'node:crypto';
import type { EventRecorder } from '../events.js';
import { createLogger, type Logger } from '../logger.js';
import type { ReconcileContext } from '../reconcile.js';
import { FakeRecorder } from './recorder.js';

/**
 * The context a controller hands a reconciler, for calling `reconcile(request, context)` in unit tests.
 * Default: controller `test`, a FakeRecorder, a logger that writes nothing, and a signal that never aborts
 * (pass an AbortController's to test what a reconcile does when leadership is lost).
 */
export function reconcileContext(
  options: { controller?: string; recorder?: EventRecorder; logger?: Logger; signal?: AbortSignal } = {},
): ReconcileContext & { recorder: EventRecorder } {
  return {
    controller: options.controller ?? 'test',
    reconcileID: randomUUID(),
    logger: options.logger ?? createLogger({ write: () => {} }),
    recorder: options.recorder ?? new FakeRecorder(),
    signal: options.signal ?? new AbortController().signal,
  };
}
