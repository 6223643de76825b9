/**
 * A cap on a server's open connections that sheds before it refuses. Node's own `server.maxConnections`
 * refuses every new connection once the cap is reached, so that a few hundred silent sockets (TCP connections
 * that never send a TLS ClientHello, or never a request) lock every real client out until they time out.
 * Here a new connection over the cap closes, in this order:
 *
 * 1. the oldest connection that has not sent a request yet (still in its TLS handshake, or silent after it);
 * 2. else the connection idle the longest between two requests (a kept-alive client reconnects);
 * 3. else, every connection being busy with a request, the new connection itself.
 *
 * A real client completes its handshake and sends its request within milliseconds of connecting, so it is
 * never the oldest silent connection for long: to push it out, a flood has to open `maxConnections` new
 * connections within those milliseconds. Silent connections are then closed by the handshake and header
 * timeouts anyway; this cap only keeps them from locking the server meanwhile.
 */
import type { EventEmitter } from 'node:events';
import type http from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../logger.js';

type State = 'new' | 'busy' | 'idle';

interface Connection {
  readonly socket: Socket;
  state: State;
  /** Requests in flight on it (HTTP/1.1: one at a time, but counted rather than assumed). */
  requests: number;
  /** When it went idle: the longest idle is shed first. */
  idleSince: number;
}

export interface ConnectionLimitOptions {
  maxConnections: number;
  /** Where the connections shed or refused are counted, in one warning per 10 s at most. */
  logger: Logger;
  /** What the server is: `webhook`, `metrics`. */
  server: string;
}

const WARN_INTERVAL_MS = 10_000;

/**
 * Caps the connections of `server` (an http, https or http2 secure server, before it listens). HTTP/2
 * sessions count as busy for their life: their streams are bounded by the server's own settings, and an
 * idle session is closed by its timeout.
 */
export function limitConnections(server: EventEmitter, options: ConnectionLimitOptions): void {
  // In order of arrival: the first `new` one is the oldest silent connection.
  const connections = new Map<Socket, Connection>();
  const counts = { shedSilent: 0, shedIdle: 0, refused: 0 };
  let warned = -Infinity;
  // A flood would write a line per connection: the counts go out at most once per WARN_INTERVAL_MS.
  const count = (outcome: keyof typeof counts) => {
    counts[outcome]++;
    const now = performance.now();
    if (now - warned < WARN_INTERVAL_MS) return;
    warned = now;
    options.logger.warn(
      `${options.server} connections over maxConnections: the oldest silent or idle closed`,
      {
        maxConnections: options.maxConnections,
        ...counts,
      },
    );
    counts.shedSilent = counts.shedIdle = counts.refused = 0;
  };
  const find = (socket: Socket): Connection | undefined =>
    // A TLS socket wraps the TCP socket the 'connection' event gave (Node keeps it as `_parent`).
    connections.get(socket) ?? connections.get((socket as Socket & { _parent?: Socket })._parent as Socket);

  // Prepended: a connection over the cap is closed before TLS is set up on it.
  server.prependListener('connection', (socket: Socket) => {
    const connection: Connection = { socket, state: 'new', requests: 0, idleSince: 0 };
    connections.set(socket, connection);
    socket.once('close', () => connections.delete(socket));
    if (connections.size <= options.maxConnections) return;
    const victim = oldestNew(connections, connection) ?? longestIdle(connections);
    if (victim) {
      count(victim.state === 'new' ? 'shedSilent' : 'shedIdle');
      // Out of the count now, not at its 'close' (a tick later): a burst must not shed the same one twice.
      connections.delete(victim.socket);
      victim.socket.destroy();
    } else {
      count('refused');
      connections.delete(socket);
      socket.destroy();
    }
  });
  server.on('secureConnection', (socket: Socket & { alpnProtocol?: string | false }) => {
    const connection = find(socket);
    if (connection && socket.alpnProtocol === 'h2') connection.state = 'busy';
  });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.httpVersionMajor === 2) return;
    const connection = find(req.socket);
    if (!connection) return;
    connection.requests++;
    connection.state = 'busy';
    res.once('close', () => {
      if (--connection.requests > 0) return;
      connection.state = 'idle';
      connection.idleSince = performance.now();
    });
  });
}

function oldestNew(connections: Map<Socket, Connection>, except: Connection): Connection | undefined {
  for (const connection of connections.values()) {
    if (connection.state === 'new' && connection !== except) return connection;
  }
  return undefined;
}

function longestIdle(connections: Map<Socket, Connection>): Connection | undefined {
  let found: Connection | undefined;
  for (const connection of connections.values()) {
    if (connection.state === 'idle' && (!found || connection.idleSince < found.idleSince)) found = connection;
  }
  return found;
}
