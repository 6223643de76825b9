/**
 * The runtime's own kubeconfig loader on a real API server: a manager connects and reconciles with client
 * certificates (kube-apiserver started with a client CA of the test's), with a token, with an exec
 * credential plugin (run once while its credential is valid, again after it expires or gets a 401), with
 * KUBECONFIG listing two files merged, and through an HTTP proxy; the secure metrics server reviews
 * tokens on the same config.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../../src/builder.js';
import { HttpClient } from '../../src/client.js';
import type { Envtest } from '../../src/envtest/index.js';
import { ApiError } from '../../src/errors.js';
import { makeClientCertificates } from '../../src/internal/certs.js';
import { loadKubeConfig, type RestConfig } from '../../src/kubeconfig.js';
import { ConfigMapKind, createNamespace, eventually, runManager, startTestEnv } from './helpers.js';

let env: Envtest;
let dir: string;
/** envtest's cluster entry (server and CA) and its admin token. */
let cluster: { server: string; 'certificate-authority-data': string };
let token: string;

/** A client certificate of user `cert-user` in group system:masters, signed by the CA kube-apiserver trusts. */
let client: { cert: string; key: string };

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kubeconfig-it-'));
  const pki = makeClientCertificates('cert-user', ['system:masters']);
  client = { cert: pki.cert, key: pki.key };
  writeFileSync(path.join(dir, 'client-ca.crt'), pki.caCert);
  env = await startTestEnv({ apiServerArgs: [`--client-ca-file=${path.join(dir, 'client-ca.crt')}`] });
  const file = JSON.parse(readFileSync(env.kubeconfigPath, 'utf8')) as {
    clusters: { cluster: typeof cluster }[];
    users: { user: { token: string } }[];
  };
  cluster = file.clusters[0]!.cluster;
  token = file.users[0]!.user.token;
}, 90_000);
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await env?.stop();
}, 30_000);

function writeConfig(name: string, user: object, clusterEntry: object = cluster): string {
  const file = path.join(dir, name);
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'envtest', cluster: clusterEntry }],
      users: [{ name: 'someone', user }],
      contexts: [{ name: 'ctx', context: { cluster: 'envtest', user: 'someone' } }],
      'current-context': 'ctx',
    }),
  );
  return file;
}

/** A manager on `config` whose ConfigMap controller reconciles a ConfigMap the test creates. */
async function reconcilesWith(config: RestConfig): Promise<void> {
  const ns = await createNamespace(env, 'kubeconfig');
  const seen = new Set<string>();
  const run = await runManager(
    env,
    (mgr) => {
      controllerManagedBy(mgr)
        .named(`configmaps-${ns}`)
        .for(ConfigMapKind)
        .complete({
          async reconcile(request) {
            if (request.namespace === ns) seen.add(request.name);
          },
        });
    },
    { kubeConfig: config, cache: { namespace: ns } },
  );
  try {
    await run.mgr.client.create(ConfigMapKind, { metadata: { name: 'probe', namespace: ns }, data: {} });
    await eventually(() => seen.has('probe'), 'the ConfigMap to be reconciled');
  } finally {
    await run.mgr.stop();
  }
}

describe('a manager on the runtime’s own kubeconfig loader', () => {
  it('connects with client certificates, as files relative to the kubeconfig and as data', async () => {
    mkdirSync(path.join(dir, 'pki'), { recursive: true });
    mkdirSync(path.join(dir, 'nested'), { recursive: true });
    writeFileSync(path.join(dir, 'pki', 'client.crt'), client.cert);
    writeFileSync(path.join(dir, 'pki', 'client.key'), client.key);
    const files = writeConfig('nested/certs', {
      'client-certificate': '../pki/client.crt',
      'client-key': '../pki/client.key',
    });
    await reconcilesWith(loadKubeConfig({ kubeconfig: files }));
    const data = writeConfig('cert-data', {
      'client-certificate-data': Buffer.from(client.cert).toString('base64'),
      'client-key-data': Buffer.from(client.key).toString('base64'),
    });
    await reconcilesWith(loadKubeConfig({ kubeconfig: data }));

    // A certificate the API server's client CA did not sign authenticates no one.
    const stranger = makeClientCertificates('cert-user', ['system:masters']);
    const refused = new HttpClient(
      loadKubeConfig({
        kubeconfig: writeConfig('stranger', {
          'client-certificate-data': Buffer.from(stranger.cert).toString('base64'),
          'client-key-data': Buffer.from(stranger.key).toString('base64'),
        }),
      }),
    );
    const failure = await refused.list(ConfigMapKind, { namespace: 'default' }).catch((err: unknown) => err);
    expect(failure instanceof ApiError && failure.statusCode).toBe(401);
    refused.close();
  });

  it('connects with a token', async () => {
    await reconcilesWith(loadKubeConfig({ kubeconfig: writeConfig('token', { token }) }));
  });

  it('serves secure metrics, its TokenReviews and SubjectAccessReviews going out on the loaded config', async () => {
    const run = await runManager(env, () => {}, {
      kubeConfig: loadKubeConfig({ kubeconfig: writeConfig('metrics', { token }) }),
      metrics: { bindAddress: '127.0.0.1:0', secureServing: true },
    });
    const scrape = (bearer: string) =>
      new Promise<number>((resolve, reject) => {
        https
          .get(
            {
              host: '127.0.0.1',
              port: run.mgr.addresses.metrics!.port,
              path: '/metrics',
              rejectUnauthorized: false,
              headers: { Authorization: `Bearer ${bearer}` },
            },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            },
          )
          .on('error', reject);
      });
    try {
      // The admin token is authenticated (TokenReview) and allowed (SubjectAccessReview, system:masters).
      expect(await scrape(token)).toBe(200);
      expect(await scrape('made-up')).toBe(401);
    } finally {
      await run.mgr.stop();
    }
  });

  it('refuses a wrong token with a 401', async () => {
    const client = new HttpClient(
      loadKubeConfig({ kubeconfig: writeConfig('wrong', { token: 'not-a-token' }) }),
    );
    const failure = await client.list(ConfigMapKind, { namespace: 'default' }).catch((err: unknown) => err);
    expect(failure instanceof ApiError && failure.statusCode).toBe(401);
  });

  it('connects with KUBECONFIG listing two files: the user from one, the cluster from the other, the first file winning', async () => {
    // The first file: the context and the user. The second: the cluster, and a user of the same name whose
    // wrong token must lose to the first file's.
    const first = path.join(dir, 'first');
    writeFileSync(
      first,
      JSON.stringify({
        users: [{ name: 'someone', user: { token } }],
        contexts: [{ name: 'ctx', context: { cluster: 'envtest', user: 'someone' } }],
      }),
    );
    const second = writeConfig('second', { token: 'the-wrong-one' });
    const config = loadKubeConfig({ env: { HOME: dir, KUBECONFIG: [first, second].join(path.delimiter) } });
    expect(config.contextName).toBe('ctx');
    await reconcilesWith(config);
  });

  it('reaches the API server through an HTTP proxy (a CONNECT tunnel), naming the server as tls-server-name says', async () => {
    const tunnels: string[] = [];
    const proxy = http.createServer((_req, res) => res.writeHead(405).end());
    proxy.on('connect', (req: http.IncomingMessage, socket: net.Socket) => {
      tunnels.push(req.url ?? '');
      const [host, port] = [req.url!.slice(0, req.url!.lastIndexOf(':')), Number(req.url!.split(':').pop())];
      const upstream = net.connect(port, host, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.pipe(socket).pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
    try {
      // The apiserver's own certificate names kubernetes.default.svc, not 127.0.0.1's other names.
      const named = { ...cluster, 'proxy-url': proxyUrl, 'tls-server-name': 'kubernetes.default.svc' };
      await reconcilesWith(loadKubeConfig({ kubeconfig: writeConfig('proxied', { token }, named) }));
      expect(tunnels.length).toBeGreaterThan(0);
      expect(new Set(tunnels)).toEqual(new Set([new URL(cluster.server).host]));

      const misnamed = { ...cluster, 'tls-server-name': 'not-the-apiserver.example' };
      const wrong = new HttpClient(
        loadKubeConfig({ kubeconfig: writeConfig('misnamed', { token }, misnamed) }),
      );
      await expect(wrong.list(ConfigMapKind, { namespace: 'default' })).rejects.toThrow(/not-the-apiserver/);
      wrong.close();
    } finally {
      proxy.closeAllConnections();
      proxy.close();
    }
  });

  it('connects with an exec plugin, run once while its credential is valid and again after expiry or a 401', async () => {
    const counter = path.join(dir, 'exec-runs');
    const answer = path.join(dir, 'exec-answer');
    const plugin = path.join(dir, 'plugin.mjs');
    writeFileSync(
      plugin,
      [
        '#!/usr/bin/env node',
        "import { appendFileSync, readFileSync } from 'node:fs';",
        `appendFileSync(${JSON.stringify(counter)}, 'run\\n');`,
        `const { token, ttlMs } = JSON.parse(readFileSync(${JSON.stringify(answer)}, 'utf8'));`,
        'const status = { token };',
        'if (ttlMs) status.expirationTimestamp = new Date(Date.now() + ttlMs).toISOString();',
        "process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status }));",
      ].join('\n'),
    );
    chmodSync(plugin, 0o755);
    const runs = () => readFileSync(counter, 'utf8').trim().split('\n').length;
    const exec = {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: './plugin.mjs',
      interactiveMode: 'Never',
    };
    // A relative command with a `/`: resolved against the kubeconfig's directory.
    const file = writeConfig('exec', { exec });

    writeFileSync(answer, JSON.stringify({ token }));
    const config = loadKubeConfig({ kubeconfig: file });
    await reconcilesWith(config);
    // The manager's lists, watches and writes all went out on the one credential.
    expect(runs()).toBe(1);

    // A credential the API server refuses: the request fails with 401, and the next one runs the plugin again.
    const client = new HttpClient(loadKubeConfig({ kubeconfig: file }));
    writeFileSync(answer, JSON.stringify({ token: 'revoked' }));
    const failure = await client.list(ConfigMapKind, { namespace: 'default' }).catch((err: unknown) => err);
    expect(failure instanceof ApiError && failure.statusCode).toBe(401);
    expect(runs()).toBe(2);
    writeFileSync(answer, JSON.stringify({ token, ttlMs: 2_000 }));
    await client.list(ConfigMapKind, { namespace: 'default' });
    await client.list(ConfigMapKind, { namespace: 'default' });
    expect(runs()).toBe(3);

    // Expired: run again.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    await client.list(ConfigMapKind, { namespace: 'default' });
    expect(runs()).toBe(4);
    client.close();
  });
});
