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
import {
  DEFAULT_HANDSHAKE_TIMEOUT_MS,
  DEFAULT_TLS_MIN_VERSION,
  FORWARD_SECRET_CIPHERS,
} from './internal/tls-policy.js';
import type { RestConfig } from './kubeconfig.js';
import type { LeaderElectionOptions } from './leaderelection.js';
import { createLogger, type Logger } from './logger.js';
import { Metrics } from './metrics.js';
import type { MetricsOptions } from './metrics-server.js';
import type { TracerProviderLike, Tracing, TracingOptions } from './tracing.js';
import { DEFAULT_WEBHOOK_PORT, type WebhookServerOptions } from './webhook/server.js';
import { nodeOs, nodePath as path } from './internal/node-modules.js';

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
  /** The /metrics server: address, HTTPS with authentication, and its bounds. Default: metricsConfig's. */
  metrics?: MetricsOptions;
  /** `host:port` of /healthz and /readyz; `'0'` turns them off. Default: `:8081`. */
  healthProbeBindAddress?: string;
  /**
   * The webhook server: its port, certificate directory, bounds and TLS. It starts only when webhooks are
   * registered on `mgr.webhookServer`. Default: webhookServerConfig's (port 9443, controller-runtime's
   * certificate directory...).
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
  /**
   * Makes each kind's informer, instead of a Reflector on the API server (tests). With
   * `client.readYourWrites` (the default), a cached read after a write of `mgr.client` waits until the
   * informer reports the written object (`informer.apply(...)` of a ManualInformer), at most
   * `client.readYourWritesTimeoutMs`. Default: none.
   */
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
  client: {
    timeoutMs: number;
    disableCacheFor: readonly ResourceKind<unknown>[];
    readYourWrites: boolean;
    readYourWritesTimeoutMs: number;
  };
  metrics: MetricsConfig;
  healthProbeBindAddress: string;
  webhookServer: Omit<WebhookServerConfig, 'logger' | 'metrics' | 'tracing'>;
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

/** The metrics server's options resolved: every one has its value; no certDir is a self-signed certificate. */
export type MetricsConfig = Required<Omit<MetricsOptions, 'certDir'>> & { certDir: string | undefined };

/** The webhook server's options resolved: what `new WebhookServer` takes. No host is every interface. */
export type WebhookServerConfig = Required<Omit<WebhookServerOptions, 'host' | 'tracing'>> & {
  host: string | undefined;
  tracing: Tracing | undefined;
};

/** How long stop() waits for in-flight reconciles; a pod's terminationGracePeriodSeconds must exceed it. */
export const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS = 30_000;

/**
 * The webhook server's options with every default applied (each is said on WebhookServerOptions too):
 * the manager's `webhookServer` through withDefaults, or a server of your own: `new
 * WebhookServer(webhookServerConfig({ logger, metrics: mgr.metrics }))`.
 */
export function webhookServerConfig(options: WebhookServerOptions = {}): WebhookServerConfig {
  return {
    ...webhookServingConfig(options),
    logger: options.logger ?? createLogger(),
    metrics: options.metrics ?? new Metrics(),
    tracing: options.tracing,
  };
}

/**
 * The webhook server's serving options with their defaults, without its logger, metrics and tracing: the
 * manager gives it its own, so withDefaults must not make the default ones (a default logger looks at
 * stderr, which loads Node's streams and net, a few ms of every manager's start).
 */
function webhookServingConfig(
  options: Omit<WebhookServerOptions, 'logger' | 'metrics' | 'tracing'>,
): ManagerConfig['webhookServer'] {
  return {
    host: options.host,
    port: options.port ?? DEFAULT_WEBHOOK_PORT,
    // controller-runtime's certificate directory.
    certDir: options.certDir ?? path.join(nodeOs().tmpdir(), 'k8s-webhook-server', 'serving-certs'),
    certName: options.certName ?? 'tls.crt',
    keyName: options.keyName ?? 'tls.key',
    // controller-runtime's certwatcher interval.
    certPollIntervalMs: options.certPollIntervalMs ?? 10_000,
    // controller-runtime's: two objects of at most 3 MiB each and 1 MiB for the rest of the review.
    maxRequestBytes: options.maxRequestBytes ?? 7 * 1024 * 1024,
    // Under the apiserver's default timeoutSeconds of 10: it gets the server's clear answer, not its own.
    requestTimeoutMs: options.requestTimeoutMs ?? 9_000,
    handshakeTimeoutMs: options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS,
    headersTimeoutMs: options.headersTimeoutMs ?? 10_000,
    readTimeoutMs: options.readTimeoutMs ?? 30_000,
    keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? 30_000,
    // A stopping pod's endpoint leaves the Service within about a second where kube-proxy syncs every second.
    shutdownDelayMs: options.shutdownDelayMs ?? 5_000,
    maxConnections: options.maxConnections ?? 256,
    maxConcurrentRequests: options.maxConcurrentRequests ?? 64,
    // Three reviews at the 7 MiB cap, within the generated manager's 96 MiB heap.
    maxInFlightBytes: options.maxInFlightBytes ?? 24 * 1024 * 1024,
    tlsMinVersion: options.tlsMinVersion ?? DEFAULT_TLS_MIN_VERSION,
    tlsCiphers: options.tlsCiphers ?? FORWARD_SECRET_CIPHERS,
    enableHttp2: options.enableHttp2 ?? false,
  };
}

/** The metrics server's options with every default applied (each is said on MetricsOptions too). */
export function metricsConfig(options: MetricsOptions = {}): MetricsConfig {
  return {
    bindAddress: options.bindAddress ?? ':8080',
    secureServing: options.secureServing ?? false,
    enableHttp2: options.enableHttp2 ?? false,
    certDir: options.certDir,
    certName: options.certName ?? 'tls.crt',
    keyName: options.keyName ?? 'tls.key',
    handshakeTimeoutMs: options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS,
    headersTimeoutMs: options.headersTimeoutMs ?? 10_000,
    readTimeoutMs: options.readTimeoutMs ?? 30_000,
    // controller-runtime's IdleTimeout: a scrape every minute keeps its connection.
    keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? 90_000,
    maxConnections: options.maxConnections ?? 64,
    tlsMinVersion: options.tlsMinVersion ?? DEFAULT_TLS_MIN_VERSION,
    tlsCiphers: options.tlsCiphers ?? FORWARD_SECRET_CIPHERS,
    // controller-runtime's review timeout and its CacheTTL, AllowCacheTTL and DenyCacheTTL.
    reviewTimeoutMs: options.reviewTimeoutMs ?? 10_000,
    maxConcurrentReviews: options.maxConcurrentReviews ?? 8,
    authenticationCacheTtlMs: options.authenticationCacheTtlMs ?? 60_000,
    authenticationFailureCacheTtlMs: options.authenticationFailureCacheTtlMs ?? 10_000,
    authorizationAllowCacheTtlMs: options.authorizationAllowCacheTtlMs ?? 300_000,
    authorizationDenyCacheTtlMs: options.authorizationDenyCacheTtlMs ?? 30_000,
    maxCachedReviews: options.maxCachedReviews ?? 1024,
  };
}

/**
 * `options` with every default applied, in one place: the manager's own here, its metrics and webhook
 * servers' in metricsConfig and webhookServerConfig above. The servers take these resolved values and
 * default nothing again.
 */
export function withDefaults(options: ManagerOptions = {}): ManagerConfig {
  const { cache = {}, client = {}, leaderElection = {}, controller = {}, tracing = {} } = options;
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
      readYourWrites: client.readYourWrites ?? true,
      readYourWritesTimeoutMs: client.readYourWritesTimeoutMs ?? 5_000,
    },
    metrics: metricsConfig(options.metrics),
    healthProbeBindAddress: options.healthProbeBindAddress ?? ':8081',
    webhookServer: webhookServingConfig(options.webhookServer ?? {}),
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
      usePriorityQueue: controller.usePriorityQueue ?? true,
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
