/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection with
 * controller-runtime's defaults: a 15 s lease, renewed every 2 s, lost when no renewal succeeds for 10 s.
 * Expiry is judged by when this process last saw the lease change, never by the holder's clock.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Client } from './client.js';
import { realClock, type Clock } from './clock.js';
import { isNotFound } from './errors.js';
import { resourceKind } from './kinds.js';
import type { Logger } from './logger.js';
import type { KubernetesObject } from './types.js';

export interface Lease extends KubernetesObject {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
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

export interface LeaderElectionOptions {
  /** The Lease's name: `leaderElectionId`. */
  name: string;
  namespace: string;
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  clock?: Clock;
  logger: Logger;
}

/** `2026-11-23T08:00:00.123000Z`: metav1.MicroTime. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

export class LeaderElector {
  readonly identity: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly clock: Clock;
  private observed: string | undefined;
  private observedAt = 0;
  private stopped = false;
  private renewTimer: unknown;
  private leading = false;

  constructor(
    private readonly client: Client,
    private readonly options: LeaderElectionOptions,
  ) {
    this.identity = options.identity ?? `${hostname()}_${randomUUID()}`;
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    this.clock = options.clock ?? realClock;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Resolves true once this process holds the lease, false if stop() came first. */
  async acquire(): Promise<boolean> {
    this.options.logger.info('attempting to acquire leader lease', {
      lease: `${this.options.namespace}/${this.options.name}`,
    });
    while (!this.stopped) {
      if (await this.tryAcquireOrRenew()) {
        this.leading = true;
        this.options.logger.info('successfully acquired lease', { identity: this.identity });
        return true;
      }
      await this.sleep(this.retryPeriodMs);
    }
    return false;
  }

  /** Renews every retry period; calls `onLost` when no renewal succeeded within the renew deadline. */
  keepRenewing(onLost: () => void): void {
    let lastRenewed = this.clock.now();
    const tick = async () => {
      if (this.stopped) return;
      if (await this.tryAcquireOrRenew()) lastRenewed = this.clock.now();
      else if (this.clock.now() - lastRenewed >= this.renewDeadlineMs) {
        this.leading = false;
        this.options.logger.error('leader lease lost', { identity: this.identity });
        onLost();
        return;
      }
      if (!this.stopped) this.renewTimer = this.clock.setTimeout(() => void tick(), this.retryPeriodMs);
    };
    this.renewTimer = this.clock.setTimeout(() => void tick(), this.retryPeriodMs);
  }

  /** Stops campaigning and renewing; gives the lease up if held, so another replica takes over at once. */
  async release(): Promise<void> {
    this.stopped = true;
    this.clock.clearTimeout(this.renewTimer);
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.client.get(LeaseKind, this.options.name, this.options.namespace);
      if (lease.spec?.holderIdentity !== this.identity) return;
      const now = this.clock.now();
      await this.client.update(LeaseKind, {
        ...lease,
        spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(now) },
      });
      this.options.logger.info('released leader lease', { identity: this.identity });
    } catch (err) {
      this.options.logger.warn('could not release the leader lease', { error: err });
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.clock.now();
    const spec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    try {
      let lease: Lease;
      try {
        lease = await this.client.get(LeaseKind, this.options.name, this.options.namespace);
      } catch (err) {
        if (!isNotFound(err)) throw err;
        await this.client.create(LeaseKind, {
          apiVersion: LeaseKind.apiVersion,
          kind: LeaseKind.kind,
          metadata: { name: this.options.name, namespace: this.options.namespace },
          spec,
        });
        this.observe(spec, now);
        return true;
      }
      const current = lease.spec ?? {};
      this.observe(current, now);
      const holder = current.holderIdentity ?? '';
      const duration = (current.leaseDurationSeconds ?? 0) * 1000;
      if (holder !== '' && holder !== this.identity && this.observedAt + duration > now) return false;
      const next = {
        ...spec,
        acquireTime: holder === this.identity ? (current.acquireTime ?? spec.acquireTime) : spec.acquireTime,
        leaseTransitions: (current.leaseTransitions ?? 0) + (holder === this.identity ? 0 : 1),
      };
      // Conditional on the resourceVersion read: of two candidates, one wins, the other gets a 409.
      await this.client.update(LeaseKind, { ...lease, spec: next });
      this.observe(next, now);
      return true;
    } catch (err) {
      this.options.logger.debug('failed to acquire or renew the lease', { error: err });
      return false;
    }
  }

  private observe(spec: Lease['spec'], now: number): void {
    const record = JSON.stringify(spec);
    if (record !== this.observed) {
      this.observed = record;
      this.observedAt = now;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.clock.setTimeout(resolve, ms));
  }
}
