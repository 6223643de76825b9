/**
 * The manager's /metrics endpoint. Plain HTTP, or (as kubebuilder v4 scaffolds it) secure serving: HTTPS,
 * and every request authenticated with a TokenReview and authorised with a SubjectAccessReview for `get` on
 * the non-resource URL `/metrics`, the way controller-runtime's `filters.WithAuthenticationAndAuthorization`
 * does. Prometheus then scrapes with its service account's token; anyone else gets 401 or 403.
 */
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { AuthenticationV1Api, AuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { makeServingCertificates } from './internal/certs.js';
import type { Logger } from './logger.js';
import { CertWatcher } from './webhook/internal/certs.js';

export interface MetricsServerOptions {
  /** `host:port`; port 0 binds a free port. */
  bindAddress: string;
  /** HTTPS with TokenReview and SubjectAccessReview. Default: false (as controller-runtime's option). */
  secureServing?: boolean;
  /**
   * Directory holding the serving certificate (`certName`, `keyName`), e.g. cert-manager's Secret mounted
   * there; read again when the files change. Default: a self-signed certificate made at start.
   */
  certDir?: string;
  /** Default: tls.crt. */
  certName?: string;
  /** Default: tls.key. */
  keyName?: string;
  /** How long a review's answer is reused for the same token. Default: 10_000 ms. */
  reviewCacheTtlMs?: number;
  /** Time allowed for a TokenReview or SubjectAccessReview. Default: 10_000 ms. */
  reviewTimeoutMs?: number;
  /**
   * With secureServing, offer HTTP/2 (ALPN `h2`) besides HTTP/1.1. Default: false, as kubebuilder's
   * `--enable-http2` (HTTP/2's stream floods and rapid resets, CVE-2023-44487, stay out).
   */
  enableHttp2?: boolean;
}

/** The rendered metrics and their content type. */
export type RenderMetrics = () => Promise<{ contentType: string; body: string }>;

const MAX_CACHED_REVIEWS = 1024;
/** A bearer token is a JWT of a few kilobytes; anything much larger is not one. */
const MAX_TOKEN_LENGTH = 16 * 1024;

type Verdict = 200 | 401 | 403;

export class MetricsServer {
  private server: http.Server | http2.Http2SecureServer | undefined;
  private certs: CertWatcher | undefined;
  /** With HTTP/2: its sessions, closed on stop. */
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  private readonly reviews = new Map<string, { verdict: Verdict; expires: number }>();

  constructor(
    private readonly options: MetricsServerOptions,
    private readonly render: RenderMetrics,
    private readonly logger: Logger,
    private readonly kubeConfig: KubeConfig,
  ) {}

  /** Listens; resolves with the address once listening. */
  async start(host: string | undefined, port: number): Promise<AddressInfo> {
    const handler: http.RequestListener = (req, res) => void this.serve(req, res);
    const tls = () => ({ ...this.certificate(), minVersion: 'TLSv1.2' as const });
    const server = !this.options.secureServing
      ? http.createServer(handler)
      : this.options.enableHttp2
        ? http2.createSecureServer({ ...tls(), allowHTTP1: true }, (req, res) =>
            handler(req as unknown as http.IncomingMessage, res as unknown as http.ServerResponse),
          )
        : https.createServer({ ...tls(), ALPNProtocols: ['http/1.1'] }, handler);
    server.on('clientError', (_error: Error, socket: { destroy(): void }) => socket.destroy());
    server.on('session', (session: http2.ServerHttp2Session) => {
      this.sessions.add(session);
      session.on('close', () => this.sessions.delete(session));
    });
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', (err) =>
          reject(new Error(`cannot serve metrics on ${this.options.bindAddress}: ${err.message}`)),
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
    const server = this.server;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    if ('closeAllConnections' in server) server.closeAllConnections();
    else for (const session of this.sessions) session.destroy();
    await closed;
  }

  private certificate(): { cert: Buffer | string; key: Buffer | string } {
    const { certDir } = this.options;
    if (!certDir) {
      const made = makeServingCertificates(['localhost', '127.0.0.1'], { name: 'kubesmith-metrics' });
      this.logger.info('serving metrics with a self-signed certificate (no metrics certificate directory)');
      return { cert: made.cert + made.caCert, key: made.key };
    }
    this.certs = new CertWatcher({
      certDir,
      certName: this.options.certName ?? 'tls.crt',
      keyName: this.options.keyName ?? 'tls.key',
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
      let verdict: Verdict;
      try {
        verdict = await this.authorize(req.headers.authorization);
      } catch (error) {
        this.logger.error('metrics: cannot review the request', { error });
        return text(res, 500, 'cannot authenticate the request\n');
      }
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

  /** 401 without a valid token, 403 when its user may not get /metrics, else 200. */
  private async authorize(header: string | undefined): Promise<Verdict> {
    const token = /^Bearer\s+(\S+)$/i.exec(header ?? '')?.[1];
    if (!token || token.length > MAX_TOKEN_LENGTH) return 401;
    const now = Date.now();
    const cached = this.reviews.get(token);
    if (cached && cached.expires > now) return cached.verdict;
    const verdict = await this.review(token);
    if (this.reviews.size >= MAX_CACHED_REVIEWS) {
      for (const [key, entry] of this.reviews) if (entry.expires <= now) this.reviews.delete(key);
      if (this.reviews.size >= MAX_CACHED_REVIEWS) this.reviews.clear();
    }
    this.reviews.set(token, { verdict, expires: now + (this.options.reviewCacheTtlMs ?? 10_000) });
    return verdict;
  }

  private async review(token: string): Promise<Verdict> {
    const timeout = this.options.reviewTimeoutMs ?? 10_000;
    const authn = this.kubeConfig.makeApiClient(AuthenticationV1Api);
    const tokenReview = await withTimeout(
      authn.createTokenReview({
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      }),
      timeout,
      'TokenReview',
    );
    const user = tokenReview.status?.user;
    if (!tokenReview.status?.authenticated || !user) return 401;
    const authz = this.kubeConfig.makeApiClient(AuthorizationV1Api);
    const access = await withTimeout(
      authz.createSubjectAccessReview({
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: user.username,
            ...(user.uid ? { uid: user.uid } : {}),
            ...(user.groups ? { groups: user.groups } : {}),
            ...(user.extra ? { extra: user.extra } : {}),
            nonResourceAttributes: { path: '/metrics', verb: 'get' },
          },
        },
      }),
      timeout,
      'SubjectAccessReview',
    );
    return access.status?.allowed ? 200 : 403;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function text(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain' }).end(body);
}
