/**
 * The manager runs an operator: it shares informers between controllers, serves health probes and
 * metrics, starts every controller once the caches are synced, and stops gracefully on SIGTERM/SIGINT.
 */
import type { AddressInfo } from 'node:net';
import type { ControllerHost } from './builder.js';
import { reflectorInformerFactory, InformerCache, type Informer, type InformerChoice } from './cache.js';
import { HttpClient, type Client, type Reader } from './client.js';
import type { Clock } from './clock.js';
import type { Controller, ControllerDefaults } from './controller.js';
import { newEventRecorder, type EventRecorder } from './events.js';
import { DelegatingClient } from './internal/delegating-client.js';
import { nodeCrypto, nodeOs } from './internal/node-modules.js';
import { WriteTracker } from './internal/write-tracker.js';
import { kindKey, type ResourceKind } from './kinds.js';
import { inClusterNamespace, LeaderElector } from './leaderelection.js';
import { clusterAccessOf, loadKubeConfig, type ClusterAccess } from './kubeconfig.js';
import type { Logger } from './logger.js';
import { Metrics, processRegistry } from './metrics.js';
import { MetricsServer } from './metrics-server.js';
import { withDefaults, type ManagerConfig, type ManagerOptions } from './options.js';
import { ProbeServer } from './probes.js';
import { createTracing, type Tracing } from './tracing.js';
import type { Request } from './reconcile.js';
import { WebhookServer } from './webhook/index.js';

export { DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS, type ManagerOptions } from './options.js';

export class Manager implements ControllerHost {
  /**
   * The client for reconcilers (controller-runtime's `mgr.GetClient()`): `get` and `list` read from the
   * manager's informer cache (deep copies; a kind read for the first time gets an informer, which the
   * read waits to sync), writes go to the API server.
   */
  readonly client: Client;
  /** `client`, with the write gate a stopping leader closes. */
  private readonly delegatingClient: DelegatingClient;
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
  /** Makes the spans of reconciles, API calls and webhook requests; undefined when tracing is off. */
  readonly tracing: Tracing | undefined;
  /**
   * The informer cache `client` reads from (controller-runtime's `mgr.GetCache()`): field indexes
   * (`mgr.cache.indexField(kind, name, fn)`), and per informer its objects and estimated bytes
   * (`mgr.cache.stats()`, and /metrics).
   */
  readonly cache: InformerCache;
  /** The writes of `client` its informers have not seen yet; none with `client.readYourWrites: false`. */
  private readonly writes: WriteTracker | undefined;
  /** Set with leaderElection: the controllers run only while it leads. */
  readonly leaderElector: LeaderElector | undefined;
  /**
   * Aborted the moment leadership is lost: `mgr.client` refuses writes from then on and aborts those in
   * flight, and every reconcile's `context.signal` is this signal. A stopping manager aborts it too, once
   * its controllers have stopped and its writes in flight have landed, before it gives its Lease up.
   */
  private readonly fence = new AbortController();

  /**
   * Aborted when this manager loses its leader election Lease, or gives it up as it stops (see
   * ReconcileContext.signal). Leader-only work of your own ends with it.
   */
  get leadership(): AbortSignal {
    return this.fence.signal;
  }
  private lost: Error | undefined;
  private readonly controllers: Controller[] = [];
  private readonly recorders = new Map<string, EventRecorder>();
  private probeServer: ProbeServer | undefined;
  /** The probe and metrics servers' start, which the caches do not wait for. */
  private serversStarting: Promise<unknown> | undefined;
  private metricsServer: MetricsServer | undefined;
  /** The API server and credentials the manager's clients use; undefined with newClient and newInformer. */
  private readonly access: ClusterAccess | undefined;
  /** The options this manager was created with, every default applied (withDefaults). */
  readonly config: ManagerConfig;
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
    const config = withDefaults(options);
    this.config = config;
    this.logger = config.logger;
    this.clock = config.clock;
    this.tracing = createTracing(config.tracing, this.logger.child({ logger: 'tracing' }));
    const tracing = this.tracing ? { tracing: this.tracing } : {};
    this.webhookServer = new WebhookServer({
      ...config.webhookServer,
      logger: this.logger.child({ logger: 'webhook' }),
      metrics: this.metrics,
      tracing: this.tracing,
    });
    const needsKubeConfig = !config.newClient || !config.newInformer;
    const kubeConfig = config.kubeConfig ?? (needsKubeConfig ? loadKubeConfig() : undefined);
    this.access = kubeConfig && clusterAccessOf(kubeConfig);
    if (!config.newClient) {
      this.ownClient = new HttpClient(this.access as ClusterAccess, {
        timeoutMs: config.client.timeoutMs,
        ...tracing,
      });
    }
    this.apiClient = config.newClient ? config.newClient() : (this.ownClient as HttpClient);
    this.apiReader = this.apiClient;
    const factory =
      config.newInformer ?? reflectorInformerFactory(this.access as ClusterAccess, this.logger, config);
    let writes: WriteTracker | undefined;
    this.cache = new InformerCache(factory, {
      namespace: config.cache.namespace,
      byObject: config.cache.byObject,
      syncTimeoutMs: config.controller.cacheSyncTimeoutMs,
      clock: this.clock,
      logger: this.logger.child({ logger: 'cache' }),
      metrics: this.metrics,
      warnOnUndeclaredInformer: config.cache.warnOnUndeclaredInformer,
      readerFailOnMissingInformer: config.cache.readerFailOnMissingInformer,
      ...(config.client.readYourWrites
        ? { observe: (kind: string, object, deleted: boolean) => writes?.observe(kind, object, deleted) }
        : {}),
    });
    if (config.client.readYourWrites) writes = this.newWriteTracker(config.client.readYourWritesTimeoutMs);
    this.writes = writes;
    this.delegatingClient = new DelegatingClient(
      this.cache,
      this.apiClient,
      config.client.disableCacheFor,
      this.fence.signal,
      writes,
    );
    this.client = this.delegatingClient;
    this.leaderElector = config.leaderElection.enabled ? this.newLeaderElector(config) : undefined;
  }

  private newWriteTracker(timeoutMs: number): WriteTracker {
    const cache = this.cache;
    return new WriteTracker({
      timeoutMs,
      clock: this.clock,
      cached: (kind, namespace, name, written) => cache.peek(kind, namespace, name, written),
      onWait: (kind, timedOut) =>
        this.metrics.inc(
          'kubesmith_read_your_writes_waits_total',
          "Cached reads of mgr.client that waited for the informer to see the manager's own write, by " +
            'outcome: seen, or timeout (the read returned what the cache held)',
          { kind, outcome: timedOut ? 'timeout' : 'seen' },
        ),
    });
  }

  /** Whether `client` wrote this object and its informer has not seen the write yet (the builder's deferral). */
  pendingWrite(kind: ResourceKind<unknown>, request: Request): boolean {
    const writes = this.writes;
    if (writes === undefined || writes.size === 0) return false;
    return writes.isPending(kindKey(kind), kind.namespaced ? request.namespace : '', request.name);
  }

  /** What every controller built on this manager gets unless its builder says otherwise. */
  get controllerDefaults(): Required<ControllerDefaults> {
    return this.config.controller;
  }

  private newLeaderElector({ leaderElection }: ManagerConfig): LeaderElector {
    if (!leaderElection.id) {
      throw new Error(
        'leaderElection needs an id: the name of the Lease the replicas share (leaderElection: { enabled, id })',
      );
    }
    const namespace = leaderElection.namespace ?? inClusterNamespace();
    if (!namespace) {
      throw new Error(
        'unable to find the leader election namespace: not running in a cluster, set leaderElection.namespace',
      );
    }
    return new LeaderElector({
      client: this.apiClient,
      name: leaderElection.id,
      namespace,
      identity: leaderElection.identity ?? `${nodeOs().hostname()}_${nodeCrypto().randomUUID()}`,
      leaseDurationMs: leaderElection.leaseDurationMs,
      renewDeadlineMs: leaderElection.renewDeadlineMs,
      retryPeriodMs: leaderElection.retryPeriodMs,
      releaseOnStop: leaderElection.releaseOnCancel,
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

  informerFor(kind: ResourceKind<unknown>, options?: InformerChoice): Informer {
    return this.cache.informerFor(kind, options);
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
    if (this.config.handleSignals) {
      process.once('SIGTERM', this.signalHandler);
      process.once('SIGINT', this.signalHandler);
    }
    try {
      // The probe and metrics servers start first and the caches do not wait for them to listen, as
      // controller-runtime's HTTP servers start in goroutines of their own: the informers' first
      // connection and list (a TLS handshake, the API server's time) go on while the servers bind. Both
      // listen before the manager is ready; either failing to stops it.
      const servers = Promise.all([
        this.serveProbes(this.config.healthProbeBindAddress),
        this.serveMetrics(),
      ]);
      this.serversStarting = servers;
      // Webhooks answer on every replica, before the caches start: conversion needs no cache or lease, and
      // the list of a converted kind needs its webhook.
      if (this.webhookServer.paths().length > 0) {
        await servers;
        await this.webhookServer.start();
      }
      this.logger.info('Starting caches');
      await Promise.all([servers, this.waitForCacheSync()]);
      if ((this.state as string) !== 'starting') return await this.done; // stopped meanwhile
      this.state = 'running';
      if (this.leaderElector) {
        const elector = this.leaderElector;
        this.logger.info('attempting to acquire the leader lease', { lease: this.config.leaderElection.id });
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

  /** Starts the informers; throws when they have not synced within controller.cacheSyncTimeoutMs. */
  private async waitForCacheSync(): Promise<void> {
    const timeoutMs = this.config.controller.cacheSyncTimeoutMs;
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
      { name: this.config.leaderElection.id ?? '' },
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
    // The webhook server drains while the controllers stop: it still answers (this replica's endpoint
    // takes a moment to leave the Service), asking its clients to close their connections after each answer.
    this.webhookServer.drain();
    const timeout = this.config.gracefulShutdownTimeoutMs;
    await Promise.all(this.controllers.map((controller) => controller.stop(timeout)));
    // After the controllers: no other replica may start reconciling while ours still run. Leader-only work
    // outside them (the self-signed certificates' loop) ends with the fence, and the writes in flight land
    // before the Lease is given up: a write of this replica landing after the next leader's would undo it.
    if (this.leaderElector) {
      await this.delegatingClient.closeWrites();
      this.fence.abort(new Error('the manager stopped'));
      await this.leaderElector.stop();
      this.setLeader(false);
    }
    await this.webhookServer.stop();
    await this.cache.stop();
    this.ownClient?.close();
    // A server still binding (a start that failed or was stopped meanwhile) is closed once it listens.
    await this.serversStarting?.catch(() => {});
    await this.probeServer?.stop();
    await this.metricsServer?.stop();
    this.state = 'stopped';
    this.logger.info('Stopped');
    this.finished();
  }

  private async serveMetrics(): Promise<void> {
    const options = this.config.metrics;
    const address = options.bindAddress;
    if (address === '0' || address === '') return;
    if (options.secureServing && !this.access) {
      throw new Error('metrics.secureServing needs a kubeConfig: it reviews tokens with the API server');
    }
    const { host, port } = parseBindAddress(address);
    this.metricsServer = new MetricsServer(
      options,
      async () => ({ contentType: this.metrics.contentType, body: await this.renderMetrics() }),
      this.logger.child({ logger: 'metrics' }),
      this.access,
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
