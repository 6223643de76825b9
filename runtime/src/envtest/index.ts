/**
 * envtest: a real etcd and kube-apiserver for tests, the TypeScript counterpart of controller-runtime's
 * `pkg/envtest`. No controllers, no nodes: objects are stored, validated, defaulted and watched exactly as in
 * a cluster, but Deployments never get pods and nothing is garbage-collected.
 *
 * Cluster mode (`controllers: true`) goes further than Go's envtest: kube-controller-manager, kube-scheduler
 * and KWOK with fake nodes join, so Deployments get pods that are scheduled and reported Running and Ready,
 * owner references are garbage-collected and namespaces finish deleting. No container runs.
 *
 * ```ts
 * const env = await startEnvtest({ crdDirectoryPaths: ['config/crd/bases'] });
 * try {
 *   const client = env.kubeConfig.makeApiClient(CoreV1Api);
 *   // ...
 * } finally {
 *   await env.stop();
 * }
 * ```
 *
 * Nothing is left behind: stop() kills both processes and removes the temporary directory; if the test
 * process exits or is interrupted first, process handlers do it; if it is killed outright (SIGKILL), a small
 * guard process notices its pipe close and does it.
 */
import os from 'node:os';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { findBinaryAssets } from './binaries.js';
import { Cluster } from './internal/cluster.js';
import { ControlPlane, type ControlPlaneOptions } from './internal/control-plane.js';
import { installCrds, readCrds } from './internal/crds.js';
import type { Envtest } from './internal/handle.js';
import { planNodes, type FakeNode } from './internal/nodes.js';
import {
  installWebhookConfigurations,
  pointAtLocalServer,
  prepareLocalServing,
  readWebhookConfigurations,
  withConversionWebhooks,
  type LocalWebhookServing,
  type WebhookInstallOptions,
} from './internal/webhooks.js';

export type { LocalWebhookServing, WebhookInstallOptions } from './internal/webhooks.js';
export { binaryAssetsOrSkip, envtestRequired, type SkipOptions } from './skip.js';
export {
  createNamespace,
  installWebhooks,
  sharedEnvtestFrom,
  type GroupResource,
  type ProvidedEnvtest,
  type SharedEnvtest,
  type InstalledWebhooks,
  type InstallWebhooksOptions,
} from './shared.js';
export type { FakeNode } from './internal/nodes.js';
export type { Envtest } from './internal/handle.js';

export {
  cachedAssetsDirectory,
  CONTROLLER_BINARIES,
  DEFAULT_K8S_VERSION,
  EnvtestBinariesNotFoundError,
  findBinaryAssets,
} from './binaries.js';

export interface EnvtestOptions {
  /** Directories (their `.yaml`, `.yml`, `.json` files) or files holding CRDs to install. Default: none. */
  crdDirectoryPaths?: string[];
  /**
   * CRDs to install besides those files, as the apiserver reads them: the keys of a YAML or JSON file
   * (`default`, `enum`, `x-kubernetes-*`). client-node's model property names (`x_kubernetes_*`, `_default`)
   * are unknown fields to the apiserver, and fail the start with their name. Default: none.
   */
  crds?: object[];
  /**
   * Fail when a path of crdDirectoryPaths does not exist. Default: true (Go's envtest defaults to false; a
   * mistyped path should not pass silently with no CRDs).
   */
  errorIfCrdPathMissing?: boolean;
  /**
   * The directory holding `etcd` and `kube-apiserver` (and, with `controllers`, `kube-controller-manager`,
   * `kube-scheduler` and `kwok`). Default: KUBEBUILDER_ASSETS when it holds them, else the cache
   * `npx kubesmith envtest` (`--with-controllers`) fills.
   */
  binaryAssetsDirectory?: string;
  /**
   * Cluster mode: also run kube-controller-manager (every default controller: Deployments, ReplicaSets,
   * DaemonSets, Jobs, garbage collection, namespaces, service accounts, EndpointSlices ...), kube-scheduler,
   * and KWOK, which keeps fake nodes Ready and reports their pods Running and Ready (no container runs).
   * startEnvtest returns once every node is Ready and schedulable and the `default` ServiceAccount exists.
   * The ServiceAccount admission plugin stays on. Needs `npx kubesmith envtest --with-controllers`.
   * Default: false (Go's envtest: etcd and kube-apiserver only).
   */
  controllers?: boolean;
  /**
   * The fake nodes of cluster mode: a count (named `node-1`, `node-2` ...) or one entry per node with its
   * name, labels, taints and capacity. More can be added later with `env.addNode()`. Only with
   * `controllers: true`. Default: 1.
   */
  nodes?: number | FakeNode[];
  /** Extra kube-controller-manager flags (cluster mode). Default: none. */
  controllerManagerArgs?: string[];
  /** Extra kube-scheduler flags (cluster mode). Default: none. */
  schedulerArgs?: string[];
  /** Extra kwok flags (cluster mode). Default: none. */
  kwokArgs?: string[];
  /** Extra kube-apiserver flags (`--name=value`); a later value of a flag overrides the default. Default: none. */
  apiServerArgs?: string[];
  /** Extra etcd flags. Default: none. */
  etcdArgs?: string[];
  /**
   * Time allowed for the apiserver to be ready and the CRDs Established (in cluster mode also the nodes
   * Ready), in ms; also what addNode() and removeNode() may take. Default: 60_000.
   */
  startTimeoutMs?: number;
  /** Time allowed for each process to stop after SIGTERM before SIGKILL, in ms. Default: 10_000. */
  stopTimeoutMs?: number;
  /** Where the temporary directory is created. Default: os.tmpdir(). */
  tmpDir?: string;
  /**
   * Webhooks the test process serves: envtest makes a CA and serving certificate, points the webhook
   * configurations (and the conversion of the named CRDs) at `https://127.0.0.1:<free port>`, installs
   * them, and returns where to listen in `Envtest.webhook`. Default: no webhooks.
   */
  webhookInstallOptions?: WebhookInstallOptions;
}

function withDefaults(options: EnvtestOptions): ControlPlaneOptions {
  const controllers = options.controllers ?? false;
  for (const name of ['nodes', 'controllerManagerArgs', 'schedulerArgs', 'kwokArgs'] as const) {
    if (!controllers && options[name] !== undefined) {
      throw new Error(`envtest: ${name} needs controllers: true (cluster mode)`);
    }
  }
  return {
    controllers,
    crdDirectoryPaths: options.crdDirectoryPaths ?? [],
    // Documents, sent as they are; envtest reads only names that both forms share (metadata, spec.names).
    crds: (options.crds ?? []) as V1CustomResourceDefinition[],
    errorIfCrdPathMissing: options.errorIfCrdPathMissing ?? true,
    binaryAssetsDirectory: findBinaryAssets(options.binaryAssetsDirectory, { controllers }),
    apiServerArgs: options.apiServerArgs ?? [],
    etcdArgs: options.etcdArgs ?? [],
    startTimeoutMs: options.startTimeoutMs ?? 60_000,
    stopTimeoutMs: options.stopTimeoutMs ?? 10_000,
    tmpDir: options.tmpDir ?? os.tmpdir(),
  };
}

/**
 * Starts etcd and kube-apiserver (in cluster mode also the controllers, the scheduler, kwok and the fake
 * nodes), installs the CRDs, and returns admin credentials and stop().
 */
export async function startEnvtest(options: EnvtestOptions = {}): Promise<Envtest> {
  const o = withDefaults(options);
  const nodes = o.controllers ? planNodes(options.nodes ?? 1) : [];
  // Read the CRDs first: a bad file fails before any process starts.
  let crds = [...readCrds(o.crdDirectoryPaths, o.errorIfCrdPathMissing), ...o.crds];
  const webhookOptions = options.webhookInstallOptions;
  const webhooks = webhookOptions && readWebhookConfigurations(webhookOptions, o.errorIfCrdPathMissing);
  const plane = new ControlPlane(o);
  let serving: LocalWebhookServing | undefined;
  let cluster: Cluster | undefined;
  try {
    if (webhookOptions && webhooks) {
      serving = await prepareLocalServing(plane.directory, webhookOptions);
      crds = withConversionWebhooks(crds, webhookOptions.conversionCrdNames ?? [], serving);
    }
    await plane.start();
    // The CRDs before the controllers: kube-controller-manager's garbage collector learns the kinds it
    // watches from discovery, at its start and then every 30 s. A custom kind that appears after its start
    // is not watched for up to 30 s, and deleting an owner of that kind would leave its dependents.
    await installCrds(
      plane.access(),
      crds,
      Math.max(o.startTimeoutMs - (Date.now() - plane.startedAt), 5_000),
    );
    if (o.controllers) {
      cluster = new Cluster(plane, {
        controllerManagerArgs: options.controllerManagerArgs ?? [],
        schedulerArgs: options.schedulerArgs ?? [],
        kwokArgs: options.kwokArgs ?? [],
      });
      cluster.start();
      // The Node objects go in while the programs start; kwok picks them up once it watches.
      for (const { name, node } of nodes) await cluster.createNode({ ...node, name });
    }
    if (serving && webhooks) {
      await installWebhookConfigurations(plane.access(), pointAtLocalServer(webhooks, serving));
    }
    await cluster?.ready(
      nodes.map((n) => n.name),
      plane.startedAt + o.startTimeoutMs,
    );
  } catch (error) {
    await plane.stop();
    throw error;
  }
  return plane.handle(serving, cluster);
}
