/**
 * One running etcd + kube-apiserver (and, in cluster mode, the programs that join them), its temporary
 * directory, and how it is stopped and cleaned up.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import path from 'node:path';
import { KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import type { Envtest } from './handle.js';
import type { Cluster, ClusterHost } from './cluster.js';
import { Guard } from './guard.js';
import { freePorts } from './ports.js';
import type { LocalWebhookServing } from './webhooks.js';
import { ControlPlaneProcess, register, removeDirectory, unregister, type Cleanup } from './process.js';
import type { ApiAccess } from './rest.js';

/** The options of startEnvtest with their defaults applied. */
export interface ControlPlaneOptions {
  crdDirectoryPaths: string[];
  crds: V1CustomResourceDefinition[];
  errorIfCrdPathMissing: boolean;
  binaryAssetsDirectory: string;
  apiServerArgs: string[];
  etcdArgs: string[];
  startTimeoutMs: number;
  stopTimeoutMs: number;
  tmpDir: string;
  /** Cluster mode: controllers, scheduler and kwok join, so the ServiceAccount admission plugin stays on. */
  controllers: boolean;
}

/** One running etcd + kube-apiserver and the directory they use. */
export class ControlPlane implements Cleanup, ClusterHost {
  readonly directory: string;
  readonly startedAt = Date.now();
  kubeConfig = new KubeConfig();
  private readonly guard: Guard;
  private readonly token = randomBytes(24).toString('hex');
  private processes: ControlPlaneProcess[] = [];
  /** Programs started by spawn() (cluster mode), stopped before kube-apiserver. */
  private components: ControlPlaneProcess[] = [];
  private server = '';
  private ca: Buffer | undefined;
  private apiServerArgs: string[] = [];
  private handleObject: Envtest | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: ControlPlaneOptions) {
    this.directory = mkdtempSync(path.join(options.tmpDir, 'kubesmith-envtest-'));
    this.guard = new Guard(this.directory);
    register(this);
  }

  async start(): Promise<void> {
    const dir = this.directory;
    // Admin credentials: a static token in group system:masters (simpler than client certificates). The
    // apiserver makes its own serving certificate.
    writeFileSync(path.join(dir, 'token.csv'), `${this.token},admin,admin,system:masters\n`, { mode: 0o600 });
    const { publicKey, privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    });
    writeFileSync(path.join(dir, 'sa.pub'), publicKey);
    writeFileSync(path.join(dir, 'sa.key'), privateKey, { mode: 0o600 });

    // Free ports can be taken by someone else between our probe and the bind: retry with new ones.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.startProcesses(attempt);
        break;
      } catch (error) {
        const portTaken = this.processes.some((p) => /address already in use/.test(p.logTail(50)));
        if (!portTaken || attempt >= 3) throw error;
        await Promise.all(this.processes.map((p) => p.stop(this.options.stopTimeoutMs)));
        this.processes = [];
      }
    }
  }

  private async startProcesses(attempt: number): Promise<void> {
    const { binaryAssetsDirectory: bin, startTimeoutMs } = this.options;
    const dir = this.directory;
    const [etcdClient, etcdPeer, securePort] = await freePorts(3);
    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    const peerUrl = `http://127.0.0.1:${etcdPeer}`;
    const etcd = new ControlPlaneProcess(
      'etcd',
      path.join(bin, 'etcd'),
      [
        `--data-dir=${path.join(dir, `etcd-${attempt}`)}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=default=${peerUrl}`,
        // Test data is thrown away: no fsync makes writes much faster.
        '--unsafe-no-fsync=true',
        ...this.options.etcdArgs,
      ],
      path.join(dir, 'etcd.log'),
      this.guard,
    );
    this.processes.push(etcd);
    const certDir = path.join(dir, 'certs');
    this.apiServerArgs = [
      `--etcd-servers=${etcdUrl}`,
      `--cert-dir=${certDir}`,
      `--secure-port=${securePort}`,
      '--bind-address=127.0.0.1',
      // Also puts 127.0.0.1 into the self-signed serving certificate.
      '--advertise-address=127.0.0.1',
      // Nothing outside this machine reaches the kubernetes Service's endpoints; and from 1.37 on, the lease
      // reconciler refuses a loopback advertise address ("may not be in the loopback range"), stopping the start.
      '--endpoint-reconciler-type=none',
      '--service-cluster-ip-range=10.0.0.0/24',
      '--allow-privileged=true',
      '--authorization-mode=RBAC',
      `--token-auth-file=${path.join(dir, 'token.csv')}`,
      '--service-account-issuer=https://localhost',
      `--service-account-key-file=${path.join(dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${path.join(dir, 'sa.key')}`,
      // As Go's envtest: no controller-manager creates the default ServiceAccount, so pods would be refused.
      // In cluster mode one does, and the plugin stays on as in a real cluster.
      ...(this.options.controllers ? [] : ['--disable-admission-plugins=ServiceAccount']),
      ...this.options.apiServerArgs,
    ];
    this.processes.push(this.spawnApiServer());

    this.server = `https://127.0.0.1:${securePort}`;
    const ca = await waitReady(
      this.server,
      path.join(certDir, 'apiserver.crt'),
      this.token,
      this.processes,
      this.startedAt + startTimeoutMs,
    );
    this.ca = ca;
    const kubeconfig = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'envtest',
          cluster: { server: this.server, 'certificate-authority-data': ca.toString('base64') },
        },
      ],
      users: [{ name: 'envtest-admin', user: { token: this.token } }],
      contexts: [{ name: 'envtest', context: { cluster: 'envtest', user: 'envtest-admin' } }],
      'current-context': 'envtest',
    };
    const text = JSON.stringify(kubeconfig, null, 2);
    writeFileSync(path.join(dir, 'kubeconfig'), text, { mode: 0o600 });
    this.kubeConfig = new KubeConfig();
    this.kubeConfig.loadFromString(text);
  }

  private spawnApiServer(): ControlPlaneProcess {
    return new ControlPlaneProcess(
      'kube-apiserver',
      path.join(this.options.binaryAssetsDirectory, 'kube-apiserver'),
      this.apiServerArgs,
      path.join(this.directory, 'kube-apiserver.log'),
      this.guard,
    );
  }

  get binaryAssetsDirectory(): string {
    return this.options.binaryAssetsDirectory;
  }

  /** Where and how to reach the apiserver as admin; only once start() has resolved. */
  access(): ApiAccess {
    if (!this.ca) throw new Error('envtest: the apiserver has not started');
    return { server: this.server, ca: this.ca, token: this.token };
  }

  /**
   * Starts `name` from the binary assets directory, logging to `<directory>/<name>.log`; it is stopped by
   * stop() before kube-apiserver, and killed by the exit handlers and the guard like the others.
   */
  spawn(name: string, args: string[], env?: NodeJS.ProcessEnv): ControlPlaneProcess {
    const child = new ControlPlaneProcess(
      name,
      path.join(this.options.binaryAssetsDirectory, name),
      args,
      path.join(this.directory, `${name}.log`),
      this.guard,
      env,
    );
    this.components.push(child);
    return child;
  }

  /** The running kube-apiserver: always the last process started. */
  private get apiServer(): ControlPlaneProcess | undefined {
    const last = this.processes.at(-1);
    return last?.name === 'kube-apiserver' ? last : undefined;
  }

  /**
   * Stops kube-apiserver (SIGTERM, then SIGKILL after stopTimeoutMs; with `kill`, SIGKILL at once); etcd
   * and its data stay.
   */
  async stopApiServer(options: { kill?: boolean } = {}): Promise<void> {
    if (this.stopping) throw new Error('envtest is stopped');
    const apiServer = this.apiServer;
    if (!apiServer || apiServer.exitStatus !== undefined) return;
    if (options.kill) await apiServer.kill();
    else await apiServer.stop(this.options.stopTimeoutMs);
  }

  /**
   * Starts kube-apiserver again with the same flags: same port, etcd, serving certificate and credentials,
   * so the KubeConfig stays valid. Resolves once /readyz answers ok.
   */
  async startApiServer(): Promise<void> {
    if (this.stopping) throw new Error('envtest is stopped');
    const current = this.apiServer;
    if (current && current.exitStatus === undefined) return;
    const etcd = this.processes.find((p) => p.name === 'etcd' && p.exitStatus === undefined);
    if (!etcd) throw new Error('etcd is not running');
    const apiServer = this.spawnApiServer();
    this.processes = [etcd, apiServer];
    if (this.handleObject) this.handleObject.pids.apiServer = apiServer.pid ?? 0;
    await waitReady(
      this.server,
      path.join(this.directory, 'certs', 'apiserver.crt'),
      this.token,
      this.processes,
      Date.now() + this.options.startTimeoutMs,
    );
  }

  handle(webhook?: LocalWebhookServing, cluster?: Cluster): Envtest {
    const [etcd, apiServer] = this.processes.slice(-2);
    const noCluster = (): Promise<never> =>
      Promise.reject(new Error('envtest: fake nodes need startEnvtest({ controllers: true })'));
    this.handleObject = {
      kubeConfig: this.kubeConfig,
      kubeconfigPath: path.join(this.directory, 'kubeconfig'),
      server: this.server,
      directory: this.directory,
      webhook,
      pids: {
        etcd: etcd?.pid ?? 0,
        apiServer: apiServer?.pid ?? 0,
        guard: this.guard.pid ?? 0,
        ...cluster?.pids,
      },
      get nodes() {
        return cluster?.nodeNames ?? [];
      },
      stop: () => this.stop(),
      stopApiServer: (options) => this.stopApiServer(options),
      startApiServer: () => this.startApiServer(),
      restartApiServer: async (options) => {
        await this.stopApiServer(options);
        await this.startApiServer();
      },
      addNode: cluster
        ? async (node = {}) => {
            this.assertRunning();
            const name = await cluster.createNode(node);
            await cluster.ready([name], Date.now() + this.options.startTimeoutMs);
            return name;
          }
        : noCluster,
      removeNode: cluster
        ? async (name) => {
            this.assertRunning();
            await cluster.deleteNode(name, Date.now() + this.options.startTimeoutMs);
          }
        : noCluster,
    };
    return this.handleObject;
  }

  private assertRunning(): void {
    if (this.stopping) throw new Error('envtest is stopped');
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      try {
        // The clients of the apiserver first (together: none depends on another), then the apiserver, so it
        // does not spend its shutdown retrying a vanished etcd.
        await Promise.all(this.components.map((p) => p.stop(this.options.stopTimeoutMs)));
        for (const p of [...this.processes].reverse()) await p.stop(this.options.stopTimeoutMs);
        removeDirectory(this.directory);
        this.guard.release();
      } finally {
        unregister(this);
      }
    })();
    return this.stopping;
  }

  async cleanupSoon(): Promise<void> {
    const all = [...this.components, ...this.processes];
    for (const p of all) p.killNow();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(all.map((p) => p.waitExit())),
      new Promise((resolve) => (timer = setTimeout(resolve, 2_000))),
    ]);
    clearTimeout(timer);
    this.cleanupNow();
  }

  cleanupNow(): void {
    for (const p of [...this.components, ...this.processes]) p.killNow();
    try {
      removeDirectory(this.directory);
    } catch {
      // The guard removes it once the processes are gone.
    }
  }
}

/**
 * Polls `/readyz` until it answers `ok`, verifying TLS with the certificate the apiserver wrote into its
 * cert dir. Returns that certificate (the CA for the kubeconfig). Fails early when a process exits.
 */
async function waitReady(
  server: string,
  certFile: string,
  token: string,
  processes: readonly ControlPlaneProcess[],
  deadline: number,
): Promise<Buffer> {
  let last = 'no answer yet';
  for (;;) {
    for (const p of processes) {
      if (p.exitStatus !== undefined) {
        throw new Error(
          `${p.name} exited (${p.exitStatus}) before the apiserver was ready; last lines of ${p.logFile}:\n${p.logTail()}`,
        );
      }
    }
    let ca: Buffer | undefined;
    try {
      ca = readFileSync(certFile);
    } catch {
      // not written yet
    }
    if (ca) {
      try {
        const { status, body } = await get(`${server}/readyz`, ca, token);
        if (status === 200 && body.trim() === 'ok') return ca;
        last = `/readyz answered ${status}: ${body.trim().split('\n').slice(-3).join(' ')}`;
      } catch (error) {
        last = (error as Error).message;
      }
    }
    if (Date.now() > deadline) {
      const apiServer = processes.find((p) => p.name === 'kube-apiserver');
      throw new Error(
        `kube-apiserver was not ready in time (${last}); last lines of its log:\n${apiServer?.logTail() ?? ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function get(url: string, ca: Buffer, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, headers: { Authorization: `Bearer ${token}` }, timeout: 2_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}
