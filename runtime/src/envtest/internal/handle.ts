/**
 * What startEnvtest resolves with: the handle on a running control plane (ControlPlane.handle makes it).
 * Here, below the package's public face, so that the internal modules that make it need not import it.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { FakeNode } from './nodes.js';
import type { LocalWebhookServing } from './webhooks.js';

export interface Envtest {
  /** Admin credentials (group system:masters) for the apiserver. */
  kubeConfig: KubeConfig;
  /** The same as a kubeconfig file, for kubectl or a manager in another process. Removed by stop(). */
  kubeconfigPath: string;
  /** `https://127.0.0.1:<port>` */
  server: string;
  /** The temporary directory: etcd data, certificates, credentials, logs. Removed by stop(). */
  directory: string;
  /**
   * With webhookInstallOptions: where the webhook server must listen (host, port) and the certificate
   * directory it must serve from, as `Manager.create({ webhookServer: { host, port, certDir } })` takes.
   */
  webhook: LocalWebhookServing | undefined;
  /** Process ids, for tests that check nothing is left behind; the last three in cluster mode only. */
  pids: {
    etcd: number;
    apiServer: number;
    guard: number;
    controllerManager?: number;
    scheduler?: number;
    kwok?: number;
  };
  /** Cluster mode: the names of the fake nodes, in the order they were added. Otherwise empty. */
  readonly nodes: string[];
  /**
   * Cluster mode: adds a fake node and resolves with its name once it is Ready and schedulable. DaemonSets
   * then put their pods on it, as on a machine joining a cluster.
   */
  addNode(node?: FakeNode): Promise<string>;
  /**
   * Cluster mode: deletes a fake node's Node object, waits until it is gone, then deletes the pods bound to
   * it at once, as a machine that vanished (a cluster's pod garbage collector would take 40-75 s). Their
   * controllers replace them on the other nodes.
   */
  removeNode(name: string): Promise<void>;
  /** Stops every process and removes the directory. Safe to call more than once. */
  stop(): Promise<void>;
  /**
   * Stops kube-apiserver only: etcd keeps the data, clients get connection errors. For tests of what an
   * operator does while the API server is away. SIGTERM, then SIGKILL after stopTimeoutMs (a kube-apiserver
   * that has served a watch often takes all of it to exit); `{ kill: true }` sends SIGKILL at once, as a
   * crash. `pids.apiServer` is the stopped process until startApiServer().
   */
  stopApiServer(options?: { kill?: boolean }): Promise<void>;
  /**
   * Starts kube-apiserver again on the same port, etcd, serving certificate and credentials (kubeConfig
   * stays valid); resolves once `/readyz` answers ok. Its watch cache starts empty, as after a real restart.
   */
  startApiServer(): Promise<void>;
  /** stopApiServer(options), then startApiServer(). */
  restartApiServer(options?: { kill?: boolean }): Promise<void>;
}
