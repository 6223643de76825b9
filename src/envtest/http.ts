/**
 * GET of one URL (`http:`, `https:` or `file:`) as a bounded stream of bytes, for the envtest release index
 * and its archives. Production rules: a connect timeout (DNS included) and an idle timeout (no byte for that
 * long, headers or body), a size bound checked against Content-Length and again while reading, at most
 * five redirects and never from https to http, and a few retries with capped, jittered backoff for answers
 * that say "try again" (5xx, 429, a reset connection) before the body starts. Nothing is retried once bytes
 * flow, nor DNS failures, refused connections or timeouts: a machine without network fails in seconds.
 * An address rule, when given, is applied to every connection, redirects included, to the address actually
 * connected to (after name resolution, so a name that resolves to 127.0.0.1 is caught too).
 */
import dns from 'node:dns';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { kubesmithVersion } from '../version.js';

export interface FetchOptions {
  /** Time to resolve the host and connect. Default: 5 s. */
  connectTimeoutMs?: number;
  /** Longest silence while waiting for headers or body bytes. Default: 15 s. */
  idleTimeoutMs?: number;
  /** The largest body accepted, in bytes. */
  maxBytes: number;
  /** Further attempts after a retryable failure. Default: 2. */
  retries?: number;
  /** What this IP address is when a connection to it is refused, or undefined to allow it. Default: all allowed. */
  addressRule?: (ip: string) => string | undefined;
  /**
   * A body must bring 64 KiB in every window of this length, or it is given up as too slow (the idle
   * timeout alone lets a byte every few seconds go on for ever). Default: 60 s.
   */
  paceWindowMs?: number;
  /** Test seam: the certificate authority https servers are checked against. Default: Node's. */
  ca?: string;
}

export interface Fetched {
  /** The body, bounded by maxBytes; iterating it fails with a FetchError when it breaks off. */
  body: AsyncIterable<Buffer>;
  /** Content-Length (or the file size), when known. */
  size: number | undefined;
  /** The IP address the body came from (after redirects); undefined for a file. */
  address: string | undefined;
}

/** A failed request; `message` is one line saying what happened, for people. */
export class FetchError extends Error {
  constructor(
    message: string,
    /** HTTP status, when the server answered. */
    readonly status?: number,
    readonly retryable = false,
  ) {
    super(message);
    this.name = 'FetchError';
  }
}

/** A request kubesmith will not make: a redirect from https to http, or an address the rule refuses. */
export class RefusedFetch extends FetchError {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedFetch';
  }
}

const MAX_REDIRECTS = 5;
/**
 * A body must bring at least this much in every minute: the idle timeout alone lets a server keep a
 * download going for ever with a byte every few seconds. 64 KiB a minute is far below any real link.
 */
const MIN_BYTES_PER_WINDOW = 64 * 1024;
const RATE_WINDOW_MS = 60_000;

export async function fetchUrl(url: URL, options: FetchOptions): Promise<Fetched> {
  if (url.protocol === 'file:') return openFile(url, options.maxBytes);
  const retries = options.retries ?? 2;
  for (let attempt = 0; ; attempt++) {
    try {
      return await get(url, options, 0);
    } catch (error) {
      if (!(error instanceof FetchError) || !error.retryable || attempt >= retries) throw error;
      // Full jitter over an exponential step: 0.25-0.5 s, 0.5-1 s, ... capped at 4 s.
      const step = Math.min(4_000, 500 * 2 ** attempt);
      await sleep(step / 2 + Math.random() * (step / 2));
    }
  }
}

function get(url: URL, options: FetchOptions, redirects: number): Promise<Fetched> {
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 15_000;
  const where = url.host;
  return new Promise<Fetched>((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : undefined;
    if (!client) {
      reject(
        new FetchError(`unsupported URL scheme ${url.protocol} in ${url.href} (use https:, http: or file:)`),
      );
      return;
    }
    const rule = options.addressRule;
    // A literal IP address is not resolved, so the lookup below never sees it: check it here.
    const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const refusal = rule && net.isIP(literal) ? rule(literal) : undefined;
    if (refusal) {
      reject(new RefusedFetch(`${url.href}: ${literal} is ${refusal}`));
      return;
    }
    let timedOut: FetchError | undefined;
    const request = client.get(url, {
      headers: { 'user-agent': `kubesmith/${kubesmithVersion}`, 'accept-encoding': 'identity' },
      // Under a rule, no pooled connection either: one opened without the rule (to the index) is not reused.
      ...(rule ? { lookup: guardedLookup(rule, url), agent: false } : {}),
      ...(options.ca !== undefined ? { ca: options.ca } : {}),
    });
    const connectTimer = setTimeout(() => {
      timedOut = new FetchError(`no connection to ${where} within ${seconds(connectTimeoutMs)}`);
      request.destroy(timedOut);
    }, connectTimeoutMs);
    request.on('socket', (socket) => {
      if (!socket.connecting) clearTimeout(connectTimer);
      else socket.once('connect', () => clearTimeout(connectTimer));
    });
    request.setTimeout(idleTimeoutMs, () => {
      timedOut = new FetchError(`${where} stopped answering (nothing for ${seconds(idleTimeoutMs)})`);
      request.destroy(timedOut);
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(connectTimer);
      reject(timedOut ?? (error instanceof FetchError ? error : connectionError(error, url)));
    });
    request.on('response', (response) => {
      clearTimeout(connectTimer);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      // The body of a redirect or an error is never read: the connection closes rather than take it all in.
      if (status >= 300 && status < 400 && location) {
        response.destroy();
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          reject(new FetchError(`${url.href} redirects to "${location}", which is not a URL`));
          return;
        }
        if (redirects >= MAX_REDIRECTS)
          reject(new FetchError(`more than ${MAX_REDIRECTS} redirects from ${url.href}`));
        else if (url.protocol === 'https:' && next.protocol !== 'https:')
          reject(
            new RefusedFetch(
              `${url.href} redirects to ${next.href}, from https to ${next.protocol.slice(0, -1)}`,
            ),
          );
        else get(next, options, redirects + 1).then(resolve, reject);
        return;
      }
      if (status !== 200) {
        response.destroy();
        const retryable = status >= 500 || status === 429;
        reject(
          new FetchError(
            `${url.href} answered ${status} ${response.statusMessage ?? ''}`.trim(),
            status,
            retryable,
          ),
        );
        return;
      }
      const header = response.headers['content-length'];
      const size = header !== undefined && /^\d+$/.test(header) ? Number(header) : undefined;
      if (size !== undefined && size > options.maxBytes) {
        response.destroy();
        reject(new FetchError(`${url.href} has ${size} bytes, more than the ${options.maxBytes} allowed`));
        return;
      }
      resolve({
        body: bounded(
          response,
          url,
          size,
          options.maxBytes,
          () => timedOut,
          (error) => {
            timedOut = error;
            response.destroy(error);
          },
          options.paceWindowMs,
        ),
        size,
        address: response.socket.remoteAddress,
      });
    });
  });
}

/**
 * The response body with its size and its pace checked while it flows (`stop` ends a body that brings less
 * than MIN_BYTES_PER_WINDOW in a minute), and breaks reported as one line.
 */
async function* bounded(
  body: AsyncIterable<Buffer>,
  url: URL,
  size: number | undefined,
  maxBytes: number,
  timedOut: () => FetchError | undefined,
  stop: (error: FetchError) => void,
  windowMs = RATE_WINDOW_MS,
): AsyncGenerator<Buffer> {
  let received = 0;
  let inWindow = 0;
  const pace = setInterval(() => {
    if (inWindow < MIN_BYTES_PER_WINDOW) {
      stop(new FetchError(`${url.host} sends too slowly (${inWindow} bytes in ${seconds(windowMs)})`));
    }
    inWindow = 0;
  }, windowMs);
  const broken = (): FetchError =>
    timedOut() ??
    new FetchError(
      `the connection to ${url.host} closed after ${received}${size !== undefined ? ` of ${size}` : ''} bytes`,
    );
  try {
    for await (const chunk of body) {
      received += chunk.length;
      inWindow += chunk.length;
      if (received > maxBytes)
        throw new FetchError(`${url.href} sends more than the ${maxBytes} bytes allowed`);
      yield chunk;
    }
  } catch (error) {
    throw error instanceof FetchError ? error : broken();
  } finally {
    clearInterval(pace);
  }
  if (size !== undefined && received !== size) throw broken();
}

async function openFile(url: URL, maxBytes: number): Promise<Fetched> {
  const file = fileURLToPath(url);
  let size: number;
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new FetchError(`${file} is not a file`);
    size = info.size;
  } catch (error) {
    if (error instanceof FetchError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new FetchError(
      code === 'ENOENT' ? `${file} does not exist` : `cannot read ${file}: ${(error as Error).message}`,
    );
  }
  if (size > maxBytes) throw new FetchError(`${file} has ${size} bytes, more than the ${maxBytes} allowed`);
  return { body: createReadStream(file, { end: maxBytes }), size, address: undefined };
}

/**
 * dns.lookup, keeping only the addresses `rule` allows; none left is a RefusedFetch naming the first. Node
 * asks for all addresses (to race IPv4 and IPv6) or for one; both are answered.
 */
function guardedLookup(rule: (ip: string) => string | undefined, url: URL): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) {
        callback(error, '');
        return;
      }
      const allowed = addresses.filter((address) => rule(address.address) === undefined);
      const [first] = allowed;
      if (!first) {
        const ip = addresses[0]?.address;
        const what = ip === undefined ? 'no address' : `${ip}, ${rule(ip) ?? ''}`;
        callback(new RefusedFetch(`${url.href}: ${hostname} resolves to ${what}`), '');
      } else if (options.all) callback(null, allowed);
      else callback(null, first.address, first.family);
    });
  };
}

function connectionError(error: NodeJS.ErrnoException, url: URL): FetchError {
  switch (error.code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new FetchError(`cannot resolve ${url.hostname} (no network, or no DNS for it)`);
    case 'ECONNREFUSED':
      return new FetchError(`${url.host} refused the connection`);
    case 'ECONNRESET':
    case 'EPIPE':
      return new FetchError(`${url.host} closed the connection before answering`, undefined, true);
    default:
      return new FetchError(`${url.host}: ${error.message}`);
  }
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}
