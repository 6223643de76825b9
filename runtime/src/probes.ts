/**
 * The manager's health probes: `/healthz` (the process answers: liveness) and `/readyz` (the caches have
 * synced and the controllers run: readiness), plain HTTP, as controller-runtime serves them on
 * `--health-probe-bind-address`. Kubelet calls them from the node; they carry nothing secret.
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { limitConnections } from './internal/connection-limit.js';
import type { Logger } from './logger.js';
import { loadHttp } from './internal/node-modules.js';

export interface ProbeServerOptions {
  /** `host:port`, for error messages. */
  bindAddress: string;
  /** Whether the manager is ready: `/readyz` answers 200 when true, else 503 with `notReadyReason`. */
  ready: () => boolean;
  /** The body of a 503 from `/readyz`. Default: `caches not synced`. */
  notReadyReason?: string;
  /** Where connections over `maxConnections` are counted. */
  logger: Logger;
  /** Headers must arrive within this (a probe's are a few bytes). Default: 5 s. */
  headersTimeoutMs?: number;
  /** A kept-alive connection idle this long is closed. Default: 30 s. */
  keepAliveTimeoutMs?: number;
  /** Open connections at most (kubelet keeps one or two); over it the oldest silent or idle close. Default: 32. */
  maxConnections?: number;
}

export class ProbeServer {
  private server: http.Server | undefined;

  constructor(private readonly options: ProbeServerOptions) {}

  /** Listens; resolves with the address once listening. */
  async start(host: string | undefined, port: number): Promise<AddressInfo> {
    const o = this.options;
    const headersTimeout = o.headersTimeoutMs ?? 5_000;
    // The port is reachable from the pod network: silent or slow connections must not pile up. A probe's
    // request has no body, so the whole request is bounded by the header timeout.
    const { http } = await loadHttp();
    const server = http.createServer(
      {
        headersTimeout,
        requestTimeout: headersTimeout,
        keepAliveTimeout: o.keepAliveTimeoutMs ?? 30_000,
        // Node enforces the two timeouts above when it checks its connections, every 30 s by default.
        connectionsCheckingInterval: Math.min(1_000, headersTimeout),
      },
      (req, res) => this.serve(req, res),
    );
    limitConnections(server, { maxConnections: o.maxConnections ?? 32, logger: o.logger, server: 'probes' });
    server.on('clientError', (_error, socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) =>
        reject(new Error(`cannot serve healthProbe on ${this.options.bindAddress}: ${err.message}`)),
      );
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    return server.address() as AddressInfo;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = req.url?.split('?')[0];
    if (path === '/healthz') return text(res, 200, 'ok\n');
    if (path === '/readyz') {
      const ready = this.options.ready();
      const reason = this.options.notReadyReason ?? 'caches not synced';
      return text(res, ready ? 200 : 503, ready ? 'ok\n' : `${reason}\n`);
    }
    text(res, 404, 'not found\n');
  }
}

function text(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain' }).end(body);
}
