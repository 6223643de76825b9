/** What a controller asks of a reconciler, and what the reconciler answers. */

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
}

export interface Reconciler {
  /** Moves the cluster toward the state `request`'s object declares. Throwing retries with backoff. */
  reconcile(request: Request): Promise<Result | void>;
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
