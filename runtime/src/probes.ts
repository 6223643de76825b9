/**
 * The manager's health probes: `/healthz` (the process answers: liveness) and `/readyz` (the caches have
 * synced and the controllers run: readiness), plain HTTP, as controller-runtime serves them on
 * `--health-probe-bind-address`. Kubelet calls them from the node; they carry nothing secret.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProbeServerOptions {
  /** `host:port`, for error messages. */
  bindAddress: string;
  /** Whether the manager is ready: `/readyz` answers 200 when true, else 503 with `notReadyReason`. */
  ready: () => boolean;
  /** The body of a 503 from `/readyz`. Default: `caches not synced`. */
  notReadyReason?: string;
}

export class ProbeServer {
  private server: http.Server | undefined;

  constructor(private readonly options: ProbeServerOptions) {}

  /** Listens; resolves with the address once listening. */
  async start(host: string | undefined, port: number): Promise<AddressInfo> {
    const server = http.createServer((req, res) => this.serve(req, res));
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
