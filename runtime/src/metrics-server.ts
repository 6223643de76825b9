/**
 * The manager's /metrics endpoint. Plain HTTP, or (as kubebuilder v4 scaffolds it) secure serving: HTTPS,
 * and every request authenticated with a TokenReview and authorised with a SubjectAccessReview for `get` on
 * the non-resource URL `/metrics`, the way controller-runtime's `filters.WithAuthenticationAndAuthorization`
 * does. Prometheus then scrapes with its service account's token; anyone else gets 401 or 403.
 *
 * Both kinds of server bound the time a client may take (TLS handshake, headers, request, idle) and the
 * connections open at once, as the webhook server does. The reviews are bounded too: their answers are
 * cached (by a keyed hash of the token, never the token itself), and at most `maxConcurrentReviews`
 * requests wait on the API server at once; more get a fast 429, so that a flood of made-up tokens costs the
 * API server a bounded number of reviews rather than one each.
 */
import type http from 'node:http';
import type http2 from 'node:http2';
import type https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { HttpClient } from './client.js';
import { limitConnections } from './internal/connection-limit.js';
import { loadHttp, loadHttp2, nodeCrypto } from './internal/node-modules.js';
import { tlsServerOptions, type TlsMinVersion } from './internal/tls-policy.js';
import { TtlCache } from './internal/ttl-cache.js';
import { resourceKind } from './kinds.js';
import type { ClusterAccess } from './kubeconfig.js';
import type { Logger } from './logger.js';
import type { MetricsConfig } from './options.js';
import type { CertWatcher } from './webhook/internal/certs.js';

/** How the metrics server serves: every option has a default (see docs/runtime-api.md). */
export interface MetricsServingOptions {
  /**
   * Directory holding the serving certificate (`certName`, `keyName`), e.g. cert-manager's Secret mounted
   * there; read again when the files change. Default: a self-signed certificate made at start.
   */
  certDir?: string;
  /** Default: tls.crt. */
  certName?: string;
  /** Default: tls.key. */
  keyName?: string;
  /** How long a client may take to complete its TLS handshake. Default: 10 000 ms. */
  handshakeTimeoutMs?: number;
  /** How long a client may take to send a request's headers. Default: 10 000 ms. */
  headersTimeoutMs?: number;
  /** How long a client may take to send a whole request. Default: 30 000 ms. */
  readTimeoutMs?: number;
  /**
   * How long an idle kept-alive connection stays open. Default: 90 000 ms (controller-runtime's IdleTimeout):
   * a scrape every minute keeps its connection.
   */
  keepAliveTimeoutMs?: number;
  /**
   * Connections open at once; over it, the oldest silent connection (no request yet) is closed, else the
   * longest idle, else the new one. Default: 64 (a few scrapers need a few connections).
   */
  maxConnections?: number;
  /** The lowest TLS version accepted. Default: `TLSv1.2`. */
  tlsMinVersion?: TlsMinVersion;
  /** The cipher suites, OpenSSL names joined by `:`. Default: FORWARD_SECRET_CIPHERS, as the webhook server. */
  tlsCiphers?: string;
  /**
   * With secureServing, offer HTTP/2 (ALPN `h2`) besides HTTP/1.1. Default: false, as kubebuilder's
   * `--enable-http2` (HTTP/2's stream floods and rapid resets, CVE-2023-44487, stay out).
   */
  enableHttp2?: boolean;
  /** Time allowed for a TokenReview or SubjectAccessReview. Default: 10 000 ms (controller-runtime's). */
  reviewTimeoutMs?: number;
  /**
   * Requests waiting on a TokenReview or SubjectAccessReview at once; more get 429 Too Many Requests with
   * Retry-After: 1 at once. Default: 8.
   */
  maxConcurrentReviews?: number;
  /** How long an authenticated token's user is reused. Default: 60 000 ms (controller-runtime's CacheTTL). */
  authenticationCacheTtlMs?: number;
  /** How long a token the API server did not authenticate stays refused without asking again. Default: 10 000 ms. */
  authenticationFailureCacheTtlMs?: number;
  /** How long a user allowed to get /metrics stays allowed. Default: 300 000 ms (controller-runtime's AllowCacheTTL). */
  authorizationAllowCacheTtlMs?: number;
  /** How long a user denied stays denied. Default: 30 000 ms (controller-runtime's DenyCacheTTL). */
  authorizationDenyCacheTtlMs?: number;
  /** Entries each of the four review caches holds at most (the oldest goes first). Default: 1024. */
  maxCachedReviews?: number;
}

/**
 * The manager's metrics server (controller-runtime's `metricsserver.Options`): the manager's `metrics`
 * option. `withDefaults` (options.ts, metricsConfig) applies every default; the server takes them resolved.
 */
export interface MetricsOptions extends MetricsServingOptions {
  /** `host:port` of /metrics; port 0 binds a free port, `'0'` turns the server off. Default: `:8080`. */
  bindAddress?: string;
  /**
   * Serve /metrics over HTTPS to callers whose token a TokenReview authenticates and a SubjectAccessReview
   * allows `get` on `/metrics` (kubebuilder v4's scaffold turns this on). Default: false, as
   * controller-runtime's option.
   */
  secureServing?: boolean;
}

/** The rendered metrics and their content type. */
export type RenderMetrics = () => Promise<{ contentType: string; body: string }>;

/** A bearer token is a JWT of a few kilobytes; anything much larger is not one. */
const MAX_TOKEN_LENGTH = 16 * 1024;

const TokenReview = resourceKind<TokenReviewObject>({
  group: 'authentication.k8s.io',
  version: 'v1',
  kind: 'TokenReview',
  plural: 'tokenreviews',
  namespaced: false,
});
const SubjectAccessReview = resourceKind<SubjectAccessReviewObject>({
  group: 'authorization.k8s.io',
  version: 'v1',
  kind: 'SubjectAccessReview',
  plural: 'subjectaccessreviews',
  namespaced: false,
});

interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}
interface TokenReviewObject {
  spec?: { token: string };
  status?: { authenticated?: boolean; user?: UserInfo };
}
interface SubjectAccessReviewObject {
  spec?: Record<string, unknown>;
  status?: { allowed?: boolean };
}

type Verdict = 200 | 401 | 403;

export class MetricsServer {
  private server: http.Server | http2.Http2SecureServer | undefined;
  private certs: CertWatcher | undefined;
  /** With HTTP/2: its sessions, closed on stop. */
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  /** Reviews tokens and access: made when serving securely. */
  private readonly client: HttpClient | undefined;
  /** Keys the token hashes: a cache key tells nothing about a token without it. */
  private readonly hashKey = nodeCrypto().randomBytes(32);
  private readonly authenticated: TtlCache<UserInfo>;
  private readonly unauthenticated: TtlCache<true>;
  private readonly allowed: TtlCache<true>;
  private readonly denied: TtlCache<true>;
  /** Requests waiting on reviews now (maxConcurrentReviews). */
  private reviewing = 0;

  constructor(
    /** The options resolved, every default applied (metricsConfig in options.ts). */
    private readonly options: MetricsConfig,
    private readonly render: RenderMetrics,
    private readonly logger: Logger,
    access: KubeConfig | ClusterAccess | undefined,
  ) {
    const max = options.maxCachedReviews;
    // Separate caches for the two outcomes: made-up tokens fill the failures' cache only, never pushing a
    // scraper's entry out.
    this.authenticated = new TtlCache(options.authenticationCacheTtlMs, max);
    this.unauthenticated = new TtlCache(options.authenticationFailureCacheTtlMs, max);
    this.allowed = new TtlCache(options.authorizationAllowCacheTtlMs, max);
    this.denied = new TtlCache(options.authorizationDenyCacheTtlMs, max);
    this.client =
      options.secureServing && access
        ? new HttpClient(access, { timeoutMs: options.reviewTimeoutMs })
        : undefined;
  }

  /** Listens; resolves with the address once listening. */
  async start(host: string | undefined, port: number): Promise<AddressInfo> {
    const o = this.options;
    const handler: http.RequestListener = (req, res) => void this.serve(req, res);
    const timeouts = {
      headersTimeout: o.headersTimeoutMs,
      requestTimeout: o.readTimeoutMs,
      keepAliveTimeout: o.keepAliveTimeoutMs,
      // Node enforces the two timeouts above when it checks its connections, every 30 s by default.
      connectionsCheckingInterval: Math.min(1_000, o.headersTimeoutMs),
    };
    const { http, https } = await loadHttp();
    const tls = async () => ({ ...(await this.certificate()), ...tlsServerOptions(o) });
    let server: http.Server | http2.Http2SecureServer;
    if (!o.secureServing) server = http.createServer(timeouts, handler);
    else if (!o.enableHttp2) {
      server = https.createServer({ ...(await tls()), ...timeouts, ALPNProtocols: ['http/1.1'] }, handler);
    } else {
      const http2 = await loadHttp2();
      const secure = http2.createSecureServer({ ...(await tls()), allowHTTP1: true }, (req, res) =>
        handler(req as unknown as http.IncomingMessage, res as unknown as http.ServerResponse),
      );
      // Its HTTP/1.1 connections take these from the server; an HTTP/2 session idle that long is closed.
      Object.assign(secure, timeouts);
      secure.setTimeout(timeouts.keepAliveTimeout);
      server = secure;
    }
    limitConnections(server, {
      maxConnections: o.maxConnections,
      logger: this.logger,
      server: 'metrics',
    });
    server.on('clientError', (_error: Error, socket: { destroy(): void }) => socket.destroy());
    server.on('session', (session: http2.ServerHttp2Session) => {
      this.sessions.add(session);
      session.on('close', () => this.sessions.delete(session));
    });
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', (err) =>
          reject(new Error(`cannot serve metrics on ${o.bindAddress}: ${err.message}`)),
        );
        server.listen(port, host, () => resolve());
      });
    } catch (error) {
      this.certs?.stop();
      throw error;
    }
    this.server = server;
    return server.address() as AddressInfo;
  }

  async stop(): Promise<void> {
    this.certs?.stop();
    this.client?.close();
    const server = this.server;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    if ('closeAllConnections' in server) server.closeAllConnections();
    else for (const session of this.sessions) session.destroy();
    await closed;
  }

  /** The serving certificate; its code is imported here, where a server with TLS needs it. */
  private async certificate(): Promise<{ cert: Buffer | string; key: Buffer | string }> {
    const { certDir } = this.options;
    if (!certDir) {
      const { makeServingCertificates } = await import('./internal/certs.js');
      const made = makeServingCertificates(['localhost', '127.0.0.1'], { name: 'kubesmith-metrics' });
      this.logger.info('serving metrics with a self-signed certificate (no metrics certificate directory)');
      return { cert: made.cert + made.caCert, key: made.key };
    }
    const { CertWatcher } = await import('./webhook/internal/certs.js');
    this.certs = new CertWatcher({
      certDir,
      certName: this.options.certName,
      keyName: this.options.keyName,
      pollIntervalMs: 10_000,
      logger: this.logger,
      onChange: (pair) =>
        (this.server as https.Server | http2.Http2SecureServer | undefined)?.setSecureContext(pair),
    });
    return this.certs.start();
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.url?.split('?')[0] !== '/metrics') return text(res, 404, 'not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return text(res, 405, 'method not allowed\n');
    if (this.options.secureServing) {
      const verdict = await this.authorize(req, res);
      if (verdict === undefined) return;
      if (verdict === 401) return text(res, 401, 'Unauthorized\n');
      if (verdict === 403) return text(res, 403, 'Forbidden: get on /metrics is not allowed\n');
    }
    try {
      const { contentType, body } = await this.render();
      res.writeHead(200, { 'Content-Type': contentType }).end(body);
    } catch (error) {
      this.logger.error('cannot render metrics', { error });
      text(res, 500, 'cannot render metrics\n');
    }
  }

  /**
   * 401 without a valid token, 403 when its user may not get /metrics, else 200; undefined when the answer
   * was written here already (429, 500) or the client went away.
   */
  private async authorize(req: http.IncomingMessage, res: http.ServerResponse): Promise<Verdict | undefined> {
    const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!token || token.length > MAX_TOKEN_LENGTH) return 401;
    const tokenKey = nodeCrypto().createHmac('sha256', this.hashKey).update(token).digest('base64');
    if (this.unauthenticated.get(tokenKey)) return 401;
    const user = this.authenticated.get(tokenKey);
    const userKey = user && hashOf(user);
    if (userKey && this.allowed.get(userKey)) return 200;
    if (userKey && this.denied.get(userKey)) return 403;

    const max = this.options.maxConcurrentReviews;
    if (this.reviewing >= max) {
      res.writeHead(429, { 'Content-Type': 'text/plain', 'Retry-After': '1' });
      res.end('too many requests being authenticated: retry later\n');
      return undefined;
    }
    this.reviewing++;
    // A client that goes away takes its reviews with it: they are not worth the API server's time.
    const gone = new AbortController();
    const onClose = () => gone.abort(new Error('the client closed the connection'));
    res.once('close', onClose);
    try {
      return await this.review(token, tokenKey, user, gone.signal);
    } catch (error) {
      if (gone.signal.aborted) return undefined;
      this.logger.error('metrics: cannot review the request', { error });
      text(res, 500, 'cannot authenticate the request\n');
      return undefined;
    } finally {
      this.reviewing--;
      res.off('close', onClose);
    }
  }

  /** The TokenReview (unless its user is cached) then the SubjectAccessReview, caching both answers. */
  private async review(
    token: string,
    tokenKey: string,
    cachedUser: UserInfo | undefined,
    signal: AbortSignal,
  ): Promise<Verdict> {
    const client = this.client;
    if (!client) throw new Error('secure serving needs a kubeConfig to review tokens with');
    let user = cachedUser;
    if (!user) {
      const review = await client.create(
        TokenReview,
        { apiVersion: TokenReview.apiVersion, kind: TokenReview.kind, spec: { token } } as TokenReviewObject,
        { signal },
      );
      user = review.status?.authenticated ? review.status.user : undefined;
      if (!user) {
        this.unauthenticated.set(tokenKey, true);
        return 401;
      }
      this.authenticated.set(tokenKey, user);
    }
    const userKey = hashOf(user);
    if (this.allowed.get(userKey)) return 200;
    if (this.denied.get(userKey)) return 403;
    const access = await client.create(
      SubjectAccessReview,
      {
        apiVersion: SubjectAccessReview.apiVersion,
        kind: SubjectAccessReview.kind,
        spec: {
          user: user.username,
          ...(user.uid ? { uid: user.uid } : {}),
          ...(user.groups ? { groups: user.groups } : {}),
          ...(user.extra ? { extra: user.extra } : {}),
          nonResourceAttributes: { path: '/metrics', verb: 'get' },
        },
      } as SubjectAccessReviewObject,
      { signal },
    );
    if (access.status?.allowed) {
      this.allowed.set(userKey, true);
      return 200;
    }
    this.denied.set(userKey, true);
    return 403;
  }
}

/** The key of a user's authorisation: its whole identity, as the SubjectAccessReview sends it. */
function hashOf(user: UserInfo): string {
  const identity = [user.username, user.uid, user.groups, user.extra];
  return nodeCrypto().createHash('sha256').update(JSON.stringify(identity)).digest('base64');
}

function text(res: http.ServerResponse, status: number, body: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'Content-Type': 'text/plain' }).end(body);
}
