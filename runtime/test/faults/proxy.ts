/**
 * A TCP proxy between a client and the API server, for the fault tests: it counts the connections it
 * accepts, and it can stop carrying bytes while keeping every connection open (a black hole, as a
 * network partition or a vanished NAT entry looks to the client), or cut every connection.
 */
import net from 'node:net';
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
