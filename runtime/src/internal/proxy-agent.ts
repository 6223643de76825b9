/**
 * A keep-alive agent that reaches the API server through an HTTP or HTTPS proxy (a kubeconfig cluster's
 * `proxy-url`): each new connection is a CONNECT tunnel through the proxy, then TLS to the API server
 * inside it, so the proxy never sees the requests. SOCKS proxies are not handled here (kubeconfig.ts
 * hands them to client-node).
 */
import type Http from 'node:http';
import type Https from 'node:https';
import type { Duplex } from 'node:stream';
import type Tls from 'node:tls';

// Taken as `require` takes them: an ES import of node:http loads undici from Node 22 (node-modules.ts).
const http: typeof Http = process.getBuiltinModule('node:http');
const https: typeof Https = process.getBuiltinModule('node:https');
const tls: typeof Tls = process.getBuiltinModule('node:tls');

type Callback = (err: Error | null, socket?: Duplex) => void;

export interface ProxyAgentOptions {
  /** The proxy, `http://host:port` or `https://host:port`, with `user:password@` for Basic auth. */
  proxyUrl: URL;
  /** The API server's protocol: `https:` (TLS inside the tunnel) or `http:`. */
  protocol: string;
  /** How long the proxy may take to open the tunnel. */
  connectTimeoutMs: number;
  /** The agent's own settings (keep-alive...) and, for `https:`, its TLS options. */
  agentOptions: Https.AgentOptions;
}

/** An agent whose connections are tunnels through `proxyUrl`. */
export function proxyAgent(options: ProxyAgentOptions): Http.Agent {
  const agent =
    options.protocol === 'http:'
      ? new http.Agent(options.agentOptions)
      : new https.Agent(options.agentOptions);
  // Node's agents accept a createConnection that answers through its callback (the socket comes later).
  (agent as unknown as { createConnection: unknown }).createConnection = (
    connect: Tls.ConnectionOptions & { host?: string; port?: number },
    callback: Callback,
  ) => {
    openTunnel(options, connect.host ?? 'localhost', Number(connect.port)).then(
      (socket) => {
        if (options.protocol === 'http:') return callback(null, socket);
        const secure = tls.connect({ ...connect, socket });
        callback(null, secure);
      },
      (err: Error) => callback(err),
    );
    return undefined;
  };
  return agent;
}

/** A socket to `host:port` through the proxy (its CONNECT answered 2xx). */
function openTunnel(options: ProxyAgentOptions, host: string, port: number): Promise<Duplex> {
  const proxy = options.proxyUrl;
  const authority = `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
  const headers: Http.OutgoingHttpHeaders = { Host: authority };
  if (proxy.username) {
    const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
    headers['Proxy-Authorization'] = `Basic ${Buffer.from(credentials).toString('base64')}`;
  }
  const transport = proxy.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request({
      host: proxy.hostname.replace(/^\[|\]$/g, ''),
      port: proxy.port || (proxy.protocol === 'https:' ? 443 : 80),
      method: 'CONNECT',
      path: authority,
      headers,
      agent: false,
    });
    const timer = setTimeout(() => {
      req.destroy(
        new Error(`proxy ${proxy.host} did not open a tunnel within ${options.connectTimeoutMs} ms`),
      );
    }, options.connectTimeoutMs);
    req.once('connect', (res, socket) => {
      clearTimeout(timer);
      if ((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300) return resolve(socket);
      socket.destroy();
      reject(new Error(`proxy ${proxy.host} refused the tunnel to ${authority}: HTTP ${res.statusCode}`));
    });
    req.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end();
  });
}
