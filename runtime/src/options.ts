/**
 * The manager's options, one group per component as controller-runtime's `manager.Options{Cache, Client,
 * Metrics, WebhookServer, LeaderElection, Controller}`, and `withDefaults`, the one place their defaults
 * are applied: the manager resolves its options with it and hands the components resolved values, so no
 * component below it defaults them again. Every field says its default; docs/runtime-api.md tabulates them.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { CacheOptions, InformerFactory, KindSelector } from './cache.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, type Client, type ClientOptions } from './client.js';
import { realClock, type Clock } from './clock.js';
import type { ControllerDefaults } from './controller.js';
import type { ResourceKind } from './kinds.js';
import type { RestConfig } from './kubeconfig.js';
import type { LeaderElectionOptions } from './leaderelection.js';
import { createLogger, type Logger } from './logger.js';
import type { MetricsOptions } from './metrics-server.js';
import type { TracerProviderLike, TracingOptions } from './tracing.js';
import type { WebhookServerOptions } from './webhook/index.js';

export interface ManagerOptions {
  /**
   * The API server and the credentials: a RestConfig (`loadKubeConfig({ context })`) or a client-node
   * KubeConfig (envtest's). Default: `loadKubeConfig()`: the files of KUBECONFIG, else the in-cluster
   * service account, else ~/.kube/config.
   */
  kubeConfig?: RestConfig | KubeConfig;
  /** The informer cache controllers and `mgr.client` read: what it holds, how it lists. Default: CacheOptions's. */
  cache?: CacheOptions;
  /** Requests to the API server: their timeout, and kinds read without the cache. Default: ClientOptions's. */
  client?: ClientOptions;
  /** The /metrics server: address, HTTPS with authentication, and its bounds. Default: MetricsOptions's. */
  metrics?: MetricsOptions;
  /** `host:port` of /healthz and /readyz; `'0'` turns them off. Default: `:8081`. */
  healthProbeBindAddress?: string;
  /**
   * The webhook server (its defaults: port 9443, controller-runtime's certificate directory, and each of
   * its bounds). It starts only when webhooks are registered on `mgr.webhookServer`. Default:
   * WebhookServerOptions's.
   */
  webhookServer?: Omit<WebhookServerOptions, 'logger' | 'metrics' | 'tracing'>;
  /** Run the controllers on one replica at a time. Default: off. */
  leaderElection?: LeaderElectionOptions;
  /** What every controller gets unless its builder says otherwise. Default: ControllerDefaults's. */
  controller?: ControllerDefaults;
  /**
   * OpenTelemetry spans of reconciles, API calls and webhook requests. Default: off, unless a
   * `tracerProvider` is given (see TracingOptions).
   */
  tracing?: TracingOptions;
  /**
   * How long in-flight reconciles may run after a stop is requested; a pod's
   * terminationGracePeriodSeconds must exceed it. Default: 30 000 ms.
   */
  gracefulShutdownTimeoutMs?: number;
  /** Stop on SIGTERM and SIGINT. Default: true. */
  handleSignals?: boolean;
  /** Default: JSON lines on stdout at `info` (createLogger()). */
  logger?: Logger;
  /** Timers and time (tests). Default: realClock. */
  clock?: Clock;
  /**
   * Makes the client `mgr.apiReader` reads with and every write of `mgr.client` goes to, instead of an
   * HttpClient on the kubeconfig (tests). Default: none.
   */
  newClient?: () => Client;
  /** Makes each kind's informer, instead of a Reflector on the API server (tests). Default: none. */
  newInformer?: InformerFactory;
}

/** ManagerOptions with every default applied: what `withDefaults` returns and the manager runs on. */
export interface ManagerConfig {
  kubeConfig: RestConfig | KubeConfig | undefined;
  cache: {
    namespace: string | undefined;
    byObject: readonly KindSelector[];
    streamingList: boolean;
    listPageSize: number;
    warnOnUndeclaredInformer: boolean;
    readerFailOnMissingInformer: boolean;
  };
  client: { timeoutMs: number; disableCacheFor: readonly ResourceKind<unknown>[] };
  metrics: MetricsOptions & { bindAddress: string; secureServing: boolean; enableHttp2: boolean };
  healthProbeBindAddress: string;
  webhookServer: Omit<WebhookServerOptions, 'logger' | 'metrics' | 'tracing'>;
  leaderElection: Required<Omit<LeaderElectionOptions, 'id' | 'namespace' | 'identity'>> &
    Pick<LeaderElectionOptions, 'id' | 'namespace' | 'identity'>;
  controller: Required<ControllerDefaults>;
  tracing: { enabled: boolean; tracerProvider: TracerProviderLike | undefined };
  gracefulShutdownTimeoutMs: number;
  handleSignals: boolean;
  logger: Logger;
  clock: Clock;
  newClient: (() => Client) | undefined;
  newInformer: InformerFactory | undefined;
}

/** How long stop() waits for in-flight reconciles; a pod's terminationGracePeriodSeconds must exceed it. */
export const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS = 30_000;

/**
 * `options` with every default applied, in one place. The webhook server's bounds and the metrics
 * server's own (timeouts, connections, TLS, reviews) are those servers' to default: they are kept as
 * given, and each server says its defaults on its options.
 */
export function withDefaults(options: ManagerOptions = {}): ManagerConfig {
  const {
    cache = {},
    client = {},
    metrics = {},
    leaderElection = {},
    controller = {},
    tracing = {},
  } = options;
  return {
    kubeConfig: options.kubeConfig,
    cache: {
      namespace: cache.namespace || undefined,
      byObject: cache.byObject ?? [],
      streamingList: cache.streamingList ?? true,
      listPageSize: cache.listPageSize ?? 500,
      warnOnUndeclaredInformer: cache.warnOnUndeclaredInformer ?? true,
      readerFailOnMissingInformer: cache.readerFailOnMissingInformer ?? false,
    },
    client: {
      timeoutMs: client.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      disableCacheFor: client.disableCacheFor ?? [],
    },
    metrics: {
      ...metrics,
      bindAddress: metrics.bindAddress ?? ':8080',
      secureServing: metrics.secureServing ?? false,
      enableHttp2: metrics.enableHttp2 ?? false,
    },
    healthProbeBindAddress: options.healthProbeBindAddress ?? ':8081',
    webhookServer: options.webhookServer ?? {},
    leaderElection: {
      ...leaderElection,
      enabled: leaderElection.enabled ?? false,
      leaseDurationMs: leaderElection.leaseDurationMs ?? 15_000,
      renewDeadlineMs: leaderElection.renewDeadlineMs ?? 10_000,
      retryPeriodMs: leaderElection.retryPeriodMs ?? 2_000,
      releaseOnCancel: leaderElection.releaseOnCancel ?? true,
    },
    controller: {
      maxConcurrentReconciles: controller.maxConcurrentReconciles ?? 1,
      cacheSyncTimeoutMs: controller.cacheSyncTimeoutMs ?? 120_000,
    },
    tracing: {
      enabled: tracing.enabled ?? tracing.tracerProvider !== undefined,
      tracerProvider: tracing.tracerProvider,
    },
    gracefulShutdownTimeoutMs: options.gracefulShutdownTimeoutMs ?? DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS,
    handleSignals: options.handleSignals ?? true,
    logger: options.logger ?? createLogger(),
    clock: options.clock ?? realClock,
    newClient: options.newClient,
    newInformer: options.newInformer,
  };
}
