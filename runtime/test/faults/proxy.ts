/**
 * Proxies between a client and the API server, for the fault tests. FaultProxy, over TCP, counts the
 * connections it accepts, and can stop carrying bytes while keeping every connection open (a black hole,
 * as a network partition or a vanished NAT entry looks to the client), or cut every connection.
 * HttpFaultProxy, over HTTP, records each request and can end every watch of a path at once.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { KubeConfig } from '@kubernetes/client-node';

export class FaultProxy {
  private readonly server = net.createServer((socket) => this.accept(socket));
  private readonly sockets = new Set<net.Socket>();
  /** Connections the proxy accepted since it started. */
  connections = 0;
  private mode: 'forward' | 'blackhole' = 'forward';
  private cutAfterMs: number | undefined;
  port = 0;

  constructor(private readonly target: number) {}

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  /** Stops carrying bytes, on open connections and new ones alike; nothing is closed. */
  blackhole(): void {
    this.mode = 'blackhole';
    for (const socket of this.sockets) {
      socket.unpipe();
      socket.pause();
    }
  }

  /** New connections are carried again; connections black-holed before stay silent for good. */
  heal(): void {
    this.mode = 'forward';
  }

  /** Closes every new connection `ms` after it opened (undefined: no more); a watch then ends at once. */
  cutAfter(ms: number | undefined): void {
    this.cutAfterMs = ms;
  }

  /** Destroys every connection (the client sees a reset); new ones are accepted. */
  reset(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.reset();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** `kubeConfig` with this proxy as the server (the apiserver's certificate names 127.0.0.1, any port). */
  kubeConfig(kubeConfig: KubeConfig): KubeConfig {
    const kc = new KubeConfig();
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    kc.loadFromOptions({
      clusters: [{ ...cluster, server: `https://127.0.0.1:${this.port}` }],
      users: kubeConfig.getUsers(),
      contexts: kubeConfig.getContexts(),
      currentContext: kubeConfig.getCurrentContext(),
    });
    return kc;
  }

  private accept(client: net.Socket): void {
    this.connections++;
    this.sockets.add(client);
    client.on('error', () => {});
    client.on('close', () => this.sockets.delete(client));
    if (this.mode === 'blackhole') {
      client.pause();
      return;
    }
    const upstream = net.connect(this.target, '127.0.0.1');
    this.sockets.add(upstream);
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => {
      this.sockets.delete(upstream);
      client.destroy();
    });
    client.on('close', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
    if (this.cutAfterMs !== undefined) setTimeout(() => client.destroy(), this.cutAfterMs);
  }
}

/** One request an HttpFaultProxy carried: when it came (performance.now()), what it asked for. */
export interface ProxiedRequest {
  at: number;
  method: string;
  /** The path without the query. */
  path: string;
  watch: boolean;
}

interface OpenWatch {
  path: string;
  upstream: http.ClientRequest;
  answer?: http.IncomingMessage;
}

/**
 * An HTTP proxy in front of the API server, for faults a TCP proxy cannot make because they depend on the
 * request: the runtime talks plain HTTP to it (on loopback), and it forwards each request over TLS with the
 * same headers. It records every request, and can answer every watch of a path at once with a clean, empty
 * end (200, no event): what a misbehaving proxy or load balancer in front of an API server does.
 */
export class HttpFaultProxy {
  private readonly server = http.createServer((req, res) => this.forward(req, res));
  readonly requests: ProxiedRequest[] = [];
  /** Every watch event reaches the client this much later (0: at once). */
  private watchDelayMs = 0;
  /** Watches of this path are ended at once (undefined: none). */
  private endingWatchesOf: string | undefined;
  /** The watches being carried: their path, the request to the API server and its answer. */
  private readonly watches = new Map<http.ServerResponse, OpenWatch>();
  port = 0;

  constructor(private readonly upstream: KubeConfig) {}

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  /**
   * From now on, every watch of `path` is answered with an immediate end (undefined: carried again); the
   * watches of `path` open now end cleanly, as when their timeoutSeconds pass.
   */
  endWatches(path: string | undefined): void {
    this.endingWatchesOf = path;
    for (const [res, open] of this.watches) {
      if (open.path !== path) continue;
      this.watches.delete(res);
      open.answer?.unpipe(res);
      open.upstream.on('error', () => {}).destroy();
      res.end();
    }
  }

  /**
   * From now on, what every watch carries (its events, its end) reaches the client `ms` later, in order:
   * an informer that lags behind the API server, as under load. Lists, gets and writes are not delayed.
   */
  delayWatches(ms: number): void {
    this.watchDelayMs = ms;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** `upstream` with this proxy as the server, over plain HTTP, with the same credentials. */
  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    const cluster = this.upstream.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    kc.loadFromOptions({
      // client-node refuses plain HTTP unless TLS verification is off: there is no TLS to verify.
      clusters: [{ name: cluster.name, server: `http://127.0.0.1:${this.port}`, skipTLSVerify: true }],
      users: this.upstream.getUsers(),
      contexts: this.upstream.getContexts(),
      currentContext: this.upstream.getCurrentContext(),
    });
    return kc;
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const watch = url.searchParams.get('watch') === 'true';
    this.requests.push({ at: performance.now(), method: req.method ?? 'GET', path: url.pathname, watch });
    if (watch && url.pathname === this.endingWatchesOf) {
      req.resume();
      res.writeHead(200, { 'Content-Type': 'application/json' }).end();
      return;
    }
    const cluster = this.upstream.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const options: https.RequestOptions = { method: req.method, headers: { ...req.headers } };
    await this.upstream.applyToHTTPSOptions(options);
    delete (options.headers as http.OutgoingHttpHeaders)['host'];
    const upstream = https.request(new URL(req.url ?? '/', cluster.server), options);
    const open: OpenWatch = { path: url.pathname, upstream };
    upstream.on('response', (answer: http.IncomingMessage) => {
      open.answer = answer;
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      if (!watch) {
        answer.pipe(res);
        return;
      }
      // Each chunk after the delay in force when it arrived; setTimeout keeps equal delays in order.
      const later = (write: () => void) => {
        const delay = this.watchDelayMs;
        if (delay > 0) setTimeout(write, delay);
        else write();
      };
      answer.on('data', (chunk: Buffer) => later(() => res.writableEnded || res.write(chunk)));
      answer.on('end', () => later(() => res.end()));
    });
    upstream.on('error', () => res.destroy());
    if (watch) this.watches.set(res, open);
    res.on('close', () => {
      this.watches.delete(res);
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }
}
