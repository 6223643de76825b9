/**
 * `init --cert-provider self` in envtest's cluster mode: the operator installed from `kubesmith
 * build-installer`'s dist/install.yaml, without cert-manager (no stand-in CRD: none of its kinds is in the
 * file), becomes available; then two replicas of its manager run as its ServiceAccount (impersonated: the
 * installed RBAC is what they get) with leader election on, each a Manager in this process, since KWOK's
 * pods run nothing. The installed webhook configurations and the conversion CRD are pointed at
 * `https://127.0.0.1:<proxy>` (a local TCP proxy, both replicas behind it: the apiserver cannot reach the
 * Service), keeping their paths. Checked: the webhooks answer through the apiserver once the leader has set
 * the caBundles; a rotation forced by a short validity, and one during which the leader's manager stops (as
 * SIGTERM stops it), with requests sent continuously and none failing. The apiserver speaks HTTP/1.1 to
 * the replicas (they offer no HTTP/2, the default), on connections it keeps alive. The names the replicas
 * use are read from the generated src/webhook-certificates.ts.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient, type Client } from '../../runtime/src/client.js';
import { binaryAssetsOrSkip, startEnvtest, type Envtest } from '../../runtime/src/envtest/index.js';
import { groupVersion, resourceKind } from '../../runtime/src/kinds.js';
import { loadKubeConfig } from '../../runtime/src/kubeconfig.js';
import { createLogger } from '../../runtime/src/logger.js';
import { Manager } from '../../runtime/src/manager.js';
import type { KubernetesObject } from '../../runtime/src/types.js';
import {
  SELF_SIGNED_CERTIFICATE_KINDS,
  SelfSignedCertificates,
  ValidationError,
  convertible,
  defaulting,
  fieldError,
  registerConversion,
  validating,
} from '../../runtime/src/webhook/index.js';
import { startProxy } from '../../runtime/test/webhook/proxy.js';
import { read, removeTemp, run, tempDir } from '../helpers/run.js';

const binaries = binaryAssetsOrSkip({ controllers: true });
const IMAGE = 'registry.example.com/guestbook-operator:v1.2.3';
const NAMESPACE = 'guestbook-system';
const SERVICE_ACCOUNT = `system:serviceaccount:${NAMESPACE}:guestbook-controller-manager`;

interface Guestbook extends KubernetesObject {
  spec?: { foo?: string };
}
interface Secret extends KubernetesObject {
  data?: Record<string, string>;
}
interface WebhookConfiguration extends KubernetesObject {
  webhooks: { name: string; clientConfig: { caBundle?: string; service?: { path?: string } } }[];
}
const V1 = groupVersion('webapp.example.com', 'v1').kind<Guestbook>('Guestbook', { plural: 'guestbooks' });
const V2 = groupVersion('webapp.example.com', 'v2').kind<Guestbook>('Guestbook', { plural: 'guestbooks' });
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

/** The names src/webhook-certificates.ts gives the provider. */
interface ProviderNames {
  secretName: string;
  serviceName: string;
  mutating: string[];
  validating: string[];
  crds: string[];
}

function providerNames(source: string): ProviderNames {
  const one = (key: string) => new RegExp(`${key}: name\\('\\w+', '([^']+)'\\)`).exec(source)?.[1] ?? '';
  const list = (key: string) =>
    [
      ...(new RegExp(`${key}: (?:names\\('\\w+', )?\\[([^\\]]*)\\]`).exec(source)?.[1] ?? '').matchAll(
        /'([^']+)'/g,
      ),
    ].map((m) => m[1]!);
  return {
    secretName: one('secretName'),
    serviceName: one('serviceName'),
    mutating: list('mutatingWebhookConfigurations'),
    validating: list('validatingWebhookConfigurations'),
    crds: list('conversionCrds'),
  };
}

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

let dir: string;
beforeAll(async () => {
  dir = await tempDir('guestbook');
  for (const args of [
    ['init', '--domain', 'example.com', '--skip-install', '--cert-provider', 'self'],
    ['create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook'],
    ['create', 'api', '--group', 'webapp', '--version', 'v2', '--kind', 'Guestbook', '--controller=false'],
    [
      'create',
      'webhook',
      ...['--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook'],
      ...['--defaulting', '--programmatic-validation', '--conversion', '--spoke', 'v2'],
    ],
    ['build-installer', '--img', IMAGE],
  ]) {
    const result = await run(dir, ...args);
    expect(result.code, result.stderr).toBe(0);
  }
}, 180_000);
afterAll(async () => {
  await removeTemp(dir);
});

interface Replica {
  mgr: Manager;
  certificates: SelfSignedCertificates;
  running: Promise<unknown>;
  stopped: boolean;
}

describe.skipIf(binaries === undefined)('--cert-provider self, installed from dist/install.yaml', () => {
  let env: Envtest;
  let admin: HttpClient;
  let proxy: { port: number; close: () => void };
  let names: ProviderNames;
  const replicas: Replica[] = [];
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'kubesmith-cert-self-'));
  const kubectl = (...args: string[]) =>
    execa(path.join(binaries!, 'kubectl'), ['--kubeconfig', env.kubeconfigPath, ...args], {
      reject: false,
      all: true,
    });

  beforeAll(async () => {
    env = await startEnvtest({ binaryAssetsDirectory: binaries!, controllers: true });
    admin = new HttpClient(env.kubeConfig);
    proxy = await startProxy(() =>
      replicas.filter((r) => !r.stopped).map((r) => r.mgr.webhookServer.address!.port),
    );
  }, 120_000);
  afterAll(async () => {
    for (const replica of replicas) if (replica.mgr.webhookServer.started) await stopReplica(replica);
    proxy?.close();
    admin?.close();
    await env?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }, 60_000);

  /** A replica of the manager as the operator's ServiceAccount: the kubeconfig impersonates it. */
  async function startReplica(name: string): Promise<Replica> {
    const kubeconfig = path.join(scratch, `${name}.kubeconfig`);
    const config = parse(await readFile(env.kubeconfigPath, 'utf8')) as {
      users: { user: Record<string, unknown> }[];
    };
    for (const user of config.users) user.user['as'] = SERVICE_ACCOUNT;
    await writeFile(kubeconfig, JSON.stringify(config));
    const certDir = path.join(scratch, name);
    const logger = createLogger({ level: process.env['LOG_LEVEL'] === 'debug' ? 'debug' : 'error' });
    const mgr = Manager.create({
      kubeConfig: loadKubeConfig({ kubeconfig }),
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger,
      client: { disableCacheFor: SELF_SIGNED_CERTIFICATE_KINDS },
      webhookServer: { host: '127.0.0.1', port: 0, certDir, certPollIntervalMs: 200 },
      leaderElection: {
        enabled: true,
        id: 'guestbook.example.com',
        namespace: NAMESPACE,
        identity: name,
        leaseDurationMs: 3_000,
        renewDeadlineMs: 2_000,
        retryPeriodMs: 300,
      },
    });
    mgr.webhookServer.register(
      '/mutate-webapp-example-com-v1-guestbook',
      defaulting(V1, { default: (obj) => void ((obj.spec ??= {}).foo ??= 'defaulted') }),
    );
    mgr.webhookServer.register(
      '/validate-webapp-example-com-v1-guestbook',
      validating(V1, {
        validateCreate: (obj) => {
          if (obj.spec?.foo === 'bad')
            throw new ValidationError(fieldError.invalid('spec.foo', 'bad', 'is bad'));
        },
      }),
    );
    registerConversion(mgr.webhookServer, V1, [
      convertible<Guestbook, Guestbook>(V2, { convertTo: (o) => ({ ...o }), convertFrom: (o) => ({ ...o }) }),
    ]);
    const certificates = new SelfSignedCertificates({
      client: mgr.client,
      namespace: NAMESPACE,
      secretName: names.secretName,
      serviceName: names.serviceName,
      extraHosts: ['127.0.0.1'],
      mutatingWebhookConfigurations: names.mutating,
      validatingWebhookConfigurations: names.validating,
      conversionCrds: names.crds,
      certDir,
      logger,
      recorder: mgr.getEventRecorderFor('webhook-certificates'),
      ...TIMING,
    });
    await certificates.start();
    void mgr.ready().then(() => certificates.lead(mgr.leadership));
    const replica: Replica = { mgr, certificates, running: Promise.resolve(), stopped: false };
    replica.running = mgr.start().catch((error: unknown) => error);
    replicas.push(replica);
    await eventually(() => mgr.webhookServer.started, 10_000);
    return replica;
  }

  async function stopReplica(replica: Replica): Promise<void> {
    replica.stopped = true;
    replica.certificates.stop();
    await replica.mgr.stop();
    await replica.running;
  }

  /**
   * The leader stops mid-rotation as SIGTERM stops it (the manager's stop(): its provider stops, it gives its
   * Lease up, its webhook server drains for its default shutdownDelayMs). The proxy sends no new connection
   * to it from then on (a terminating pod's endpoint is gone), while the apiserver still sends on the
   * connections it keeps alive to it: the drain answers them with `Connection: close`, and closes only those
   * left idle at its end.
   */
  const isLeader = (replica: Replica) => !replica.stopped && replica.mgr.leaderElector?.isLeader === true;
  const decode = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString('utf8');
  const secretData = async () => (await admin.get(SecretKind, names.secretName, NAMESPACE)).data ?? {};

  it('answers through the apiserver, and rotates twice (once with a leader change) with no failed request', async () => {
    const install = await read(dir, 'dist/install.yaml');
    expect(install).not.toMatch(/cert-manager\.io/);
    // The Deployment names the objects as the manager's defaults do (src/webhook-certificates.ts).
    expect(install).toContain(
      '- name: WEBHOOK_CERT_SECRET\n          value: guestbook-webhook-server-cert\n',
    );
    expect(install).toContain('- name: WEBHOOK_SERVICE\n          value: guestbook-webhook-service\n');
    names = providerNames(await read(dir, 'src/webhook-certificates.ts'));
    expect(names).toEqual({
      secretName: 'guestbook-webhook-server-cert',
      serviceName: 'guestbook-webhook-service',
      mutating: ['guestbook-mutating-webhook-configuration'],
      validating: ['guestbook-validating-webhook-configuration'],
      crds: ['guestbooks.webapp.example.com'],
    });
    const applied = await kubectl('apply', '--server-side', '-f', path.join(dir, 'dist/install.yaml'));
    expect(applied.exitCode, String(applied.all)).toBe(0);
    const available = await kubectl(
      ...['-n', NAMESPACE, 'wait', '--for=condition=Available'],
      ...['deployment/guestbook-controller-manager', '--timeout=60s'],
    );
    expect(available.exitCode, String(available.all)).toBe(0);

    // The apiserver cannot reach the Service: the configurations and the CRD call the proxy instead.
    const url = `https://127.0.0.1:${proxy.port}`;
    for (const [kind, name] of [
      [Mutating, names.mutating[0]!],
      [Validating, names.validating[0]!],
    ] as const) {
      const object = await admin.get(kind, name);
      await admin.patch(
        kind,
        name,
        '',
        object.webhooks.map((webhook, i) => ({
          op: 'replace',
          path: `/webhooks/${i}/clientConfig`,
          value: { url: `${url}${webhook.clientConfig.service?.path ?? ''}` },
        })),
        'json',
      );
    }
    await admin.patch(
      CrdKind,
      names.crds[0]!,
      '',
      [{ op: 'replace', path: '/spec/conversion/webhook/clientConfig', value: { url: `${url}/convert` } }],
      'json',
    );

    const [a, b] = [await startReplica('replica-a'), await startReplica('replica-b')];
    // The replicas have the installed RBAC and no more: no list of Secrets, no other Secret by name.
    await expect(a.mgr.apiReader.list(SecretKind, { namespace: NAMESPACE })).rejects.toThrow(/forbidden/i);
    await expect(a.mgr.apiReader.get(SecretKind, 'other', NAMESPACE)).rejects.toThrow(/forbidden/i);
    let created = 0;
    const round = async (client: Client) => {
      const name = `g-${created++}`;
      const object = await client.create(V1, {
        apiVersion: V1.apiVersion,
        kind: 'Guestbook',
        metadata: { name, namespace: 'default' },
        spec: {},
      });
      if (object.spec?.foo !== 'defaulted') throw new Error(`not defaulted: ${JSON.stringify(object.spec)}`);
      const converted = await client.get(V2, name, 'default');
      if (converted.apiVersion !== V2.apiVersion) throw new Error(`not converted: ${converted.apiVersion}`);
      const refused = await client
        .create(V1, {
          apiVersion: V1.apiVersion,
          kind: 'Guestbook',
          metadata: { name: `bad-${name}`, namespace: 'default' },
          spec: { foo: 'bad' },
        })
        .then(
          () => 'admitted',
          (error: Error) => error.message,
        );
      if (!/is bad/.test(refused)) throw new Error(`the validating webhook did not refuse: ${refused}`);
    };
    const startedAt = Date.now();
    await eventually(
      () =>
        round(admin).then(
          () => true,
          () => false,
        ),
      60_000,
    );
    const firstAnswer = Date.now() - startedAt;
    await eventually(() => isLeader(a) || isLeader(b), 10_000);
    const leader = isLeader(a) ? a : b;

    const failures: string[] = [];
    let sent = 0;
    let sending = true;
    const load = (async () => {
      while (sending) {
        sent++;
        await round(admin).catch((error: Error) => failures.push(error.message));
      }
    })();

    const rotation = async (stopLeader: boolean) => {
      const before = decode((await secretData())['ca.crt']);
      await eventually(async () => 'next-ca.crt' in (await secretData()), 30_000);
      const started = Date.now();
      const sentBefore = sent;
      // The leader's manager stops while the rotation runs (its graceful stop gives the Lease up at once,
      // then drains its webhook server); the rotation is timed to the Secret's last step, not to the end of
      // that stop.
      const stopping = stopLeader ? stopReplica(leader) : Promise.resolve();
      await eventually(async () => {
        const data = await secretData();
        return !('next-ca.crt' in data) && !('previous-ca.crt' in data) && decode(data['ca.crt']) !== before;
      }, 30_000);
      const figures = { ms: Date.now() - started, rounds: sent - sentBefore };
      await stopping;
      return figures;
    };
    const first = await rotation(false);
    const second = await rotation(true);
    const follower = leader === a ? b : a;
    expect(isLeader(follower)).toBe(true);
    const ca = decode((await secretData())['ca.crt']);
    const bundles = [
      (await admin.get(Mutating, names.mutating[0]!)).webhooks[0]!.clientConfig.caBundle,
      (await admin.get(Validating, names.validating[0]!)).webhooks[0]!.clientConfig.caBundle,
      (
        (await admin.get(CrdKind, names.crds[0]!)).spec as {
          conversion: { webhook: { clientConfig: { caBundle?: string } } };
        }
      ).conversion.webhook.clientConfig.caBundle,
    ].map(decode);
    expect(bundles).toEqual([ca, ca, ca]);
    sending = false;
    await load;
    console.log(
      `figure: --cert-provider self in cluster mode: webhooks answered ${firstAnswer} ms after the replicas started; ` +
        `rotation ${first.ms} ms (${first.rounds} rounds), with the leader's manager stopped ${second.ms} ms ` +
        `(${second.rounds} rounds); ${sent} rounds of 3 admission/conversion requests, ${failures.length} failed ` +
        JSON.stringify(failures),
    );
    expect(failures).toEqual([]);
    expect(first.rounds).toBeGreaterThan(0);
    expect(second.rounds).toBeGreaterThan(0);
  }, 240_000);
});

async function eventually(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms: ${condition.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
