/**
 * A TCP proxy in front of webhook replicas, for tests where kube-apiserver calls `https://127.0.0.1:<port>`
 * and several replicas answer: each connection goes to the next replica that accepts it (round robin), so
 * a replica that stopped is skipped. TLS passes through: the replicas' certificates are what the apiserver
 * checks.
 */
import net from 'node:net';

export function startProxy(backends: () => number[]): Promise<{ port: number; close: () => void }> {
  let turn = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const ports = backends();
    const tryConnect = (left: number) => {
      if (left === 0 || ports.length === 0) return client.destroy();
      const port = ports[turn++ % ports.length]!;
      const upstream = net.connect(port, '127.0.0.1');
      let connected = false;
      upstream.once('connect', () => {
        connected = true;
        sockets.add(upstream);
        client.pipe(upstream).pipe(client);
        upstream.on('close', () => client.destroy());
        client.on('close', () => upstream.destroy());
      });
      upstream.on('error', () => {
        upstream.destroy();
        // Refused (a replica that stopped): the next one; once connected, the client's connection ends.
        if (connected) client.destroy();
        else tryConnect(left - 1);
      });
    };
    tryConnect(ports.length);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: (server.address() as net.AddressInfo).port,
        close: () => {
          server.close();
          for (const socket of sockets) socket.destroy();
        },
      }),
    ),
  );
}
