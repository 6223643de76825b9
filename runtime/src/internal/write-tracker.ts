/**
 * Read-your-own-writes bookkeeping (controller-runtime's EnableReadYourWritesConsistency, KEP-5647's
 * deferred reconciles): per object (kind, namespace, name), the resourceVersion the manager's last write of
 * it returned, until the cache's informer has seen it. A cached read of such an object waits for it, a
 * list of its kind waits for the kind's writes in its namespace scope, and a controller defers the
 * reconcile of a key with a write still unseen.
 *
 * Bounded: an entry leaves once the informer has seen its write, once a read has waited `timeoutMs` for it,
 * once it is `timeoutMs` old (a watch that slow is broken, and waiting more would only slow every
 * reconcile), and the oldest leave first beyond `maxEntries`.
 */
import type { Clock } from '../clock.js';
import type { KubernetesObject } from '../types.js';

/**
 * What the informer of a kind holds of one object now; `untracked` when the kind has no informer or the
 * informer will never hold the object (given as `written` for a write): its writes are not waited for.
 */
export type CachedLookup = (
  kind: string,
  namespace: string,
  name: string,
  written?: KubernetesObject,
) => KubernetesObject | undefined | 'untracked';

export interface WriteTrackerConfig {
  /** How long a read waits for a write, and how long a write is remembered. */
  timeoutMs: number;
  clock: Clock;
  /** The cache's current object, to skip writes its informer has seen already. */
  cached: CachedLookup;
  /** At most this many unseen writes are remembered; the oldest leave first. Default: 10 000. */
  maxEntries?: number;
  /** Told of each read that waited, and whether it ended at the deadline. Default: nothing. */
  onWait?: (kind: string, timedOut: boolean) => void;
}

interface PendingWrite {
  kind: string;
  namespace: string;
  name: string;
  /** The resourceVersion the write returned; for a delete, the newest one known before it. */
  resourceVersion: string | undefined;
  deleted: boolean;
  at: number;
  /** Resolved when the entry leaves (seen, timed out, expired, evicted). */
  settled: Promise<void>;
  settle: () => void;
}

/**
 * Whether an informer that holds `cached` has seen the write that returned `written`. ResourceVersions
 * are opaque to clients, but kube-apiserver's are etcd revisions, integers that only grow: where both
 * parse as integers, a newer one means the write was seen (and overwritten since). Otherwise only
 * equality counts.
 */
export function hasSeen(cached: string | undefined, written: string): boolean {
  if (cached === undefined) return false;
  if (cached === written) return true;
  const a = asInteger(cached);
  const b = asInteger(written);
  return a !== undefined && b !== undefined && a > b;
}

function asInteger(version: string): bigint | undefined {
  return /^[0-9]{1,20}$/.test(version) ? BigInt(version) : undefined;
}

/** Whether `cached` (undefined: absent) shows the delete: gone, or made again since (a newer version). */
function showsDelete(cached: KubernetesObject | undefined, before: string | undefined): boolean {
  if (cached === undefined) return true;
  const now = cached.metadata?.resourceVersion;
  if (now === undefined || before === undefined) return false;
  return now !== before && hasSeen(now, before);
}

function entryKey(kind: string, namespace: string, name: string): string {
  return `${kind}\u0000${namespace}\u0000${name}`;
}

export class WriteTracker {
  private readonly pending = new Map<string, PendingWrite>();
  private readonly timeoutMs: number;
  private readonly maxEntries: number;
  private readonly clock: Clock;
  private readonly cached: CachedLookup;
  private readonly onWait: WriteTrackerConfig['onWait'];

  constructor(config: WriteTrackerConfig) {
    this.timeoutMs = config.timeoutMs;
    this.maxEntries = config.maxEntries ?? 10_000;
    this.clock = config.clock;
    this.cached = config.cached;
    this.onWait = config.onWait;
  }

  /** How many writes are remembered: at 0, reads and reconciles skip the rest of the bookkeeping. */
  get size(): number {
    return this.pending.size;
  }

  /** Remembers `object`, as a create, update, patch or apply of `kind` returned it. */
  recordWrite(kind: string, object: unknown): void {
    const metadata = (object as KubernetesObject | undefined)?.metadata;
    const version = metadata?.resourceVersion;
    if (!metadata?.name || !version) return;
    const namespace = metadata.namespace ?? '';
    const cached = this.cached(kind, namespace, metadata.name, object as KubernetesObject);
    if (cached === 'untracked' || hasSeen(cached?.metadata?.resourceVersion, version)) return;
    this.put(kind, namespace, metadata.name, version, false);
  }

  /**
   * Remembers a delete of an object: the cache must lose it (or hold one made again since). Its version
   * before the delete is the newest of the cache's and of a write remembered.
   */
  recordDelete(kind: string, namespace: string, name: string): void {
    const cached = this.cached(kind, namespace, name);
    if (cached === 'untracked' || cached === undefined) return;
    const written = this.pending.get(entryKey(kind, namespace, name));
    let before = cached.metadata?.resourceVersion;
    if (written?.resourceVersion && !written.deleted && !hasSeen(before, written.resourceVersion)) {
      before = written.resourceVersion;
    }
    this.put(kind, namespace, name, before, true);
  }

  private put(
    kind: string,
    namespace: string,
    name: string,
    resourceVersion: string | undefined,
    deleted: boolean,
  ): void {
    const key = entryKey(kind, namespace, name);
    this.drop(key);
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const at = this.clock.now();
    this.pending.set(key, { kind, namespace, name, resourceVersion, deleted, at, settled, settle });
    // Map order is insertion order: the first entries are the oldest.
    while (this.pending.size > this.maxEntries) {
      const oldest = this.pending.keys().next().value as string;
      this.drop(oldest);
    }
  }

  private drop(key: string): void {
    const entry = this.pending.get(key);
    if (!entry) return;
    this.pending.delete(key);
    entry.settle();
  }

  /** The informer of `kind` reports `object` (added, updated or, with `deleted`, gone). */
  observe(kind: string, object: KubernetesObject, deleted: boolean): void {
    if (this.pending.size === 0) return;
    const name = object.metadata?.name;
    if (!name) return;
    const key = entryKey(kind, object.metadata?.namespace ?? '', name);
    const entry = this.pending.get(key);
    if (!entry) return;
    const seen = entry.deleted
      ? showsDelete(deleted ? undefined : object, entry.resourceVersion)
      : !deleted &&
        entry.resourceVersion !== undefined &&
        hasSeen(object.metadata?.resourceVersion, entry.resourceVersion);
    // An object deleted after our write: the write has been seen, and overtaken.
    if (seen || (deleted && !entry.deleted)) this.drop(key);
  }

  /** The entry of an object if its write is unseen and younger than timeoutMs (older ones are dropped). */
  private live(key: string): PendingWrite | undefined {
    const entry = this.pending.get(key);
    if (entry && this.clock.now() - entry.at >= this.timeoutMs) {
      this.drop(key);
      return undefined;
    }
    return entry;
  }

  /** Whether the manager wrote the object and its informer has not seen the write yet. */
  isPending(kind: string, namespace: string, name: string): boolean {
    if (this.pending.size === 0) return false;
    return this.live(entryKey(kind, namespace, name)) !== undefined;
  }

  /** Waits (at most timeoutMs after the write) until the informer has seen the write of this object. */
  waitForObject(kind: string, namespace: string, name: string): Promise<void> | undefined {
    if (this.pending.size === 0) return undefined;
    const entry = this.live(entryKey(kind, namespace, name));
    return entry && this.waitFor([entry]);
  }

  /** Waits for the writes of `kind` in `namespace` (undefined: every namespace). */
  waitForKind(kind: string, namespace: string | undefined): Promise<void> | undefined {
    if (this.pending.size === 0) return undefined;
    const entries: PendingWrite[] = [];
    for (const [key, entry] of this.pending) {
      if (entry.kind !== kind || (namespace !== undefined && entry.namespace !== namespace)) continue;
      if (this.live(key)) entries.push(entry);
    }
    return entries.length > 0 ? this.waitFor(entries) : undefined;
  }

  /**
   * Resolves once every entry has left, or at the deadline of the oldest: then the entries still there
   * are dropped (the next read does not wait for them again) and the wait counts as timed out.
   */
  private async waitFor(entries: PendingWrite[]): Promise<void> {
    const kind = entries[0]!.kind;
    const oldest = Math.min(...entries.map((entry) => entry.at));
    const remaining = Math.max(0, oldest + this.timeoutMs - this.clock.now());
    let timer: unknown;
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = this.clock.setTimeout(() => resolve('timeout'), remaining);
    });
    const outcome = await Promise.race([Promise.all(entries.map((entry) => entry.settled)), deadline]);
    this.clock.clearTimeout(timer);
    const timedOut = outcome === 'timeout';
    if (timedOut) {
      for (const entry of entries) {
        const key = entryKey(entry.kind, entry.namespace, entry.name);
        if (this.pending.get(key) === entry) this.drop(key);
      }
    }
    this.onWait?.(kind, timedOut);
  }
}
