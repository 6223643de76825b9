/**
 * JSON requests to envtest's own kube-apiserver with the admin token, each with a timeout: what envtest
 * itself needs (fake nodes, readiness checks), without the client-node API classes, which have none.
 */
import { request } from 'node:https';

export interface ApiAccess {
  /** `https://127.0.0.1:<port>` */
  server: string;
  /** The apiserver's serving certificate (self-signed), trusted as the CA. */
  ca: Buffer;
  token: string;
}

export interface ApiResponse {
  status: number;
  /** The decoded JSON body; undefined when the body is not JSON. */
  body: unknown;
}

/** Bodies of envtest's own requests are small; a larger answer is an error, not something to buffer. */
const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/** Sends `method path` with `body` as JSON; resolves with any status (the caller decides), rejects on I/O. */
export function apiRequest(
  access: ApiAccess,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
  timeoutMs = 10_000,
): Promise<ApiResponse> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = {
    Authorization: `Bearer ${access.token}`,
    Accept: 'application/json',
  };
  if (payload !== undefined) {
    headers['Content-Type'] =
      method === 'PATCH' ? 'application/strategic-merge-patch+json' : 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = request(
      `${access.server}${path}`,
      { method, ca: access.ca, headers, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) {
            req.destroy(new Error(`${method} ${path}: answer larger than ${MAX_RESPONSE_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    // `timeout` only covers idle sockets; a deadline covers the whole exchange.
    const deadline = setTimeout(() => req.destroy(new Error(`${method} ${path} timed out`)), timeoutMs);
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.on('close', () => clearTimeout(deadline));
    req.end(payload);
  });
}

/** The `message` of a Kubernetes Status body, or the HTTP status. */
export function statusMessage(response: ApiResponse): string {
  const message = (response.body as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : `HTTP ${response.status}`;
}
