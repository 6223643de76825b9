/** Errors of the Kubernetes API as values code can test: `isNotFound(err)`, `isConflict(err)`. */

/** The `Status` object the API server answers failures with. */
export interface Status {
  kind?: 'Status';
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; group?: string; kind?: string; causes?: { field?: string; message?: string }[] };
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    /** The HTTP status code: 404, 409, 422... */
    readonly statusCode: number,
    /** The API's reason: `NotFound`, `AlreadyExists`, `Conflict`, `Invalid`... */
    readonly reason: string,
    message: string,
    /** The response body: usually a Status. */
    readonly body?: Status | string,
  ) {
    super(message);
  }

  /** An ApiError from a failed response and its body. */
  static fromResponse(statusCode: number, body: string, what: string): ApiError {
    let status: Status | undefined;
    try {
      status = JSON.parse(body) as Status;
    } catch {
      status = undefined;
    }
    const reason = status?.reason ?? reasonOf(statusCode);
    const message = status?.message ?? `${what}: HTTP ${statusCode}${body ? `: ${body.slice(0, 200)}` : ''}`;
    return new ApiError(statusCode, reason, message, status ?? body);
  }
}

function reasonOf(statusCode: number): string {
  switch (statusCode) {
    case 404:
      return 'NotFound';
    case 409:
      return 'Conflict';
    case 422:
      return 'Invalid';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    default:
      return 'Unknown';
  }
}

export function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.statusCode === 404;
}

/** A 409 for a stale resourceVersion (the object changed since it was read). */
export function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.statusCode === 409 && err.reason !== 'AlreadyExists';
}

export function isAlreadyExists(err: unknown): boolean {
  return err instanceof ApiError && err.statusCode === 409 && err.reason === 'AlreadyExists';
}

/**
 * A request the API server did not answer within its timeout (client-go's context deadline). Its
 * connection was closed; the call may be retried.
 */
export class RequestTimeoutError extends Error {
  override readonly name = 'RequestTimeoutError';
  constructor(
    /** What the request did: `get Widget w1`. */
    readonly what: string,
    readonly timeoutMs: number,
  ) {
    super(`${what}: no answer from the API server within ${timeoutMs} ms`);
  }
}

/** Whether the request gave up waiting for the API server (not an answer of the API server). */
export function isRequestTimeout(err: unknown): boolean {
  return err instanceof RequestTimeoutError;
}

/**
 * A write refused, or aborted in flight, because this replica lost its leader election Lease: another
 * replica may lead already, and two replicas must never write as leaders at once. The manager is stopping;
 * the process exits and restarts as a candidate.
 */
export class LeadershipLostError extends Error {
  override readonly name = 'LeadershipLostError';
  constructor(
    /** What was refused: `patch ConfigMap c`. */
    readonly what: string,
  ) {
    super(`${what}: refused, this replica lost its leader election lease`);
  }
}

/** Whether the call was refused because this replica lost leadership. */
export function isLeadershipLost(err: unknown): boolean {
  return err instanceof LeadershipLostError;
}
