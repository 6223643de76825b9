/**
 * Webhook serving certificates without cert-manager (`init --cert-provider self`), as knative's and
 * karpenter's certificate reconcilers do it:
 *
 * - every replica, before its webhook server starts, makes sure the Secret exists (the first to get there
 *   creates it: a create is atomic) and writes its pair into the server's certificate directory; then it
 *   reads the Secret again every `syncIntervalMs` and writes a changed pair there, which the server's
 *   certificate reload takes (webhook/internal/certs.ts);
 * - the leader (`lead`, once it holds the manager's Lease) puts the CA into the `caBundle` of the
 *   project's webhook configurations and conversion CRDs, and rotates before expiry without a failed
 *   request: the new CA joins the bundle, the API servers take it (`bundlePropagationMs`), the serving pair
 *   switches, every replica takes it (`overlapMs`), then the old CA leaves the bundle.
 *
 * The Secret records each step (internal/rotation.ts), so a leader that takes over mid-rotation goes on
 * where the last one stopped. Every API call has a time limit; failures are retried with a capped,
 * jittered backoff; each step is logged and recorded as an Event of the Secret.
 *
 * ```ts
 * const certificates = new SelfSignedCertificates({ client, namespace, secretName, serviceName, ... });
 * await certificates.start(); // before mgr.start(): the webhook server reads the pair at its start
 * void mgr.ready().then(() => certificates.lead(mgr.leadership));
 * await mgr.start();
 * certificates.stop();
 * ```
 */
import { nodeCrypto, nodeFs as fs, nodePath as path } from '../internal/node-modules.js';
import type { Client } from '../client.js';
import { isAlreadyExists, isConflict, isNotFound } from '../errors.js';
import type { EventRecorder } from '../events.js';
import { resourceKind, type ResourceKind } from '../kinds.js';
import type { Logger } from '../logger.js';
import type { KubernetesObject } from '../types.js';
import {
  KEYS,
  SWITCHED_AT,
  bundleOf,
  decodeData,
  encodeData,
  phaseOf,
  renewalReason,
  renewalTime,
  type Material,
} from './internal/rotation.js';

interface Secret extends KubernetesObject {
  type?: string;
  data?: Record<string, string>;
}
interface WebhookConfiguration extends KubernetesObject {
  webhooks?: { name: string; clientConfig?: { caBundle?: string } }[];
}
interface Crd extends KubernetesObject {
  spec?: { conversion?: { strategy?: string; webhook?: { clientConfig?: { caBundle?: string } } } };
}

const SecretKind = resourceKind<Secret>({
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
});
const MutatingKind = resourceKind<WebhookConfiguration>({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'MutatingWebhookConfiguration',
  plural: 'mutatingwebhookconfigurations',
  namespaced: false,
});
const ValidatingKind = resourceKind<WebhookConfiguration>({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
});
const CrdKind = resourceKind<Crd>({
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
});

const DAY_MS = 86_400_000;

/**
 * The kinds the provider reads: give them to the manager's `client.disableCacheFor`, so that `mgr.client`
 * reads them from the API server (by name: the RBAC grants get on these objects only, not list or watch).
 */
export const SELF_SIGNED_CERTIFICATE_KINDS: readonly ResourceKind<unknown>[] = [
  SecretKind,
  MutatingKind,
  ValidatingKind,
  CrdKind,
];

export interface SelfSignedCertificatesOptions {
  /**
   * The manager's `mgr.client`, with SELF_SIGNED_CERTIFICATE_KINDS in its `client.disableCacheFor`: its
   * writes are fenced, so a replica that lost its leadership writes nothing more.
   */
  client: Client;
  /** The namespace of the Secret and of the webhook Service: the manager's own. */
  namespace: string;
  /** The Secret holding the CA and the serving pair, such as `guestbook-webhook-server-cert`. */
  secretName: string;
  /** The webhook Service: the certificate names `<service>.<namespace>.svc` and `.svc.cluster.local`. */
  serviceName: string;
  /** More names or IPs for the certificate (a test's `127.0.0.1`). Default: none. */
  extraHosts?: readonly string[];
  mutatingWebhookConfigurations?: readonly string[];
  validatingWebhookConfigurations?: readonly string[];
  /** The CRDs whose conversion webhook this server answers. */
  conversionCrds?: readonly string[];
  /** The webhook server's `certDir`, `certName` and `keyName`: where each replica writes its pair. */
  certDir: string;
  certName?: string;
  keyName?: string;
  /** How long a CA and serving certificate are valid. Default: 90 days (cert-manager's). */
  validityMs?: number;
  /** Rotate this long before expiry. Default: 30 days (cert-manager's: a third of 90 days). */
  renewBeforeMs?: number;
  /** How long the API servers get to take a new caBundle before the serving pair switches. Default: 10 s. */
  bundlePropagationMs?: number;
  /**
   * How long the old CA stays in the caBundle after the switch: every replica must have read the new pair
   * by then (`syncIntervalMs`, plus the server's reload). Default: 60 s.
   */
  overlapMs?: number;
  /** How often each replica reads the Secret. Default: 5 000 ms. */
  syncIntervalMs?: number;
  /** How often the leader checks the caBundles again (someone may have reset one). Default: 60 000 ms. */
  resyncIntervalMs?: number;
  /** The time limit of each API call. Default: 10 000 ms. */
  requestTimeoutMs?: number;
  /** The first wait after a failure; it doubles, with jitter, up to `retryCapMs`. Default: 500 ms. */
  retryBaseMs?: number;
  /** The longest wait between retries. Default: 30 000 ms. */
  retryCapMs?: number;
  logger: Logger;
  /** Records each step as an Event of the Secret. Default: logs only. */
  recorder?: EventRecorder;
  /** Test seam: the wall clock, ms since the epoch. */
  now?: () => number;
}

/** Figures of the last rotation, for logs and tests. */
export interface RotationFigures {
  /** When the rotation began (the next pair was written). */
  startedAt: number;
  /** When the serving pair switched. */
  switchedAt?: number;
  /** When the old CA left the bundle: the rotation is done. */
  finishedAt?: number;
}

export class SelfSignedCertificates {
  private readonly o: Required<Omit<SelfSignedCertificatesOptions, 'recorder' | 'extraHosts'>> & {
    recorder?: EventRecorder;
  };
  readonly hosts: readonly string[];
  private readonly stopped = new AbortController();
  private poll: NodeJS.Timeout | undefined;
  private served: string | undefined;
  /** The rotations this process led, oldest first. */
  readonly rotations: RotationFigures[] = [];

  constructor(options: SelfSignedCertificatesOptions) {
    this.o = {
      certName: 'tls.crt',
      keyName: 'tls.key',
      mutatingWebhookConfigurations: [],
      validatingWebhookConfigurations: [],
      conversionCrds: [],
      validityMs: 90 * DAY_MS,
      renewBeforeMs: 30 * DAY_MS,
      bundlePropagationMs: 10_000,
      overlapMs: 60_000,
      syncIntervalMs: 5_000,
      resyncIntervalMs: 60_000,
      requestTimeoutMs: 10_000,
      retryBaseMs: 500,
      retryCapMs: 30_000,
      now: Date.now,
      ...options,
    };
    const { validityMs, renewBeforeMs, bundlePropagationMs, overlapMs, syncIntervalMs } = this.o;
    // A rotation must finish while the old certificate is still valid, and replicas must read the Secret
    // within the overlap.
    if (!(renewBeforeMs < validityMs) || !(bundlePropagationMs + overlapMs < renewBeforeMs)) {
      throw new Error(
        `self-signed certificates: renewBefore (${renewBeforeMs} ms) must be under the validity (${validityMs} ms) ` +
          `and over bundlePropagation + overlap (${bundlePropagationMs + overlapMs} ms)`,
      );
    }
    if (!(syncIntervalMs < overlapMs)) {
      throw new Error(
        `self-signed certificates: the overlap (${overlapMs} ms) must be longer than the sync interval (${syncIntervalMs} ms)`,
      );
    }
    const service = `${this.o.serviceName}.${this.o.namespace}.svc`;
    this.hosts = [service, `${service}.cluster.local`, ...(options.extraHosts ?? [])];
  }

  /**
   * Every replica, before the webhook server starts: the Secret exists and its serving pair is in
   * `certDir`; from then on a changed pair is written there within `syncIntervalMs`. Retries until it
   * succeeds or `signal` aborts (then throws).
   */
  async start(signal?: AbortSignal): Promise<void> {
    const aborted = anySignal(this.stopped.signal, signal);
    const secret = await this.retrying('read or create the certificate Secret', aborted, () =>
      this.usableSecret(),
    );
    this.serve(secret);
    this.schedulePoll();
  }

  /**
   * The leader's loop: caBundles, then rotations, until `signal` aborts (leadership lost, or the manager
   * stopping) or stop(). Never rejects.
   */
  async lead(signal: AbortSignal): Promise<void> {
    const aborted = anySignal(this.stopped.signal, signal);
    this.o.logger.info('leading webhook certificates', { secret: this.o.secretName });
    while (!aborted.aborted) {
      try {
        const waitMs = await this.retrying('reconcile the webhook certificate', aborted, () =>
          this.reconcile(aborted),
        );
        await sleep(waitMs, aborted);
      } catch (error) {
        if (aborted.aborted) break;
        this.o.logger.error('webhook certificates: unexpected failure', { error });
        await sleep(this.o.retryCapMs, aborted).catch(() => undefined);
      }
    }
    this.o.logger.info('stopped leading webhook certificates', { secret: this.o.secretName });
  }

  stop(): void {
    this.stopped.abort(new Error('stopped'));
    clearTimeout(this.poll);
  }

  /** One step of the leader; resolves with how long to wait before the next one. */
  private async reconcile(signal: AbortSignal): Promise<number> {
    const secret = await this.ensureSecret();
    const data = decodeData(secret.data);
    const phase = phaseOf(data, secret.metadata?.annotations ?? {});
    const now = this.o.now();
    if (typeof phase === 'string') {
      // A Secret edited by hand or half-written by something else: start afresh (requests may fail until
      // the caBundles have the new CA: say it).
      await this.event(
        secret,
        'Warning',
        'CertificateReset',
        'Reset',
        `${phase}: issuing a new CA and certificate`,
      );
      const fresh = await this.issue();
      await this.writeSecret(secret, materialData(fresh), {});
      return 0;
    }
    await this.ensureBundles(bundleOf(phase), secret);
    switch (phase.phase) {
      case 'steady': {
        const reason = renewalReason(phase.current.cert, this.hosts, now, this.o.renewBeforeMs);
        if (reason === undefined) {
          const due = renewalTime(phase.current.cert, this.o.renewBeforeMs) - now;
          return Math.max(0, Math.min(due, this.o.resyncIntervalMs));
        }
        const next = await this.issue();
        await this.writeSecret(
          secret,
          {
            ...materialData(phase.current),
            [KEYS.nextCa]: next.ca,
            [KEYS.nextCert]: next.cert,
            [KEYS.nextKey]: next.key,
          },
          {},
        );
        this.rotations.push({ startedAt: now });
        await this.event(
          secret,
          'Normal',
          'CertificateRotating',
          'Rotate',
          `rotating the webhook certificate: ${reason}`,
        );
        return 0;
      }
      case 'adding': {
        // The bundle holds both CAs now; the API servers take it from their informers.
        await sleep(this.o.bundlePropagationMs, signal);
        const switched = await this.writeSecret(
          secret,
          { ...materialData(phase.next), [KEYS.previousCa]: phase.current.ca },
          { [SWITCHED_AT]: new Date(this.o.now()).toISOString() },
        );
        this.serve(switched);
        this.figures().switchedAt = this.o.now();
        await this.event(
          secret,
          'Normal',
          'CertificateSwitched',
          'Rotate',
          'serving the new webhook certificate; the old CA stays in the caBundle for the overlap',
        );
        return 0;
      }
      case 'removing': {
        if (Number.isNaN(phase.switchedAt)) {
          // No time of the switch recorded (an edit by hand): the overlap counts from now.
          await this.writeSecret(secret, data, { [SWITCHED_AT]: new Date(now).toISOString() });
          return 0;
        }
        const left = phase.switchedAt + this.o.overlapMs - now;
        if (left > 0) return left;
        await this.ensureBundles(phase.current.ca, secret);
        await this.writeSecret(secret, materialData(phase.current), {});
        this.figures().finishedAt = this.o.now();
        await this.event(
          secret,
          'Normal',
          'CertificateRotated',
          'Rotate',
          'the old CA left the caBundle: rotation done',
        );
        return 0;
      }
    }
  }

  /** The rotation in progress (a leader that took over mid-rotation starts its figures there). */
  private figures(): RotationFigures {
    let last = this.rotations.at(-1);
    if (last === undefined || last.finishedAt !== undefined) {
      last = { startedAt: this.o.now() };
      this.rotations.push(last);
    }
    return last;
  }

  /**
   * The Secret with a usable pair. An unusable one (edited by hand) is replaced here, by any replica: the
   * webhook server cannot start without a pair, and the leader is elected only once it has started.
   */
  private async usableSecret(): Promise<Secret> {
    const secret = await this.ensureSecret();
    const problem = phaseOf(decodeData(secret.data), secret.metadata?.annotations ?? {});
    if (typeof problem !== 'string') return secret;
    await this.event(
      secret,
      'Warning',
      'CertificateReset',
      'Reset',
      `${problem}: issuing a new CA and certificate`,
    );
    // Conditional on the resourceVersion read: a replica that loses the race retries and reads the winner's.
    return await this.writeSecret(secret, materialData(await this.issue()), {});
  }

  /** The Secret, created with a new CA and pair when there is none (another replica may win the race). */
  private async ensureSecret(): Promise<Secret> {
    const { client, namespace, secretName, requestTimeoutMs: timeoutMs } = this.o;
    try {
      return await client.get(SecretKind, secretName, namespace, { timeoutMs });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    const fresh = await this.issue();
    try {
      const created = await client.create(
        SecretKind,
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: secretName, namespace },
          type: 'Opaque',
          data: encodeData(materialData(fresh)),
        },
        { timeoutMs },
      );
      await this.event(
        created,
        'Normal',
        'CertificateCreated',
        'Create',
        `created a CA and a serving certificate for ${this.hosts.join(', ')}`,
      );
      return created;
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      return await client.get(SecretKind, secretName, namespace, { timeoutMs });
    }
  }

  /** Replaces the Secret's data and annotations (kept: the others); a conflict is retried from a fresh read. */
  private async writeSecret(
    secret: Secret,
    data: Record<string, string>,
    annotations: Record<string, string>,
  ): Promise<Secret> {
    const kept = Object.fromEntries(
      Object.entries(secret.metadata?.annotations ?? {}).filter(([key]) => key !== SWITCHED_AT),
    );
    return await this.o.client.update(
      SecretKind,
      {
        ...secret,
        metadata: { ...secret.metadata, annotations: { ...kept, ...annotations } },
        data: encodeData(data),
      },
      { timeoutMs: this.o.requestTimeoutMs },
    );
  }

  /** Puts `bundle` into every configured webhook and conversion CRD whose caBundle differs. */
  private async ensureBundles(bundle: string, secret: Secret): Promise<void> {
    const caBundle = Buffer.from(bundle, 'utf8').toString('base64');
    const timeoutMs = this.o.requestTimeoutMs;
    const client = this.o.client;
    const configurations = [
      ...this.o.mutatingWebhookConfigurations.map((name) => [MutatingKind, name] as const),
      ...this.o.validatingWebhookConfigurations.map((name) => [ValidatingKind, name] as const),
    ];
    for (const [kind, name] of configurations) {
      const object = await this.getOrWarn(kind, name, secret);
      if (!object) continue;
      const webhooks = object.webhooks ?? [];
      // A JSON patch that tests the resourceVersion and each webhook's name: nothing else is touched,
      // and a configuration changed meanwhile fails the patch (retried from a fresh read).
      const ops = webhooks.flatMap((webhook, i) =>
        webhook.clientConfig?.caBundle === caBundle
          ? []
          : [
              { op: 'test', path: `/webhooks/${i}/name`, value: webhook.name },
              { op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: caBundle },
            ],
      );
      if (ops.length === 0) continue;
      await client.patch(
        kind,
        name,
        '',
        [{ op: 'test', path: '/metadata/resourceVersion', value: object.metadata?.resourceVersion }, ...ops],
        { type: 'json', timeoutMs },
      );
      this.o.logger.info('updated the caBundle', { kind: kind.kind, name });
    }
    for (const name of this.o.conversionCrds) {
      const crd = await this.getOrWarn(CrdKind, name, secret);
      if (!crd) continue;
      const conversion = crd.spec?.conversion;
      if (conversion?.strategy !== 'Webhook' || !conversion.webhook?.clientConfig) {
        this.o.logger.warn('the CRD has no conversion webhook: its caBundle is left alone', { crd: name });
        continue;
      }
      if (conversion.webhook.clientConfig.caBundle === caBundle) continue;
      await client.patch(
        CrdKind,
        name,
        '',
        [
          { op: 'test', path: '/metadata/resourceVersion', value: crd.metadata?.resourceVersion },
          { op: 'add', path: '/spec/conversion/webhook/clientConfig/caBundle', value: caBundle },
        ],
        { type: 'json', timeoutMs },
      );
      this.o.logger.info('updated the caBundle', { kind: 'CustomResourceDefinition', name });
    }
  }

  /** The object, or undefined (logged and recorded) when it is not installed: the next resync tries again. */
  private async getOrWarn<T>(kind: ResourceKind<T>, name: string, secret: Secret): Promise<T | undefined> {
    try {
      return await this.o.client.get(kind, name, undefined, { timeoutMs: this.o.requestTimeoutMs });
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await this.event(
        secret,
        'Warning',
        'CaBundleTargetMissing',
        'Inject',
        `${kind.kind} ${name} not found: its caBundle is not set`,
      );
      return undefined;
    }
  }

  /** Writes the Secret's serving pair into certDir when it changed; the server's reload takes it. */
  private serve(secret: Secret): void {
    const data = decodeData(secret.data);
    const cert = data[KEYS.cert];
    const key = data[KEYS.key];
    if (cert === undefined || key === undefined || cert === this.served) return;
    const { certDir, certName, keyName } = this.o;
    fs.mkdirSync(certDir, { recursive: true, mode: 0o700 });
    // Key first, each by a rename: the server's reload checks that the two match, so a half-switched
    // pair is skipped and the next read takes the whole one.
    writeAtomically(path.join(certDir, keyName), key, 0o600);
    writeAtomically(path.join(certDir, certName), cert, 0o644);
    this.served = cert;
    this.o.logger.info('wrote the webhook serving certificate', { certDir, secret: this.o.secretName });
  }

  private schedulePoll(): void {
    if (this.stopped.signal.aborted) return;
    this.poll = setTimeout(() => {
      const { client, secretName, namespace, requestTimeoutMs: timeoutMs } = this.o;
      client
        .get(SecretKind, secretName, namespace, { timeoutMs, signal: this.stopped.signal })
        .then((secret) => this.serve(secret))
        .catch((error: unknown) => {
          if (!this.stopped.signal.aborted) {
            this.o.logger.warn('cannot read the webhook certificate Secret; serving the previous pair', {
              error,
            });
          }
        })
        .finally(() => this.schedulePoll());
    }, this.o.syncIntervalMs);
    this.poll.unref();
  }

  /** A new CA and serving pair (the certificate code loads at the first, as node:crypto's ES face is heavy). */
  private async issue(): Promise<Material> {
    const { makeServingCertificates } = await import('../internal/certs.js');
    const made = makeServingCertificates(this.hosts, {
      validDays: this.o.validityMs / DAY_MS,
      now: new Date(this.o.now()),
      name: `${this.o.serviceName}.${this.o.namespace}`,
    });
    return { ca: made.caCert, cert: made.cert, key: made.key };
  }

  /** Runs `fn` until it succeeds; waits between failures double from retryBaseMs up to retryCapMs, jittered. */
  private async retrying<T>(what: string, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        const capped = Math.min(this.o.retryCapMs, this.o.retryBaseMs * 2 ** Math.min(attempt, 20));
        // Half fixed, half random: replicas that failed together do not retry together.
        const waitMs = capped / 2 + (Math.random() * capped) / 2;
        const log = isConflict(error) ? this.o.logger.info : this.o.logger.warn;
        log.call(this.o.logger, `cannot ${what}; retrying`, {
          error,
          attempt: attempt + 1,
          retryInMs: Math.round(waitMs),
        });
        await sleep(waitMs, signal);
      }
    }
  }

  private async event(
    secret: Secret,
    type: 'Normal' | 'Warning',
    reason: string,
    action: string,
    note: string,
  ): Promise<void> {
    const log = type === 'Normal' ? this.o.logger.info : this.o.logger.warn;
    log.call(this.o.logger, note, { reason, secret: this.o.secretName, namespace: this.o.namespace });
    await this.o.recorder?.event(
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { ...secret.metadata, name: this.o.secretName, namespace: this.o.namespace },
      },
      type,
      reason,
      action,
      note,
    );
  }
}

function materialData(material: Material): Record<string, string> {
  return { [KEYS.ca]: material.ca, [KEYS.cert]: material.cert, [KEYS.key]: material.key };
}

function writeAtomically(file: string, content: string, mode: number): void {
  const temporary = `${file}.${nodeCrypto().randomUUID()}.tmp`;
  fs.writeFileSync(temporary, content, { mode });
  fs.renameSync(temporary, file);
}

/** Waits `ms`; rejects with the signal's reason when it aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    // The provider's waits never keep a process alive: once the manager has stopped, it exits.
    timer.unref();
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function anySignal(a: AbortSignal, b: AbortSignal | undefined): AbortSignal {
  return b === undefined ? a : AbortSignal.any([a, b]);
}
