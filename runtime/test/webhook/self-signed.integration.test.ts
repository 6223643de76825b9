/**
 * Self-managed webhook certificates (SelfSignedCertificates) on a real kube-apiserver (envtest): two
 * replicas, each a Manager with leader election and its webhook server, behind one local TCP proxy that
 * the webhook configurations and the conversion CRD point at (`https://127.0.0.1:<proxy>`; the TLS is the
 * replicas', the proxy passes bytes and skips a replica that is gone). The apiserver calls the defaulting,
 * validating and conversion webhooks continuously while a short validity forces rotations, the second one
 * with its leader stopped mid-rotation: no request may fail, and the rotation must finish under the new
 * leader. Needs the envtest binaries (`npx kubesmith envtest`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBinaryAssets, startEnvtest, type Envtest } from '../../src/envtest/index.js';
import { groupVersion, resourceKind } from '../../src/kinds.js';
import { HttpClient, type Client } from '../../src/client.js';
import { Manager } from '../../src/manager.js';
import type { KubernetesObject } from '../../src/types.js';
import {
  SELF_SIGNED_CERTIFICATE_KINDS,
  SelfSignedCertificates,
  convertible,
  defaulting,
  mutatePath,
  registerConversion,
  validatePath,
  validating,
  ValidationError,
  fieldError,
} from '../../src/webhook/index.js';
import { memoryLogger, waitFor } from './helpers.js';
import { startProxy } from './proxy.js';

interface GuestbookV1 extends KubernetesObject {
  spec: { replicas?: number; image?: string };
}
interface GuestbookV2 extends KubernetesObject {
  spec: { scale?: { replicas?: number }; containerImage?: string };
}
interface Secret extends KubernetesObject {
  data?: Record<string, string>;
}
interface WebhookConfiguration extends KubernetesObject {
  webhooks: { name: string; clientConfig: { url?: string; caBundle?: string }; [field: string]: unknown }[];
}

const GROUP = 'selfsigned.kubesmith.dev';
const V1 = groupVersion(GROUP, 'v1').kind<GuestbookV1>('Guestbook', { plural: 'guestbooks' });
const V2 = groupVersion(GROUP, 'v2').kind<GuestbookV2>('Guestbook', { plural: 'guestbooks' });
const SecretKind = resourceKind<Secret>({
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
});
const Mutating = resourceKind<WebhookConfiguration>({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'MutatingWebhookConfiguration',
  plural: 'mutatingwebhookconfigurations',
  namespaced: false,
});
const Validating = resourceKind<WebhookConfiguration>({
  ...Mutating,
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
});
const CrdKind = resourceKind<KubernetesObject & { spec: Record<string, unknown> }>({
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
});

const NAMESPACE = 'default';
const SECRET = 'guestbook-webhook-server-cert';
const CRD_NAME = `guestbooks.${GROUP}`;
// Short enough to rotate within the test: a rotation starts 8 s after a certificate is issued.
const TIMING = {
  validityMs: 40_000,
  renewBeforeMs: 32_000,
  bundlePropagationMs: 1_500,
  overlapMs: 2_500,
  syncIntervalMs: 300,
  resyncIntervalMs: 2_000,
  retryBaseMs: 100,
  retryCapMs: 1_000,
};

const assets = findBinaryAssets();

interface Replica {
  name: string;
  mgr: Manager;
  certificates: SelfSignedCertificates;
  certDir: string;
  running: Promise<unknown>;
  stopped: boolean;
}

describe('self-signed webhook certificates on kube-apiserver', () => {
  let env: Envtest;
  let proxy: { port: number; close: () => void };
  const replicas: Replica[] = [];
  const dirs: string[] = [];

  async function startReplica(name: string): Promise<Replica> {
    const certDir = fs.mkdtempSync(path.join(os.tmpdir(), `kubesmith-selfsigned-${name}-`));
    dirs.push(certDir);
    const { logger } = memoryLogger();
    const mgr = Manager.create({
      kubeConfig: env.kubeConfig,
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger,
      client: { disableCacheFor: SELF_SIGNED_CERTIFICATE_KINDS },
      webhookServer: { host: '127.0.0.1', port: 0, certDir, certPollIntervalMs: 200 },
      leaderElection: {
        enabled: true,
        id: 'selfsigned-test',
        namespace: NAMESPACE,
        identity: name,
        leaseDurationMs: 3_000,
        renewDeadlineMs: 2_000,
        retryPeriodMs: 300,
      },
    });
    mgr.webhookServer.register(
      mutatePath(V1),
      defaulting(V1, { default: (obj) => void (obj.spec.image ??= 'nginx:1.27') }),
    );
    mgr.webhookServer.register(
      validatePath(V1),
      validating(V1, {
        validateCreate: (obj) => {
          if ((obj.spec.replicas ?? 1) < 1) {
            throw new ValidationError(
              fieldError.invalid('spec.replicas', obj.spec.replicas, 'must be at least 1'),
            );
          }
        },
      }),
    );
    registerConversion(mgr.webhookServer, V1, [
      convertible<GuestbookV1, GuestbookV2>(V2, {
        convertTo: ({ spec, ...rest }) => ({
          ...rest,
          spec: { replicas: spec.scale?.replicas, image: spec.containerImage },
        }),
        convertFrom: ({ spec, ...rest }) => ({
          ...rest,
          spec: { scale: { replicas: spec.replicas }, containerImage: spec.image },
        }),
      }),
    ]);
    const certificates = new SelfSignedCertificates({
      client: mgr.client,
      namespace: NAMESPACE,
      secretName: SECRET,
      serviceName: 'guestbook-webhook-service',
      extraHosts: ['127.0.0.1'],
      mutatingWebhookConfigurations: ['guestbook-mutating-webhook-configuration'],
      validatingWebhookConfigurations: ['guestbook-validating-webhook-configuration'],
      conversionCrds: [CRD_NAME],
      certDir,
      logger: logger.child({ replica: name }),
      recorder: mgr.getEventRecorderFor('webhook-certificates'),
      ...TIMING,
    });
    await certificates.start();
    void mgr.ready().then(() => certificates.lead(mgr.leadership));
    const replica: Replica = { name, mgr, certificates, certDir, running: Promise.resolve(), stopped: false };
    replica.running = mgr.start().catch((error: unknown) => error);
    await waitFor(() => mgr.webhookServer.started, 10_000);
    replicas.push(replica);
    return replica;
  }

  async function stopReplica(replica: Replica): Promise<void> {
    replica.stopped = true;
    replica.certificates.stop();
    await replica.mgr.stop();
    await replica.running;
  }

  /**
   * The leader stops mid-rotation: its provider stops and it gives its Lease up, as a stopping manager
   * does; the proxy sends no new connection to it (a terminating pod's endpoint is gone), while its
   * webhook server drains the connections the apiserver holds to it. Its manager stops after the load.
   * (Closing the server at once would race the apiserver reusing an idle kept-alive connection: an EOF,
   * which the apiserver does not retry; that is the server's shutdown, not the certificate.)
   */
  async function stopLeading(replica: Replica): Promise<void> {
    replica.stopped = true;
    replica.certificates.stop();
    await replica.mgr.leaderElector!.stop();
  }

  let admin: Client;
  const client = () => admin;
  const decode = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString('utf8');
  const secretData = async () => (await client().get(SecretKind, SECRET, NAMESPACE)).data ?? {};
  const bundles = async () => [
    decode(
      (await client().get(Mutating, 'guestbook-mutating-webhook-configuration')).webhooks[0]!.clientConfig
        .caBundle,
    ),
    decode(
      (await client().get(Validating, 'guestbook-validating-webhook-configuration')).webhooks[0]!.clientConfig
        .caBundle,
    ),
    decode(
      (
        (await client().get(CrdKind, CRD_NAME)).spec as {
          conversion: { webhook: { clientConfig: { caBundle?: string } } };
        }
      ).conversion.webhook.clientConfig.caBundle,
    ),
  ];
  /** The fingerprints of the certificates each live replica serves, asked over TLS. */
  const served = () =>
    Promise.all(
      replicas
        .filter((replica) => !replica.stopped)
        .map(
          (replica) =>
            new Promise<string>((resolve, reject) => {
              const socket = tls.connect(
                {
                  host: '127.0.0.1',
                  port: replica.mgr.webhookServer.address!.port,
                  rejectUnauthorized: false,
                },
                () => {
                  resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? '');
                  socket.end();
                },
              );
              socket.on('error', reject);
            }),
        ),
    );

  beforeAll(async () => {
    proxy = await startProxy(() =>
      replicas
        .filter((replica) => !replica.stopped)
        .map((replica) => replica.mgr.webhookServer.address!.port),
    );
    const url = `https://127.0.0.1:${proxy.port}`;
    const schema = (properties: Record<string, unknown>) => ({
      openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties } } },
    });
    env = await startEnvtest({
      binaryAssetsDirectory: assets,
      crds: [
        {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name: CRD_NAME },
          spec: {
            group: GROUP,
            names: {
              kind: 'Guestbook',
              listKind: 'GuestbookList',
              plural: 'guestbooks',
              singular: 'guestbook',
            },
            scope: 'Namespaced',
            versions: [
              {
                name: 'v1',
                served: true,
                storage: true,
                schema: schema({ replicas: { type: 'integer' }, image: { type: 'string' } }),
              },
              {
                name: 'v2',
                served: true,
                storage: false,
                schema: schema({
                  scale: { type: 'object', properties: { replicas: { type: 'integer' } } },
                  containerImage: { type: 'string' },
                }),
              },
            ],
            // No caBundle: the certificate provider puts it there.
            conversion: {
              strategy: 'Webhook',
              webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `${url}/convert` } },
            },
          },
        },
      ],
    });
    admin = new HttpClient(env.kubeConfig);
    const rules = [
      {
        apiGroups: [GROUP],
        apiVersions: ['v1'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['guestbooks'],
      },
    ];
    const common = {
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      failurePolicy: 'Fail',
      rules,
      timeoutSeconds: 5,
    };
    await admin.create(Mutating, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'guestbook-mutating-webhook-configuration' },
      webhooks: [
        { name: 'mguestbook-v1.kb.io', clientConfig: { url: `${url}${mutatePath(V1)}` }, ...common },
      ],
    });
    await admin.create(Validating, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'guestbook-validating-webhook-configuration' },
      webhooks: [
        { name: 'vguestbook-v1.kb.io', clientConfig: { url: `${url}${validatePath(V1)}` }, ...common },
      ],
    });
  }, 120_000);

  afterAll(async () => {
    for (const replica of replicas) if (replica.mgr.webhookServer.started) await stopReplica(replica);
    (admin as HttpClient | undefined)?.close();
    proxy?.close();
    await env?.stop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('two replicas answer, rotate with no failed request, and finish a rotation whose leader stopped midway', async () => {
    const [a, b] = [await startReplica('replica-a'), await startReplica('replica-b')];
    const api = client();
    let created = 0;
    const createOne = async (version: 'v1' | 'v2') => {
      const name = `g-${created++}`;
      if (version === 'v1') {
        const object = await api.create(V1, {
          apiVersion: V1.apiVersion,
          kind: 'Guestbook',
          metadata: { name, namespace: NAMESPACE },
          spec: { replicas: 2 },
        });
        expect(object.spec.image).toBe('nginx:1.27'); // defaulted by the mutating webhook
      }
      // Read back in v2: stored as v1, so the apiserver calls the conversion webhook.
      const converted = await api.get(V2, name, NAMESPACE).catch(() => undefined);
      if (version === 'v1') expect(converted?.spec.containerImage).toBe('nginx:1.27');
    };
    // The webhooks answer once the leader has put the CA into every caBundle.
    await waitFor(async () => {
      try {
        await createOne('v1');
        return true;
      } catch {
        return false;
      }
    }, 30_000);
    const firstCa = decode((await secretData())['ca.crt']);
    expect(await bundles()).toEqual([firstCa, firstCa, firstCa]);
    await waitFor(() => isLeader(a) || isLeader(b), 10_000);
    const leader = isLeader(a) ? a : b;

    // Requests sent continuously through the apiserver from here on: each must succeed.
    const failures: string[] = [];
    let sent = 0;
    let sending = true;
    const refused = { count: 0 };
    const load = (async () => {
      while (sending) {
        sent++;
        try {
          await createOne('v1');
          // The validating webhook answers too: a refusal is its answer, not a failure.
          await api
            .create(V1, {
              apiVersion: V1.apiVersion,
              kind: 'Guestbook',
              metadata: { name: `bad-${sent}`, namespace: NAMESPACE },
              spec: { replicas: 0 },
            })
            .then(
              () => failures.push('an invalid Guestbook was admitted'),
              (error: Error) => {
                if (/must be at least 1/.test(error.message)) refused.count++;
                else failures.push(error.message);
              },
            );
        } catch (error) {
          failures.push((error as Error).message);
        }
      }
    })();

    // Rotation 1, led by the first leader: the new CA joins the bundle before the pair switches.
    await waitFor(async () => 'next-ca.crt' in (await secretData()), 20_000);
    const started1 = Date.now();
    const sentBefore1 = sent;
    await waitFor(
      async () =>
        (await bundles()).every((bundle) => bundle.includes(firstCa) && bundle.length > firstCa.length),
      10_000,
    );
    await waitFor(async () => {
      const data = await secretData();
      return !('previous-ca.crt' in data) && !('next-ca.crt' in data) && decode(data['ca.crt']) !== firstCa;
    }, 20_000);
    const rotation1 = { ms: Date.now() - started1, requests: sent - sentBefore1 };
    const secondCa = decode((await secretData())['ca.crt']);
    await waitFor(async () => (await bundles()).every((bundle) => bundle === secondCa), 10_000);
    const fingerprint = new X509Certificate(decode((await secretData())['tls.crt'])).fingerprint256;
    await waitFor(async () => (await served()).every((served) => served === fingerprint), 5_000);

    // Rotation 2: the leader stops as soon as the next pair is written; the other replica finishes it.
    await waitFor(async () => 'next-ca.crt' in (await secretData()), 20_000);
    const started2 = Date.now();
    const sentBefore2 = sent;
    // Timed to the Secret's last step, not to the end of the old leader's graceful stop.
    const stopping = stopLeading(leader);
    const follower = leader === a ? b : a;
    await waitFor(() => isLeader(follower), 10_000);
    await waitFor(async () => {
      const data = await secretData();
      return !('previous-ca.crt' in data) && !('next-ca.crt' in data) && decode(data['ca.crt']) !== secondCa;
    }, 20_000);
    const thirdCa = decode((await secretData())['ca.crt']);
    await waitFor(async () => (await bundles()).every((bundle) => bundle === thirdCa), 10_000);
    const rotation2 = { ms: Date.now() - started2, requests: sent - sentBefore2 };
    await stopping;
    const fingerprint3 = new X509Certificate(decode((await secretData())['tls.crt'])).fingerprint256;
    await waitFor(async () => (await served()).every((served) => served === fingerprint3), 5_000);

    sending = false;
    await load;
    console.log(
      `rotation figures: rotation 1 ${rotation1.ms} ms, ${rotation1.requests} request rounds; ` +
        `rotation 2 with a leader change ${rotation2.ms} ms, ${rotation2.requests} request rounds; ` +
        `${sent} rounds in all (create v1 + read v2 + refused create), ${failures.length} failures ` +
        JSON.stringify(failures),
    );
    expect(failures).toEqual([]);
    expect(refused.count).toBeGreaterThan(0);
    expect(rotation1.requests).toBeGreaterThan(0);
    expect(rotation2.requests).toBeGreaterThan(0);
  }, 150_000);
});

describe('self-signed webhook certificates: an unusable Secret', () => {
  it('is replaced by a replica before its server starts (no leader is elected before that)', async () => {
    const env = await startEnvtest({ binaryAssetsDirectory: assets });
    const admin = new HttpClient(env.kubeConfig);
    const certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubesmith-selfsigned-broken-'));
    try {
      await admin.create(SecretKind, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: SECRET, namespace: NAMESPACE },
        data: { 'tls.crt': Buffer.from('not a certificate').toString('base64') },
      });
      const certificates = new SelfSignedCertificates({
        client: admin,
        namespace: NAMESPACE,
        secretName: SECRET,
        serviceName: 'guestbook-webhook-service',
        certDir,
        logger: memoryLogger().logger,
        ...TIMING,
      });
      await certificates.start(AbortSignal.timeout(20_000));
      certificates.stop();
      const data = (await admin.get(SecretKind, SECRET, NAMESPACE)).data ?? {};
      const served = fs.readFileSync(path.join(certDir, 'tls.crt'), 'utf8');
      expect(served).toBe(Buffer.from(data['tls.crt']!, 'base64').toString('utf8'));
      expect(
        new X509Certificate(served).checkIssued(new X509Certificate(Buffer.from(data['ca.crt']!, 'base64'))),
      ).toBe(true);
    } finally {
      admin.close();
      await env.stop();
      fs.rmSync(certDir, { recursive: true, force: true });
    }
  }, 120_000);
});

function isLeader(replica: Replica): boolean {
  return !replica.stopped && replica.mgr.leaderElector?.isLeader === true;
}
