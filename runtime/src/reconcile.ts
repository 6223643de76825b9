/** What a controller asks of a reconciler, and what the reconciler answers. */
import type { EventRecorder } from './events.js';
import type { Logger } from './logger.js';

/** The object to reconcile. `namespace` is `''` for cluster-scoped objects. */
export interface Request {
  namespace: string;
  name: string;
}

export interface Result {
  /** Reconcile again, after the rate limiter's backoff. */
  requeue?: boolean;
  /** Reconcile again after this many milliseconds (wins over `requeue`). */
  requeueAfter?: number;
  /**
   * The priority of that requeue in the controller's queue (higher first). Default: the priority the
   * request was taken at.
   */
  priority?: number;
}

/** What the controller hands its reconciler with each request (controller-runtime's context). */
export interface ReconcileContext {
  /** The controller's name. */
  readonly controller: string;
  /** This reconcile's id, on every line of `logger` and, with tracing, its span's `kubesmith.reconcile_id`. */
  readonly reconcileID: string;
  /** Every line carries `controller`, `namespace`, `name` and `reconcileID`. */
  readonly logger: Logger;
  /**
   * The controller's event recorder: its events carry the controller's name as `reportingController`
   * (the manager's `getEventRecorderFor(controller)`, one per controller).
   */
  readonly recorder: EventRecorder;
  /**
   * Aborted when the manager loses its leader election Lease: another replica may lead already. The
   * manager's client then refuses writes (LeadershipLostError) and aborts those in flight; pass the
   * signal on to other long work (`fetch(url, { signal })`, your own loops) so that it stops too.
   */
  readonly signal: AbortSignal;
}

export interface Reconciler {
  /**
   * Moves the cluster toward the state `request`'s object declares. Throwing retries with backoff.
   * `context` has the reconcile's logger and the controller's event recorder; a reconciler may ignore it.
   */
  reconcile(request: Request, context: ReconcileContext): Promise<Result | void>;
}

export function requestKey(request: Request): string {
  return request.namespace ? `${request.namespace}/${request.name}` : request.name;
}

export function requestFromKey(key: string): Request {
  const slash = key.indexOf('/');
  return slash < 0
    ? { namespace: '', name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
