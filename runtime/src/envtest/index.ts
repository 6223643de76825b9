/**
 * envtest: a real etcd and kube-apiserver for tests, the TypeScript counterpart of controller-runtime's
 * `pkg/envtest`. No controllers, no nodes: objects are stored, validated, defaulted and watched exactly as in
 * a cluster, but Deployments never get pods and nothing is garbage-collected.
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
import type { KubeConfig, V1CustomResourceDefinition } from '@kubernetes/client-node';
import { findBinaryAssets } from './binaries.js';
import { ControlPlane, type ControlPlaneOptions } from './internal/control-plane.js';
import { installCrds, readCrds } from './internal/crds.js';
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
  cachedAssetsDirectory,
  DEFAULT_K8S_VERSION,
  EnvtestBinariesNotFoundError,
  findBinaryAssets,
} from './binaries.js';

export interface EnvtestOptions {
  /** Directories (their `.yaml`, `.yml`, `.json` files) or files holding CRDs to install. Default: none. */
  crdDirectoryPaths?: string[];
  /** CRD objects to install besides those files. Default: none. */
  crds?: V1CustomResourceDefinition[];
  /**
   * Fail when a path of crdDirectoryPaths does not exist. Default: true (Go's envtest defaults to false; a
   * mistyped path should not pass silently with no CRDs).
   */
  errorIfCrdPathMissing?: boolean;
  /**
   * The directory holding `etcd` and `kube-apiserver`. Default: KUBEBUILDER_ASSETS when it holds them, else
   * the cache `npx kubesmith envtest` fills.
   */
  binaryAssetsDirectory?: string;
  /** Extra kube-apiserver flags (`--name=value`); a later value of a flag overrides the default. Default: none. */
  apiServerArgs?: string[];
  /** Extra etcd flags. Default: none. */
  etcdArgs?: string[];
  /** Time allowed for the apiserver to be ready and the CRDs Established, in ms. Default: 60_000. */
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
  /** Process ids, for tests that check nothing is left behind. */
  pids: { etcd: number; apiServer: number; guard: number };
  /** Stops both processes and removes the directory. Safe to call more than once. */
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

function withDefaults(options: EnvtestOptions): ControlPlaneOptions {
  return {
    crdDirectoryPaths: options.crdDirectoryPaths ?? [],
    crds: options.crds ?? [],
    errorIfCrdPathMissing: options.errorIfCrdPathMissing ?? true,
    binaryAssetsDirectory: findBinaryAssets(options.binaryAssetsDirectory),
    apiServerArgs: options.apiServerArgs ?? [],
    etcdArgs: options.etcdArgs ?? [],
    startTimeoutMs: options.startTimeoutMs ?? 60_000,
    stopTimeoutMs: options.stopTimeoutMs ?? 10_000,
    tmpDir: options.tmpDir ?? os.tmpdir(),
  };
}

/** Starts etcd and kube-apiserver, installs the CRDs, and returns admin credentials and stop(). */
export async function startEnvtest(options: EnvtestOptions = {}): Promise<Envtest> {
  const o = withDefaults(options);
  // Read the CRDs first: a bad file fails before any process starts.
  let crds = [...readCrds(o.crdDirectoryPaths, o.errorIfCrdPathMissing), ...o.crds];
  const webhookOptions = options.webhookInstallOptions;
  const webhooks = webhookOptions && readWebhookConfigurations(webhookOptions, o.errorIfCrdPathMissing);
  const plane = new ControlPlane(o);
  let serving: LocalWebhookServing | undefined;
  try {
    if (webhookOptions && webhooks) {
      serving = await prepareLocalServing(plane.directory, webhookOptions);
      crds = withConversionWebhooks(crds, webhookOptions.conversionCrdNames ?? [], serving);
    }
    await plane.start();
    await installCrds(
      plane.kubeConfig,
      crds,
      Math.max(o.startTimeoutMs - (Date.now() - plane.startedAt), 5_000),
    );
    if (serving && webhooks) {
      await installWebhookConfigurations(plane.kubeConfig, pointAtLocalServer(webhooks, serving));
    }
  } catch (error) {
    await plane.stop();
    throw error;
  }
  return plane.handle(serving);
}
