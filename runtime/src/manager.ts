/**
 * The manager runs an operator: it shares informers between controllers, serves health probes and
 * metrics, starts every controller once the caches are synced, and stops gracefully on SIGTERM/SIGINT.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import type { ControllerHost } from './builder.js';
import {
  clientNodeInformerFactory,
  InformerCache,
  type Informer,
  type InformerFactory,
  type KindSelector,
} from './cache.js';
import { HttpClient, type Client, type Reader } from './client.js';
import { realClock, type Clock } from './clock.js';
import type { Controller } from './controller.js';
import { newEventRecorder, type EventRecorder } from './events.js';
import { DelegatingClient } from './internal/delegating-client.js';
import type { ResourceKind } from './kinds.js';
import { inClusterNamespace, LeaderElector } from './leaderelection.js';
import { createLogger, type Logger } from './logger.js';
import { Metrics, processRegistry } from './metrics.js';
import { MetricsServer, type MetricsServingOptions } from './metrics-server.js';
import { ProbeServer } from './probes.js';
import { WebhookServer, type WebhookServerOptions } from './webhook/index.js';

export interface ManagerOptions {
  /** Default: KUBECONFIG, ~/.kube/config, or the in-cluster service account. */
  kubeConfig?: KubeConfig;
  /** Watch and cache only this namespace (WATCH_NAMESPACE); all namespaces when absent. */
  namespace?: string;
  /**
   * Per kind, cache (and so watch and reconcile) only the objects matching these label and field
   * selectors, as controller-runtime's `cache.Options.ByObject`: an object that stops matching leaves the
   * cache as a delete event. Default: every object of every kind.
   */
  cacheSelectors?: KindSelector[];
  /**
   * Kinds `mgr.client` reads from the API server instead of the cache (controller-runtime's
   * `client.CacheOptions.DisableFor`): kinds too many or too large to cache, read seldom. Default: none.
   */
  clientDisableCacheFor?: ResourceKind<unknown>[];
  /**
   * How long every request to the API server but a watch (gets, lists, writes, leader election, events)
   * may wait for its answer before it fails with a RequestTimeoutError; a reconcile that meets one fails
   * and is requeued with backoff. A call can set its own (`{ timeoutMs }`). Default: 30 000 ms.
   */
  requestTimeoutMs?: number;
  /** `host:port` of /metrics; `'0'` turns it off. Default `:8080`. */
  metricsBindAddress?: string;
  /**
   * Serve /metrics over HTTPS to callers whose token a TokenReview authenticates and a SubjectAccessReview
   * allows `get` on `/metrics` (kubebuilder v4's scaffold turns this on). Default: false, as
   * controller-runtime's option.
   */
  metricsSecureServing?: boolean;
  /**
   * With metricsSecureServing: the directory of the serving certificate (tls.crt, tls.key), e.g.
   * cert-manager's Secret, read again when it changes. Default: a self-signed certificate made at start.
   */
  metricsCertDir?: string;
  /**
   * With metricsSecureServing, offer HTTP/2 on /metrics besides HTTP/1.1 (the webhook server's is
   * `webhookServer.enableHttp2`). Default: false, as kubebuilder's `--enable-http2`.
   */
  metricsEnableHttp2?: boolean;
  /**
   * The metrics server's other options, named as the webhook server's: its timeouts (handshake, headers,
   * request, idle), maxConnections, TLS policy, and the bounds and caches of its reviews. Every one has a
   * default (docs/runtime-api.md); metricsCertDir and metricsEnableHttp2, when set, win over theirs here.
   */
  metricsServer?: MetricsServingOptions;
  /** `host:port` of /healthz and /readyz; `'0'` turns them off. Default `:8081`. */
  healthProbeBindAddress?: string;
  /**
   * Run the controllers only while holding the coordination.k8s.io/v1 Lease `leaderElectionId`, so that
   * several replicas run with one active. Caches and probes run on every replica. Default: false.
   */
  leaderElection?: boolean;
  /** The Lease's name, such as `guestbook.example.com`. Required with leaderElection. */
  leaderElectionId?: string;
  /** The Lease's namespace. Default: the pod's namespace (from its service account); required outside a cluster. */
  leaderElectionNamespace?: string;
  /** How long a Lease holds without renewal before another replica takes it. Default: 15 000 ms. */
  leaseDurationMs?: number;
  /** How long the leader tries to renew before it gives up leadership (and stops). Default: 10 000 ms. */
  renewDeadlineMs?: number;
  /** How often replicas try to acquire, and the leader renews. Default: 2 000 ms. */
  retryPeriodMs?: number;
  /** Give the Lease up on a graceful stop, so that another replica takes over at once. Default: true. */
  leaderElectionReleaseOnCancel?: boolean;
  /** This replica's holderIdentity. Default: `<hostname>_<random uuid>`. */
  leaderElectionIdentity?: string;
  /** How long in-flight reconciles may run after a stop is requested. Default 30 000 ms. */
  gracefulShutdownTimeoutMs?: number;
  /** How long the caches may take to sync before start() fails, as a missing CRD or RBAC rule would. Default: 120 000 ms. */
  cacheSyncTimeoutMs?: number;
  /**
   * Informers stream their list: one watch with `sendInitialEvents` served from the API server's watch
   * cache, as client-go's informers do since Kubernetes 1.35 (WatchListClient). `false` reads it in pages
   * of 500 with continue tokens, as a server that refuses the stream (WatchList off; Kubernetes before
   * 1.27) is read anyway. Default: true.
   */
  streamingList?: boolean;
  /**
   * The webhook server's options (port 9443, controller-runtime's certificate directory by default). It
   * starts only when webhooks are registered on `mgr.webhookServer`.
   */
  webhookServer?: Omit<WebhookServerOptions, 'logger' | 'metrics'>;
  /** Stop on SIGTERM and SIGINT. Default true. */
  handleSignals?: boolean;
  logger?: Logger;
  /**
   * Instead of a client on the kubeconfig (tests): what `mgr.apiReader` reads and every write of
   * `mgr.client` goes to.
   */
  client?: Client;
  /** Instead of informers on the API server (tests). */
  informerFactory?: InformerFactory;
  clock?: Clock;
}

export class Manager implements ControllerHost {
  /**
   * The client for reconcilers (controller-runtime's `mgr.GetClient()`): `get` and `list` read from the
   * manager's informer cache (deep copies; a kind read for the first time gets an informer, which the
   * read waits to sync), writes go to the API server.
   */
  readonly client: Client;
  /** Reads straight from the API server (controller-runtime's `mgr.GetAPIReader()`), never cached. */
  readonly apiReader: Reader;
  /** Talks to the API server directly: leader election and events, and the writes of `client`. */
  private readonly apiClient: Client;
  /** The client this manager made (not one it was given): its kept-alive connections close on stop. */
  private readonly ownClient: HttpClient | undefined;
  readonly logger: Logger;
  /**
   * This manager's Prometheus metrics (its own prom-client Registry, served on /metrics): register your
   * own on `mgr.metrics.registry`, or get them made there by `mgr.metrics.counter(name, help, labels)`.
   */
  readonly metrics = new Metrics();
  /** Where admission and conversion webhooks are registered; served over TLS while the manager runs. */
  readonly webhookServer: WebhookServer;
  readonly clock: Clock;
  private readonly cache: InformerCache;
  /** Set with leaderElection: the controllers run only while it leads. */
  readonly leaderElector: LeaderElector | undefined;
  /**
   * Aborted the moment leadership is lost: `mgr.client` refuses writes from then on and aborts those in
   * flight, and every reconcile's `context.signal` is this signal.
   */
  private readonly fence = new AbortController();

  /** Aborted when this manager loses its leader election Lease (see ReconcileContext.signal). */
  get leadership(): AbortSignal {
    return this.fence.signal;
  }
  private lost: Error | undefined;
  private readonly controllers: Controller[] = [];
  private readonly recorders = new Map<string, EventRecorder>();
  private probeServer: ProbeServer | undefined;
  private metricsServer: MetricsServer | undefined;
  private readonly kubeConfig: KubeConfig | undefined;
  private readonly options: ManagerOptions;
  private state: 'new' | 'starting' | 'running' | 'stopping' | 'stopped' = 'new';
  private stopping: Promise<void> | undefined;
  private finished!: () => void;
  private readonly done = new Promise<void>((resolve) => (this.finished = resolve));
  private markReady!: () => void;
  private readonly readyPromise = new Promise<void>((resolve) => (this.markReady = resolve));
  private readonly signalHandler = (signal: NodeJS.Signals) => {
    this.logger.info('received signal, stopping', { signal });
    void this.stop();
  };
  /** Where the servers listen once started (port 0 binds a free port). */
  readonly addresses: { metrics?: AddressInfo; healthProbe?: AddressInfo } = {};

  static create(options: ManagerOptions = {}): Manager {
    return new Manager(options);
  }

  constructor(options: ManagerOptions = {}) {
    this.options = options;
    this.logger = options.logger ?? createLogger();
    this.clock = options.clock ?? realClock;
    this.webhookServer = new WebhookServer({
      ...options.webhookServer,
      logger: this.logger.child({ logger: 'webhook' }),
      metrics: this.metrics,
    });
    let kubeConfig = options.kubeConfig;
    const needsKubeConfig = !options.client || !options.informerFactory;
    if (!kubeConfig && needsKubeConfig) {
      kubeConfig = new KubeConfig();
      kubeConfig.loadFromDefault();
    }
    this.kubeConfig = kubeConfig;
    const timeouts = options.requestTimeoutMs !== undefined ? { timeoutMs: options.requestTimeoutMs } : {};
    if (!options.client) this.ownClient = new HttpClient(kubeConfig as KubeConfig, timeouts);
    this.apiClient = options.client ?? (this.ownClient as HttpClient);
    this.apiReader = this.apiClient;
    const factory =
      options.informerFactory ??
      clientNodeInformerFactory(kubeConfig as KubeConfig, this.logger, this.clock, {
        ...(options.requestTimeoutMs !== undefined ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
        ...(options.streamingList === false ? { streamingList: false } : {}),
      });
    this.cache = new InformerCache(factory, {
      ...(options.namespace ? { namespace: options.namespace } : {}),
      selectors: options.cacheSelectors ?? [],
      syncTimeoutMs: options.cacheSyncTimeoutMs ?? 120_000,
      clock: this.clock,
    });
    this.client = new DelegatingClient(
      this.cache,
      this.apiClient,
      options.clientDisableCacheFor,
      this.fence.signal,
    );
    this.leaderElector = options.leaderElection ? this.newLeaderElector(options) : undefined;
  }

  private newLeaderElector(options: ManagerOptions): LeaderElector {
    if (!options.leaderElectionId) {
      throw new Error('leaderElection needs leaderElectionId: the name of the Lease the replicas share');
    }
    const namespace = options.leaderElectionNamespace ?? inClusterNamespace();
    if (!namespace) {
      throw new Error(
        'unable to find the leader election namespace: not running in a cluster, set leaderElectionNamespace',
      );
    }
    return new LeaderElector({
      client: this.apiClient,
      name: options.leaderElectionId,
      namespace,
      identity: options.leaderElectionIdentity ?? `${os.hostname()}_${randomUUID()}`,
      ...(options.leaseDurationMs !== undefined ? { leaseDurationMs: options.leaseDurationMs } : {}),
      ...(options.renewDeadlineMs !== undefined ? { renewDeadlineMs: options.renewDeadlineMs } : {}),
      ...(options.retryPeriodMs !== undefined ? { retryPeriodMs: options.retryPeriodMs } : {}),
      ...(options.leaderElectionReleaseOnCancel !== undefined
        ? { releaseOnStop: options.leaderElectionReleaseOnCancel }
        : {}),
      logger: this.logger,
      clock: this.clock,
    });
  }

  /**
   * The event recorder of controller `name` (the events' reportingController), one per name. Events go
   * through events.k8s.io/v1: the operator's RBAC needs `create` and `patch` on `events` of that group.
   */
  getEventRecorderFor(name: string): EventRecorder {
    let recorder = this.recorders.get(name);
    if (!recorder) {
      recorder = newEventRecorder({ client: this.apiClient, name, logger: this.logger, clock: this.clock });
      this.recorders.set(name, recorder);
    }
    return recorder;
  }

  /** The client reading from the cache: `mgr.client`. */
  getClient(): Client {
    return this.client;
  }

  /** The reader that goes to the API server: `mgr.apiReader`. */
  getAPIReader(): Reader {
    return this.apiReader;
  }

  informerFor(kind: ResourceKind<unknown>): Informer {
    return this.cache.informerFor(kind);
  }

  add(controller: Controller): void {
    if (this.state !== 'new') throw new Error('controllers must be added before the manager starts');
    this.controllers.push(controller);
  }

  /** Resolves once the caches are synced and the controllers run (with leaderElection: once leading). */
  ready(): Promise<void> {
    return this.readyPromise;
  }

  /**
   * Runs until stop() or a signal; resolves once everything has stopped. Rejects with "leader election
   * lost" (after stopping) when this replica led and could not renew its Lease: the process should exit
   * and be restarted, as controller-runtime's managers do.
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('a manager starts once');
    this.state = 'starting';
    if (this.options.handleSignals ?? true) {
      process.once('SIGTERM', this.signalHandler);
      process.once('SIGINT', this.signalHandler);
    }
    try {
      await this.serveProbes(this.options.healthProbeBindAddress ?? ':8081');
      await this.serveMetrics(this.options.metricsBindAddress ?? ':8080');
      // Webhooks answer on every replica, before the caches sync: conversion needs no cache or lease.
      if (this.webhookServer.paths().length > 0) await this.webhookServer.start();
      this.logger.info('Starting caches');
      await this.waitForCacheSync();
      if ((this.state as string) !== 'starting') return await this.done; // stopped meanwhile
      this.state = 'running';
      if (this.leaderElector) {
        const elector = this.leaderElector;
        this.logger.info('attempting to acquire the leader lease', { lease: this.options.leaderElectionId });
        elector.onLost(() => {
          this.lost = new Error('leader election lost');
          // Fence first, in this same tick: no write of this replica may land once another one may lead.
          this.fence.abort(this.lost);
          void this.stop();
        });
        this.setLeader(false);
        if (!(await elector.acquire())) return await this.done; // stopped while waiting
        this.setLeader(true);
      }
      const workers = this.controllers.map((controller) => controller.start());
      this.logger.info('Started controllers', { controllers: this.controllers.map((c) => c.name) });
      this.markReady();
      void Promise.all(workers);
    } catch (err) {
      await this.stop();
      throw err;
    }
    await this.done;
    if (this.lost) throw this.lost;
  }

  /** Starts the informers; throws when they have not synced within cacheSyncTimeoutMs. */
  private async waitForCacheSync(): Promise<void> {
    const timeoutMs = this.options.cacheSyncTimeoutMs ?? 120_000;
    let timer: unknown;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = this.clock.setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const outcome = await Promise.race([this.cache.start(), timeout]);
    this.clock.clearTimeout(timer);
    if (outcome === 'timeout') {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for caches to sync: ${this.cache.unsynced().join(', ')} ` +
          '(is the CRD installed, and may the operator list and watch it?)',
      );
    }
  }

  private setLeader(leading: boolean): void {
    this.metrics.set(
      'leader_election_master_status',
      'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.',
      { name: this.options.leaderElectionId ?? '' },
      leading ? 1 : 0,
    );
  }

  /** Stops taking work, waits for in-flight reconciles (up to the shutdown timeout), then closes. */
  stop(): Promise<void> {
    this.stopping ??= this.shutDown();
    return this.stopping;
  }

  private async shutDown(): Promise<void> {
    this.state = 'stopping';
    process.off('SIGTERM', this.signalHandler);
    process.off('SIGINT', this.signalHandler);
    const timeout = this.options.gracefulShutdownTimeoutMs ?? DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS;
    await Promise.all(this.controllers.map((controller) => controller.stop(timeout)));
    // After the controllers: no other replica may start reconciling while ours still run.
    if (this.leaderElector) {
      await this.leaderElector.stop();
      this.setLeader(false);
    }
    await this.webhookServer.stop();
    await this.cache.stop();
    this.ownClient?.close();
    await this.probeServer?.stop();
    await this.metricsServer?.stop();
    this.state = 'stopped';
    this.logger.info('Stopped');
    this.finished();
  }

  private async serveMetrics(address: string): Promise<void> {
    if (address === '0' || address === '') return;
    const secure = this.options.metricsSecureServing ?? false;
    if (secure && !this.kubeConfig) {
      throw new Error('metricsSecureServing needs a kubeConfig: it reviews tokens with the API server');
    }
    const { host, port } = parseBindAddress(address);
    this.metricsServer = new MetricsServer(
      {
        ...this.options.metricsServer,
        bindAddress: address,
        secureServing: secure,
        ...(this.options.metricsCertDir ? { certDir: this.options.metricsCertDir } : {}),
        enableHttp2: this.options.metricsEnableHttp2 ?? this.options.metricsServer?.enableHttp2 ?? false,
      },
      async () => ({ contentType: this.metrics.contentType, body: await this.renderMetrics() }),
      this.logger.child({ logger: 'metrics' }),
      this.kubeConfig as KubeConfig,
    );
    this.addresses.metrics = await this.metricsServer.start(host, port);
  }

  /** This manager's series, then the process's (prom-client's default metrics). */
  private async renderMetrics(): Promise<string> {
    const [own, process] = await Promise.all([this.metrics.render(), processRegistry().metrics()]);
    return `${own}\n${process}`;
  }

  private async serveProbes(address: string): Promise<void> {
    if (address === '0' || address === '') return;
    const { host, port } = parseBindAddress(address);
    this.probeServer = new ProbeServer({
      bindAddress: address,
      ready: () => this.state === 'running' && this.cache.hasSynced(),
      logger: this.logger,
    });
    this.addresses.healthProbe = await this.probeServer.start(host, port);
  }
}

/** How long stop() waits for in-flight reconciles; a pod's terminationGracePeriodSeconds must exceed it. */
export const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS = 30_000;

/** `:8080` listens on every interface, `127.0.0.1:0` on loopback at a free port. */
export function parseBindAddress(address: string): { host: string | undefined; port: number } {
  const colon = address.lastIndexOf(':');
  const host = colon > 0 ? address.slice(0, colon).replace(/^\[|\]$/g, '') : undefined;
  const port = Number(address.slice(colon + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`invalid bind address "${address}": expected host:port or :port`);
  }
  return { host, port };
}
