/**
 * The webhook server: HTTPS from a certificate directory, the counterpart of controller-runtime's
 * `webhook.DefaultServer`. Webhooks are registered by path; the server reads and checks the review
 * (size, content type, JSON, apiVersion and kind), gives the webhook a time limit, writes one log line per
 * failure, and counts requests per path in controller-runtime's series.
 *
 * ```ts
 * const server = new WebhookServer(webhookServerConfig({ logger, metrics }));
 * server.register(mutatePath(Guestbook), defaulting(Guestbook, guestbookDefaulter));
 * server.register(validatePath(Guestbook), validating(Guestbook, guestbookValidator));
 * await server.start(); // listens on :9443 with /tmp/k8s-webhook-server/serving-certs/tls.{crt,key}
 * ```
 */
import type https from 'node:https';
import type http from 'node:http';
import type http2 from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { limitConnections } from '../internal/connection-limit.js';
import { loadHttp, loadHttp2, type Http2Module, type HttpModules } from '../internal/node-modules.js';
import { FORWARD_SECRET_CIPHERS, tlsServerOptions, type TlsMinVersion } from '../internal/tls-policy.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { WebhookServerConfig } from '../options.js';
import type { SpanHandle, Tracing } from '../tracing.js';
import type { CertWatcher } from './internal/certs.js';
import { messages } from './internal/messages.js';
import type { Answer, Webhook } from './webhook.js';

export interface WebhookServerOptions {
  /** The address to listen on. Default: all interfaces. */
  host?: string;
  /** The port. Default: 9443, controller-runtime's. `0` picks a free port (tests). */
  port?: number;
  /** Where `certName` and `keyName` are. Default: `<os.tmpdir()>/k8s-webhook-server/serving-certs`. */
  certDir?: string;
  /** Default: `tls.crt`. */
  certName?: string;
  /** Default: `tls.key`. */
  keyName?: string;
  /**
   * How often the certificate files are read again, besides the file watch. Default: 10 000 ms,
   * controller-runtime's certwatcher interval.
   */
  certPollIntervalMs?: number;
  /**
   * The largest request body accepted; larger ones get a 413. Default: 7 MiB, controller-runtime's: two
   * objects of at most 3 MiB each (the apiserver's own limit) and 1 MiB for the rest of the review.
   */
  maxRequestBytes?: number;
  /**
   * How long a webhook may take before the server answers for it (admission: allowed=false, code 504).
   * Default: 9 000 ms, under the apiserver's default `timeoutSeconds` of 10, so that the apiserver gets
   * this clear answer rather than its own deadline error. Keep it under the configurations' timeoutSeconds.
   */
  requestTimeoutMs?: number;
  /**
   * How long a client may take to complete its TLS handshake before its connection is closed. Default:
   * 10 000 ms (Node's own is 120 s; controller-runtime's Go server bounds it by its 32 s header timeout).
   */
  handshakeTimeoutMs?: number;
  /**
   * How long a client may take to send a request's headers, and the whole request, before its connection
   * is closed (a slow or stalled client must not hold a connection). Default: 10 000 ms.
   */
  headersTimeoutMs?: number;
  /** How long a client may take to send a whole request before its connection is closed. Default: 30 000 ms. */
  readTimeoutMs?: number;
  /** How long an idle kept-alive connection stays open. Default: 30 000 ms. */
  keepAliveTimeoutMs?: number;
  /**
   * How long stop() keeps listening and answering before it closes: the drain. A stopping pod's endpoint
   * takes a moment to leave the Service (kube-proxy syncs about every second; GKE's every 10 s: raise this
   * to 15 000 there), and the apiserver keeps sending on the connections it holds; during the drain every
   * HTTP/1.1 answer carries `Connection: close` and every HTTP/2 connection gets a graceful GOAWAY, so each
   * connection is closed by its client after an answer rather than by the server under a request. Only the
   * connections still idle at the end are closed. kube-apiserver's `--shutdown-delay-duration`, the delay
   * controller-runtime#2601 proposes. `0` closes at once (a local run, tests). Default: 5 000 ms.
   */
  shutdownDelayMs?: number;
  /**
   * Connections open at once. A connection over the cap closes the oldest one that has sent no request
   * yet (silent, or still in its TLS handshake), else the one idle the longest; only when every connection
   * is busy with a request is the new one refused. Default: 256.
   */
  maxConnections?: number;
  /**
   * Requests served at once; more get 429 Too Many Requests with Retry-After: 1 at once, before their
   * body is read. Default: 64.
   */
  maxConcurrentRequests?: number;
  /**
   * Request bytes buffered at once across all requests; a request whose body would pass it gets 429, so
   * that concurrent large reviews cannot exhaust the heap. Default: 24 MiB (three reviews at the 7 MiB
   * cap, within the generated manager's 96 MiB heap).
   */
  maxInFlightBytes?: number;
  /** The lowest TLS version accepted. Default: `TLSv1.2`. */
  tlsMinVersion?: TlsMinVersion;
  /**
   * Offer HTTP/2 (ALPN `h2`) besides HTTP/1.1. Default: false, as kubebuilder's `--enable-http2`: the
   * apiserver calls webhooks over HTTP/1.1 anyway, and HTTP/2 brings its stream floods and rapid resets
   * (CVE-2023-44487). When on, each HTTP/2 connection carries at most `maxConcurrentRequests` streams, a
   * stream idle for `readTimeoutMs` is cancelled, and a connection idle for `keepAliveTimeoutMs` closed.
   */
  enableHttp2?: boolean;
  /**
   * The cipher suites, OpenSSL names joined by `:`. Default: FORWARD_SECRET_CIPHERS, TLS 1.3's and the
   * ECDHE suites with AES-GCM or ChaCha20-Poly1305 (forward secrecy; Go's defaults without AES-CBC).
   */
  tlsCiphers?: string;
  /** Default: a JSON logger on stderr. */
  logger?: Logger;
  /** Where the webhook series go: pass the Manager's so that /metrics shows them. Default: a new registry. */
  metrics?: Metrics;
  /** Makes a span of each request (the manager's `tracing` option). Default: none. */
  tracing?: Tracing;
}

export const DEFAULT_WEBHOOK_PORT = 9443;

export { FORWARD_SECRET_CIPHERS };

const LATENCY_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000];
const REQUESTS_TOTAL = 'controller_runtime_webhook_requests_total';
const REQUESTS_HELP = 'Total number of admission requests by HTTP status code.';
const LATENCY = 'controller_runtime_webhook_latency_seconds';
const LATENCY_HELP = 'Histogram of the latency of processing admission requests';
const IN_FLIGHT = 'controller_runtime_webhook_requests_in_flight';
const IN_FLIGHT_HELP = 'Current number of admission requests being served.';
const PATH_PATTERN = /^((\/[a-zA-Z0-9_-]+)+|\/)$/;

/** A request the server refuses before any webhook sees it. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }
}

export class WebhookServer {
  readonly logger: Logger;
  /** Requests being served now (maxConcurrentRequests). */
  private serving = 0;
  /** Request bytes buffered now, across requests (maxInFlightBytes). */
  private readonly budget: ByteBudget;
  readonly metrics: Metrics;
  private readonly tracing: Tracing | undefined;
  private readonly options: WebhookServerConfig;
  private readonly webhooks = new Map<string, Webhook>();
  private server: https.Server | http2.Http2SecureServer | undefined;
  /** With HTTP/2: its sessions, and its HTTP/1.1 connections with their requests in flight (for stop()). */
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  private readonly http1 = new Map<Socket, number>();
  private certs: CertWatcher | undefined;
  private readonly inFlight = new Map<string, number>();
  /** `draining`: stop() or drain() was called; still listening and answering (shutdownDelayMs). */
  private state: 'new' | 'running' | 'draining' | 'stopped' = 'new';
  private drainStarted = 0;
  private stopping: Promise<void> | undefined;
  /** Where the server listens, once started. */
  address: AddressInfo | undefined;

  /** `config`: the options resolved, every default applied (webhookServerConfig in options.ts). */
  constructor(config: WebhookServerConfig) {
    this.options = config;
    this.budget = { used: 0, max: config.maxInFlightBytes };
    this.logger = config.logger;
    this.metrics = config.metrics;
    this.tracing = config.tracing;
  }

  /** Serves `webhook` at `path` (before or after start). A path serves one webhook. */
  register(path: string, webhook: Webhook): void {
    if (!PATH_PATTERN.test(path)) throw new Error(messages.invalidPath(path));
    if (this.webhooks.has(path)) throw new Error(messages.duplicatePath(path));
    this.webhooks.set(path, webhook);
    // As controller-runtime: the likely codes exist from the start, so rates work from the first request.
    this.metrics.inc(REQUESTS_TOTAL, REQUESTS_HELP, { webhook: path, code: '200' }, 0);
    this.metrics.inc(REQUESTS_TOTAL, REQUESTS_HELP, { webhook: path, code: '500' }, 0);
    this.metrics.set(IN_FLIGHT, IN_FLIGHT_HELP, { webhook: path }, 0);
    this.logger.info('Registering webhook', { path });
  }

  /** The webhook registered at `path`, if any. */
  registered(path: string): Webhook | undefined {
    return this.webhooks.get(path);
  }

  /** The registered paths: a manager starts the server only when there are some. */
  paths(): string[] {
    return [...this.webhooks.keys()];
  }

  /** Listening: started, and not yet stopped (still so while it drains). */
  get started(): boolean {
    return this.state === 'running' || this.state === 'draining';
  }

  /**
   * Reads the certificate (throws a clear error when it is missing or unusable), starts watching it and
   * listens. Resolves once listening; stop() ends it.
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('a webhook server starts once');
    const o = this.options;
    // The TLS and HTTP modules load here, at the start of a process that serves webhooks.
    const { CertWatcher } = await import('./internal/certs.js');
    const certs = new CertWatcher({
      certDir: o.certDir,
      certName: o.certName,
      keyName: o.keyName,
      pollIntervalMs: o.certPollIntervalMs,
      logger: this.logger,
      onChange: (pair) => this.server?.setSecureContext(pair),
    });
    const pair = certs.start();
    const server = o.enableHttp2
      ? this.http2Server(pair, await loadHttp2())
      : this.http1Server(pair, (await loadHttp()).https);
    limitConnections(server, { maxConnections: o.maxConnections, logger: this.logger, server: 'webhook' });
    server.on('clientError', (error, socket) => {
      this.logger.debug('webhook client error', { error: error.message });
      socket.destroy();
    });
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', (error) =>
          reject(new Error(`webhook server: cannot listen on ${o.host ?? ''}:${o.port}: ${error.message}`)),
        );
        server.listen(o.port, o.host, () => resolve());
      });
    } catch (error) {
      certs.stop();
      throw error;
    }
    this.server = server;
    this.certs = certs;
    this.address = server.address() as AddressInfo;
    this.state = 'running';
    this.logger.info('Serving webhook server', { host: o.host ?? '', port: this.address.port });
  }

  /** HTTPS over HTTP/1.1 only: the default. */
  private http1Server(
    pair: { cert: Buffer | string; key: Buffer | string },
    https: HttpModules['https'],
  ): https.Server {
    const o = this.options;
    return https.createServer(
      {
        ...pair,
        ...tlsServerOptions(o),
        // HTTP/1.1 only: the apiserver speaks it to webhooks, and HTTP/2's rapid-reset and stream floods
        // (CVE-2023-44487) stay out, as kubebuilder's scaffold turns HTTP/2 off by default.
        ALPNProtocols: ['http/1.1'],
        headersTimeout: o.headersTimeoutMs,
        requestTimeout: o.readTimeoutMs,
        keepAliveTimeout: o.keepAliveTimeoutMs,
        // Node enforces the two timeouts above when it checks its connections: every 30 s by default,
        // which would let a stalled client keep its connection up to 30 s longer.
        connectionsCheckingInterval: Math.min(1_000, o.headersTimeoutMs),
      },
      (req, res) => {
        void this.serve(req, res);
      },
    );
  }

  /** HTTPS offering HTTP/2 and HTTP/1.1 (enableHttp2), with the same limits where they apply. */
  private http2Server(
    pair: { cert: Buffer | string; key: Buffer | string },
    http2: Http2Module,
  ): http2.Http2SecureServer {
    const o = this.options;
    const server = http2.createSecureServer(
      {
        ...pair,
        ...tlsServerOptions(o),
        allowHTTP1: true,
        settings: { maxConcurrentStreams: o.maxConcurrentRequests },
      },
      (req, res) => {
        const request = req as unknown as http.IncomingMessage;
        const response = res as unknown as http.ServerResponse;
        if (req.httpVersionMajor === 2) {
          // A stalled stream is cancelled: HTTP/1.1's header and request timeouts do not apply to it.
          req.setTimeout(o.readTimeoutMs, () => req.stream.close(http2.constants.NGHTTP2_CANCEL));
        } else {
          this.trackHttp1(request, response);
        }
        void this.serve(request, response);
      },
    );
    // The HTTP/1.1 connections of an HTTP/2 server take these from the server, not from its options.
    Object.assign(server, {
      headersTimeout: o.headersTimeoutMs,
      requestTimeout: o.readTimeoutMs,
      keepAliveTimeout: o.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, o.headersTimeoutMs),
    });
    // An HTTP/2 connection without activity for keepAliveTimeoutMs is closed.
    server.setTimeout(o.keepAliveTimeoutMs);
    server.on('session', (session: http2.ServerHttp2Session) => {
      this.sessions.add(session);
      session.on('close', () => this.sessions.delete(session));
    });
    server.on('secureConnection', (socket: Socket & { alpnProtocol?: string | false }) => {
      if (socket.alpnProtocol === 'h2') return;
      this.http1.set(socket, 0);
      socket.once('close', () => this.http1.delete(socket));
    });
    return server;
  }

  /** Counts an HTTP/1.1 request of the HTTP/2 server on its connection, so that stop() can close it. */
  private trackHttp1(req: http.IncomingMessage, res: http.ServerResponse): void {
    const socket = req.socket;
    this.http1.set(socket, (this.http1.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (this.http1.get(socket) ?? 1) - 1;
      this.http1.set(socket, left);
      if (left === 0 && this.state === 'stopped') socket.end();
    });
  }

  /**
   * Starts the drain (shutdownDelayMs) without waiting for it: the server keeps listening and answering,
   * but asks every client to move on. HTTP/1.1 answers carry `Connection: close`; HTTP/2 connections get a
   * graceful GOAWAY now (its last stream id tells the client which requests were processed: Go's client
   * sends the others again, on a new connection). A connection opened during the drain is served until its
   * end, then gets its GOAWAY: closing each after one stream would refuse the streams a client multiplexes
   * on it, and Go's transport backs off a second and more between such retries. The manager calls drain()
   * as its shutdown begins, so that the drain runs while its controllers stop; stop() starts it if nobody
   * has.
   */
  drain(): void {
    if (this.state !== 'running') return;
    this.state = 'draining';
    this.drainStarted = performance.now();
    this.logger.info('Draining webhook server', { shutdownDelayMs: this.options.shutdownDelayMs });
    for (const session of this.sessions) session.close();
  }

  /**
   * Drains (above) for shutdownDelayMs since the drain began, then stops listening, closes the connections
   * left idle and lets in-flight requests finish (each is bounded by requestTimeoutMs), then closes.
   *
   * Why not close idle connections at once, as Go's Server.Shutdown and Node's server.close() do: an HTTP/1.1
   * client may be writing a request on a kept-alive connection as the server closes it. It then reads EOF,
   * and Go's transport (the apiserver's) does not send a POST again once written (net/http's
   * shouldRetryRequest: only requests that are replayable, which a POST is not): the user's `kubectl apply`
   * fails. Answers with `Connection: close` end those connections cleanly while the client is using them.
   */
  stop(): Promise<void> {
    this.stopping ??= this.shutDown();
    return this.stopping;
  }

  private async shutDown(): Promise<void> {
    if (this.state === 'new') {
      this.state = 'stopped';
      return;
    }
    this.drain();
    const left = this.options.shutdownDelayMs - (performance.now() - this.drainStarted);
    if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
    this.state = 'stopped';
    this.certs?.stop();
    const server = this.server as https.Server | http2.Http2SecureServer;
    const { https } = await loadHttp();
    // Node's server.close() closes the idle HTTP/1.1 connections too: only those no request used in the drain.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    let force: NodeJS.Timeout;
    if (server instanceof https.Server) {
      server.closeIdleConnections();
      force = setTimeout(() => server.closeAllConnections(), this.options.requestTimeoutMs + 1_000);
    } else {
      // HTTP/2 sessions end once their streams have (GOAWAY); idle HTTP/1.1 connections end now.
      for (const session of this.sessions) session.close();
      for (const [socket, requests] of this.http1) if (requests === 0) socket.end();
      force = setTimeout(() => {
        for (const session of this.sessions) session.destroy();
        for (const socket of this.http1.keys()) socket.destroy();
      }, this.options.requestTimeoutMs + 1_000);
    }
    await closed;
    clearTimeout(force);
    this.logger.info('Stopped webhook server');
  }

  /** `Connection: close` for an HTTP/1.1 answer during the drain: its client closes the connection after it. */
  private closing(res: http.ServerResponse): Record<string, string> {
    return this.state !== 'running' && res.req?.httpVersionMajor === 1 ? { Connection: 'close' } : {};
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] as string;
    const webhook = this.webhooks.get(path);
    if (!webhook) {
      res
        .writeHead(404, { 'Content-Type': 'text/plain', ...this.closing(res) })
        .end(`no webhook at ${path}\n`);
      return;
    }
    if (this.serving >= this.options.maxConcurrentRequests) {
      req.resume();
      this.metrics.inc(REQUESTS_TOTAL, REQUESTS_HELP, { webhook: path, code: '429' });
      this.write(
        res,
        429,
        webhook.failure({}, 429, messages.busy(this.options.maxConcurrentRequests), 'TooManyRequests'),
        { 'Retry-After': '1' },
      );
      return;
    }
    this.serving++;
    const held = { bytes: 0 };
    const started = performance.now();
    this.setInFlight(path, 1);
    let status = 500;
    let span: SpanHandle | undefined;
    try {
      if (this.tracing) {
        const traced = this.tracing.inSpan(
          `${webhook.review.kind} ${path}`,
          { 'http.request.method': req.method, 'url.path': path, 'kubesmith.webhook': path },
          (handle) => this.answer(path, webhook, req, res, held, handle),
          'server',
        );
        span = traced.span;
        status = await traced.running;
      } else {
        status = await this.answer(path, webhook, req, res, held);
      }
    } catch (error) {
      // Only a bug of the server gets here; answer anyway rather than leave the caller hanging.
      this.logger.error('webhook request failed', { webhook: path, code: 500, error });
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain', ...this.closing(res) });
      if (!res.writableEnded) res.end('internal error\n');
    } finally {
      this.serving--;
      this.budget.used -= held.bytes;
      this.setInFlight(path, -1);
      this.metrics.observe(
        LATENCY,
        LATENCY_HELP,
        { webhook: path },
        (performance.now() - started) / 1000,
        LATENCY_BUCKETS,
      );
      this.metrics.inc(REQUESTS_TOTAL, REQUESTS_HELP, { webhook: path, code: String(status) });
      if (span) {
        span.set({ 'http.response.status_code': status });
        span.end(status >= 500 ? new Error(`answered ${status}`) : undefined, String(status));
      }
    }
  }

  /** Reads, checks and answers one request; returns the HTTP status written. */
  private async answer(
    path: string,
    webhook: Webhook,
    req: http.IncomingMessage,
    res: http.ServerResponse,
    held: { bytes: number },
    span?: SpanHandle,
  ): Promise<number> {
    const logger = this.logger.child({ webhook: path });
    let body: Record<string, unknown>;
    try {
      body = await this.readReview(webhook, req, held);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      logger.error('webhook request failed', { code: error.status, reason: error.message });
      // HTTP/2 has no Connection header (its streams close on their own).
      const close = error.status === 413 && req.httpVersionMajor === 1;
      const headers: Record<string, string> = close ? { Connection: 'close' } : {};
      span?.set({ 'kubesmith.webhook.refused': error.message });
      return this.write(
        res,
        error.status,
        webhook.failure({}, error.status, error.message, error.reason),
        headers,
      );
    }

    const controller = new AbortController();
    res.on('close', () => {
      if (!res.writableEnded) controller.abort(new Error('the caller closed the connection'));
    });
    const timeoutMs = this.options.requestTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const answering = webhook
      .answer(body, { signal: controller.signal, logger })
      .catch((error: unknown): Answer => {
        const message = messages.handlerFailed(error instanceof Error ? error.message : String(error));
        return { body: webhook.failure(body, 500, message, 'InternalError'), failure: message, error };
      });
    span?.set(reviewAttributes(body));
    const answer = await Promise.race([answering, timedOut]);
    clearTimeout(timer);
    const uid = requestUid(body);
    if (answer === 'timeout') {
      const message = messages.timedOut(timeoutMs);
      controller.abort(new Error(message));
      logger.error('webhook request failed', { code: 504, reason: message, requestID: uid });
      span?.set({ 'kubesmith.webhook.allowed': false });
      span?.fail(new Error(message), 'Timeout');
      return this.write(res, 200, webhook.failure(body, 504, message, 'Timeout'));
    }
    const status = answer.status ?? 200;
    span?.set(answerAttributes(answer.body));
    if (answer.failure !== undefined) {
      // A malformed review (400) or a webhook that threw (500), in the review or as the HTTP status.
      span?.fail(new Error(answer.failure), String((status === 200 ? codeOf(answer.body) : status) ?? 500));
      logger.error('webhook request failed', {
        code: status === 200 ? codeOf(answer.body) : status,
        reason: answer.failure,
        requestID: uid,
        ...(answer.error !== undefined ? { error: answer.error } : {}),
      });
    }
    return this.write(res, status, answer.body);
  }

  /** The request's review, or a Refusal: wrong method or content type, too large, not JSON, wrong kind. */
  private async readReview(
    webhook: Webhook,
    req: http.IncomingMessage,
    held: { bytes: number },
  ): Promise<Record<string, unknown>> {
    if (req.method !== 'POST')
      throw new Refusal(405, `method ${req.method ?? ''} not allowed, expected POST`, 'MethodNotAllowed');
    const contentType = req.headers['content-type'];
    if (contentType?.split(';')[0]?.trim().toLowerCase() !== 'application/json') {
      req.resume();
      throw new Refusal(400, messages.contentType(contentType), 'BadRequest');
    }
    const limit = this.options.maxRequestBytes;
    if (Number(req.headers['content-length'] ?? 0) > limit) {
      req.resume();
      throw new Refusal(413, messages.tooLarge(limit), 'RequestEntityTooLarge');
    }
    const raw = await readBody(req, limit, this.budget, held);
    if (raw === 'tooLarge') throw new Refusal(413, messages.tooLarge(limit), 'RequestEntityTooLarge');
    if (raw === 'overBudget') {
      throw new Refusal(429, messages.overBudget(this.options.maxInFlightBytes), 'TooManyRequests');
    }
    const size = raw.length;
    if (size === 0) throw new Refusal(400, messages.emptyBody(), 'BadRequest');
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString('utf8'));
    } catch (error) {
      throw new Refusal(400, messages.malformedJson((error as Error).message), 'BadRequest');
    }
    const expected = `${webhook.review.apiVersion} ${webhook.review.kind}`;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new Refusal(
        400,
        messages.wrongReview(Array.isArray(parsed) ? 'an array' : typeof parsed, expected),
        'BadRequest',
      );
    }
    const review = parsed as Record<string, unknown>;
    if (review['apiVersion'] !== webhook.review.apiVersion || review['kind'] !== webhook.review.kind) {
      const got = `${String(review['apiVersion'] ?? '<no apiVersion>')} ${String(review['kind'] ?? '<no kind>')}`;
      throw new Refusal(400, messages.wrongReview(got, expected), 'BadRequest');
    }
    return review;
  }

  private write(
    res: http.ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): number {
    if (res.writableEnded || res.destroyed) return status;
    res
      .writeHead(status, { 'Content-Type': 'application/json', ...this.closing(res), ...headers })
      .end(`${JSON.stringify(body)}\n`);
    return status;
  }

  private setInFlight(path: string, delta: number): void {
    const value = (this.inFlight.get(path) ?? 0) + delta;
    this.inFlight.set(path, value);
    this.metrics.set(IN_FLIGHT, IN_FLIGHT_HELP, { webhook: path }, value);
  }
}

/** Bytes buffered across requests, against a cap. */
interface ByteBudget {
  used: number;
  readonly max: number;
}

/**
 * The body, or 'tooLarge' as soon as it passes `limit`, or 'overBudget' as soon as the bytes held by all
 * requests would pass `budget.max` (the rest is read and dropped: destroying the request would take the
 * socket, and the answer, with it). The bytes read are added to `held.bytes` and to the budget; the server
 * gives them back when the request has been answered, as its parsed review lives until then.
 */
function readBody(
  req: http.IncomingMessage,
  limit: number,
  budget: ByteBudget,
  held: { bytes: number },
): Promise<Buffer | 'tooLarge' | 'overBudget'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      const tooLarge = held.bytes + chunk.length > limit;
      if (tooLarge || budget.used + chunk.length > budget.max) {
        over = true;
        chunks.length = 0;
        resolve(tooLarge ? 'tooLarge' : 'overBudget');
        return;
      }
      held.bytes += chunk.length;
      budget.used += chunk.length;
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!over) resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

function requestUid(body: Record<string, unknown>): string | undefined {
  const request = body['request'] as { uid?: unknown } | undefined;
  return typeof request?.uid === 'string' ? request.uid : undefined;
}

/**
 * A review's span attributes: an admission request's uid, kind, operation, namespace and name; a
 * conversion's uid and desired apiVersion.
 */
function reviewAttributes(body: Record<string, unknown>): Record<string, string | undefined> {
  const request = (body['request'] ?? {}) as {
    uid?: unknown;
    kind?: { kind?: unknown };
    operation?: unknown;
    namespace?: unknown;
    name?: unknown;
    desiredAPIVersion?: unknown;
  };
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return {
    'kubesmith.webhook.uid': text(request.uid),
    'kubesmith.webhook.kind': text(request.kind?.kind),
    'kubesmith.webhook.operation': text(request.operation),
    'kubesmith.namespace': text(request.namespace) || undefined,
    'kubesmith.name': text(request.name) || undefined,
    'kubesmith.webhook.desired_api_version': text(request.desiredAPIVersion),
  };
}

/** An answer's span attributes: whether an admission was allowed, the result of a conversion. */
function answerAttributes(body: unknown): Record<string, string | boolean | undefined> {
  const response = (body as { response?: { allowed?: unknown; result?: { status?: unknown } } })?.response;
  return {
    'kubesmith.webhook.allowed': typeof response?.allowed === 'boolean' ? response.allowed : undefined,
    'kubesmith.webhook.result':
      typeof response?.result?.status === 'string' ? response.result.status : undefined,
  };
}

function codeOf(body: unknown): number | undefined {
  const response = (body as { response?: { status?: { code?: number }; result?: { code?: number } } })
    ?.response;
  return response?.status?.code ?? response?.result?.code;
}
