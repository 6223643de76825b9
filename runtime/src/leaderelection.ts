/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection package does it: one
 * replica of an operator holds the Lease and runs the controllers; the others wait, watching the Lease,
 * and take it over once its holder has not renewed it for a lease duration. Time is measured on the local
 * clock from when this replica last saw the Lease change, never from the times written in it, so clock
 * skew between nodes does not matter; and on a monotonic clock (performance.now), so that a jump of the
 * wall clock (NTP, a suspended VM) can neither extend this replica's leadership nor cut another's short.
 * Only the times written into the Lease (acquireTime, renewTime) are wall-clock times.
 */
import type { Client } from './client.js';
import { realClock, type Clock } from './clock.js';
import { isAlreadyExists, isConflict, isNotFound } from './errors.js';
import { resourceKind } from './kinds.js';
import type { Logger } from './logger.js';
import type { KubernetesObject, MicroTime } from './types.js';
import { nodeFs } from './internal/node-modules.js';

/** A coordination.k8s.io/v1 Lease, with its times as they travel (strings). */
export interface Lease extends KubernetesObject {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: MicroTime;
    renewTime?: MicroTime;
    leaseTransitions?: number;
  };
}

export const LeaseKind = resourceKind<Lease>({
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
});

/**
 * The manager's leader election (controller-runtime's `LeaderElection*` options): the manager's
 * `leaderElection` option. `withDefaults` (options.ts) applies the defaults.
 */
export interface LeaderElectionOptions {
  /**
   * Run the controllers only while holding the coordination.k8s.io/v1 Lease `id`, so that several
   * replicas run with one active. Caches, probes and webhooks run on every replica. Default: false.
   */
  enabled?: boolean;
  /** The Lease's name, such as `guestbook.example.com`. Default: none; required when enabled. */
  id?: string;
  /**
   * The Lease's namespace. Default: the pod's namespace (from its service account); required outside a
   * cluster.
   */
  namespace?: string;
  /** This replica's holderIdentity; must differ between replicas. Default: `<hostname>_<random uuid>`. */
  identity?: string;
  /** How long a Lease holds without renewal before another replica takes it. Default: 15 000 ms. */
  leaseDurationMs?: number;
  /** How long the leader tries to renew before it gives up leadership (and stops). Default: 10 000 ms. */
  renewDeadlineMs?: number;
  /** How often replicas try to acquire, and the leader renews. Default: 2 000 ms. */
  retryPeriodMs?: number;
  /** Give the Lease up on a graceful stop, so that another replica takes over at once. Default: true. */
  releaseOnCancel?: boolean;
}

export interface LeaderElectorOptions {
  client: Client;
  /** The Lease's name: the manager's `leaderElection.id`. */
  name: string;
  namespace: string;
  /** This replica's identity, written as holderIdentity. Must differ between replicas. */
  identity: string;
  /** How long a Lease holds without renewal before another replica takes it. */
  leaseDurationMs: number;
  /** How long the leader keeps trying to renew before it gives up leadership. */
  renewDeadlineMs: number;
  /** How often replicas try to acquire, and the leader renews. */
  retryPeriodMs: number;
  /** Give the Lease up on stop(), so that another replica takes over at once. */
  releaseOnStop: boolean;
  logger: Logger;
  /**
   * Timers, durations and the Lease's times, for tests. Default: timers of realClock, durations on
   * performance.now (monotonic), the Lease's times from Date.now.
   */
  clock?: Clock;
}

/** Leads, or waits to lead, on one Lease. */
export class LeaderElector {
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly clock: Clock;
  /** Monotonic milliseconds, for every duration. */
  private readonly elapsed: () => number;
  /** Wall-clock milliseconds, for the times written into the Lease. */
  private readonly wallTime: () => number;
  private readonly log: Logger;
  private leading = false;
  private stopped = false;
  private timer: unknown;
  private lastRenew = 0;
  /** The Lease record as last seen, and when (local clock) it was first seen so. */
  private observed: { record: string; at: number } | undefined;
  /** The current attempt to acquire or renew: stop() waits for it before releasing. */
  private attempt: Promise<boolean> = Promise.resolve(false);
  private lostHandlers: (() => void)[] = [];
  private settleAcquire: ((acquired: boolean) => void) | undefined;

  constructor(private readonly options: LeaderElectorOptions) {
    this.leaseDurationMs = options.leaseDurationMs;
    this.renewDeadlineMs = options.renewDeadlineMs;
    this.retryPeriodMs = options.retryPeriodMs;
    if (this.renewDeadlineMs >= this.leaseDurationMs) {
      throw new Error('leader election: renewDeadlineMs must be shorter than leaseDurationMs');
    }
    if (this.retryPeriodMs >= this.renewDeadlineMs) {
      throw new Error('leader election: retryPeriodMs must be shorter than renewDeadlineMs');
    }
    this.clock = options.clock ?? realClock;
    const clock = options.clock;
    this.elapsed = clock ? () => clock.now() : () => performance.now();
    this.wallTime = clock ? () => clock.now() : () => Date.now();
    this.log = options.logger.child({ lease: `${options.namespace}/${options.name}` });
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Called once if this replica, having led, fails to renew the Lease within renewDeadlineMs. */
  onLost(handler: () => void): void {
    this.lostHandlers.push(handler);
  }

  /** Resolves true once this replica leads (then keeps renewing), false if stop() came first. */
  acquire(): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      this.settleAcquire = resolve;
      this.tick();
    });
  }

  /** Stops acquiring and renewing; gives the Lease up when leading (unless releaseOnStop is false). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.clock.clearTimeout(this.timer);
    this.settleAcquire?.(false);
    this.settleAcquire = undefined;
    await this.attempt.catch(() => false);
    if (this.leading && this.options.releaseOnStop) await this.release();
    this.leading = false;
  }

  private tick(): void {
    if (this.stopped) return;
    // A request that never answers (a network partition) must not hold the round up: a leader gives up
    // once its renew deadline has passed, as client-go bounds its renewals with a RenewDeadline context.
    // Otherwise another replica takes the Lease over after leaseDuration while this one still reconciles.
    const budget = this.leading
      ? Math.max(0, this.lastRenew + this.renewDeadlineMs - this.elapsed())
      : this.renewDeadlineMs;
    let timer: unknown;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = this.clock.setTimeout(() => {
        this.log.warn('acquiring or renewing the lease timed out', { timeoutMs: budget });
        resolve(false);
      }, budget);
    });
    const round = this.tryAcquireOrRenew();
    round.catch(() => false).finally(() => this.clock.clearTimeout(timer));
    this.attempt = Promise.race([round, timedOut]);
    this.attempt.then(
      (ok) => this.after(ok),
      (err: unknown) => {
        this.log.warn('cannot acquire or renew the lease', { error: err });
        this.after(false);
      },
    );
  }

  private after(ok: boolean): void {
    if (this.stopped) {
      // stop() came during this round: if it won the Lease, stop() releases it.
      if (ok) this.leading = true;
      return;
    }
    const now = this.elapsed();
    if (ok) {
      this.lastRenew = now;
      if (!this.leading) {
        this.leading = true;
        this.log.info('successfully acquired lease', { identity: this.options.identity });
        this.settleAcquire?.(true);
        this.settleAcquire = undefined;
      }
    } else if (this.leading && now - this.lastRenew >= this.renewDeadlineMs) {
      this.leading = false;
      this.stopped = true;
      this.log.error('leader election lost: the lease was not renewed in time', {
        renewDeadlineMs: this.renewDeadlineMs,
      });
      for (const handler of this.lostHandlers.splice(0)) handler();
      return;
    }
    this.timer = this.clock.setTimeout(() => this.tick(), this.retryPeriodMs);
  }

  /** One round of client-go's tryAcquireOrRenew: true when this replica holds the Lease afterwards. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { client, name, namespace, identity } = this.options;
    const now = this.elapsed();
    const wall = this.wallTime();
    const leaseDurationSeconds = Math.max(1, Math.ceil(this.leaseDurationMs / 1000));
    let lease: Lease;
    try {
      lease = await client.get(LeaseKind, name, namespace);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      const created: Lease = {
        apiVersion: LeaseKind.apiVersion,
        kind: LeaseKind.kind,
        metadata: { name, namespace },
        spec: {
          holderIdentity: identity,
          leaseDurationSeconds,
          acquireTime: microTime(wall),
          renewTime: microTime(wall),
          leaseTransitions: 0,
        },
      };
      try {
        this.observe(await client.create(LeaseKind, created));
        return true;
      } catch (createErr) {
        if (isAlreadyExists(createErr) || isConflict(createErr)) return false;
        throw createErr;
      }
    }
    this.observe(lease);
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const durationMs = (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
    const seenAt = this.observed?.at ?? now;
    if (holder !== '' && holder !== identity && seenAt + durationMs > now) return false;
    const next: Lease = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds,
        renewTime: microTime(wall),
        acquireTime: holder === identity ? (spec.acquireTime ?? microTime(wall)) : microTime(wall),
        leaseTransitions:
          holder === identity ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
      },
    };
    try {
      this.observe(await client.update(LeaseKind, next));
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }

  private observe(lease: Lease): void {
    const spec = lease.spec ?? {};
    const record = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.leaseDurationSeconds]);
    if (this.observed?.record !== record) this.observed = { record, at: this.elapsed() };
  }

  /** As client-go: an empty holder and a 1 s duration, so that the next candidate takes it at once. */
  private async release(): Promise<void> {
    const { client, name, namespace, identity } = this.options;
    try {
      const lease = await client.get(LeaseKind, name, namespace);
      if (lease.spec?.holderIdentity !== identity) return;
      const now = microTime(this.wallTime());
      await client.update(LeaseKind, {
        ...lease,
        spec: {
          ...lease.spec,
          holderIdentity: '',
          leaseDurationSeconds: 1,
          renewTime: now,
          acquireTime: now,
        },
      });
      this.log.info('released the lease');
    } catch (err) {
      this.log.warn('cannot release the lease; another replica takes it once it expires', { error: err });
    }
  }
}

/** metav1.MicroTime's wire format: RFC 3339 with exactly six fractional digits. */
export function microTime(ms: number): MicroTime {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The namespace of the pod this process runs in, or undefined outside a cluster. */
export function inClusterNamespace(file = SERVICE_ACCOUNT_NAMESPACE): string | undefined {
  try {
    return nodeFs.readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
