/**
 * startEnvtest's webhookInstallOptions: configurations written as `kubesmith manifests` writes them (a
 * service reference, no CA) and a CRD without conversion are pointed at the test's webhook server, which a
 * Manager runs from `env.webhook`; the apiserver then calls it for defaulting, validation and conversion.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import {
  AdmissionregistrationV1Api,
  ApiextensionsV1Api,
  CustomObjectsApi,
  dumpYaml,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBinaryAssets, startEnvtest, type Envtest } from '../../src/envtest/index.js';
import { ships, type ShipV1, type ShipV2 } from './ships.js';
import { createLogger } from '../../src/logger.js';
import { Manager } from '../../src/manager.js';
import {
  convertible,
  defaulting,
  fieldError,
  mutatePath,
  validatePath,
  validating,
  ValidationError,
  registerConversion,
} from '../../src/webhook/index.js';

const GROUP = 'envtest-webhooks.kubesmith.dev';
const { V1, V2, crdName: CRD_NAME, crd } = ships(GROUP);
const assets = findBinaryAssets(); // fails (does not skip) without binaries

/** As `kubesmith manifests` writes config/webhook/manifests.yaml: a service, no URL and no CA. */
function webhookManifests(): string {
  const webhook = (prefix: string, p: string) => ({
    admissionReviewVersions: ['v1'],
    clientConfig: { service: { name: 'webhook-service', namespace: 'system', path: p } },
    failurePolicy: 'Fail',
    name: `${prefix}ship-v1.kb.io`,
    rules: [
      { apiGroups: [GROUP], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['ships'] },
    ],
    sideEffects: 'None',
  });
  const config = (kind: string, prefix: string, p: string) =>
    dumpYaml({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind,
      metadata: { name: `${prefix === 'm' ? 'mutating' : 'validating'}-webhook-configuration` },
      webhooks: [webhook(prefix, p)],
    });
  return [
    config('MutatingWebhookConfiguration', 'm', mutatePath(V1)),
    config('ValidatingWebhookConfiguration', 'v', validatePath(V1)),
    'apiVersion: v1\nkind: Service\nmetadata:\n  name: webhook-service\n',
  ].join('---\n');
}

describe('startEnvtest with webhookInstallOptions', () => {
  let dir: string;
  let env: Envtest;
  let mgr: Manager;
  let running: Promise<void>;
  let api: CustomObjectsApi;
  const ref = { group: GROUP, namespace: 'default', plural: 'ships' };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubesmith-envtest-webhooks-'));
    fs.mkdirSync(path.join(dir, 'crd'));
    fs.mkdirSync(path.join(dir, 'webhook'));
    fs.writeFileSync(path.join(dir, 'crd', 'ships.yaml'), dumpYaml(crd));
    fs.writeFileSync(path.join(dir, 'webhook', 'manifests.yaml'), webhookManifests());
    env = await startEnvtest({
      binaryAssetsDirectory: assets,
      crdDirectoryPaths: [path.join(dir, 'crd')],
      webhookInstallOptions: { paths: [path.join(dir, 'webhook')], conversionCrdNames: [CRD_NAME] },
    });
    const { host, port, certDir } = env.webhook!;
    mgr = Manager.create({
      kubeConfig: env.kubeConfig,
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger: createLogger({ level: 'error' }),
      webhookServer: { host, port, certDir },
    });
    mgr.webhookServer.register(
      mutatePath(V1),
      defaulting(V1, { default: (ship) => void (ship.spec.crew ??= 3) }),
    );
    mgr.webhookServer.register(
      validatePath(V1),
      validating(V1, {
        validateCreate: (ship) => {
          if (!ship.spec.captain)
            throw new ValidationError(fieldError.required('spec.captain', 'a ship needs one'));
        },
      }),
    );
    registerConversion(mgr.webhookServer, V1, [
      convertible<ShipV1, ShipV2>(V2, {
        convertTo: ({ spec, ...rest }) => ({ ...rest, spec: { ...spec.people } }),
        convertFrom: ({ spec, ...rest }) => ({ ...rest, spec: { people: { ...spec } } }),
      }),
    ]);
    running = mgr.start();
    await mgr.ready();
    api = env.kubeConfig.makeApiClient(CustomObjectsApi);
  }, 120_000);

  afterAll(async () => {
    await mgr?.stop();
    await running;
    await env?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('points the configurations at the local server with the CA that signed its certificate', async () => {
    const { host, port, certDir, caCert } = env.webhook!;
    expect(host).toBe('127.0.0.1');
    const admission = env.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    const mutating = await admission.readMutatingWebhookConfiguration({
      name: 'mutating-webhook-configuration',
    });
    const clientConfig = mutating.webhooks?.[0]?.clientConfig;
    expect(clientConfig?.url).toBe(`https://127.0.0.1:${port}${mutatePath(V1)}`);
    expect(clientConfig?.service).toBeUndefined();
    expect(Buffer.from(clientConfig?.caBundle ?? '', 'base64').toString()).toBe(caCert);
    const serving = new X509Certificate(fs.readFileSync(path.join(certDir, 'tls.crt')));
    expect(serving.verify(new X509Certificate(caCert).publicKey)).toBe(true);
    expect(serving.checkIP('127.0.0.1')).toBe('127.0.0.1');
    const crd = await env.kubeConfig
      .makeApiClient(ApiextensionsV1Api)
      .readCustomResourceDefinition({ name: CRD_NAME });
    expect(crd.spec.conversion?.strategy).toBe('Webhook');
    expect(crd.spec.conversion?.webhook?.clientConfig?.url).toBe(`https://127.0.0.1:${port}/convert`);
  });

  it('the apiserver calls the defaulting and validating webhooks', async () => {
    const created = (await api.createNamespacedCustomObject({
      ...ref,
      version: 'v1',
      body: {
        apiVersion: V1.apiVersion,
        kind: 'Ship',
        metadata: { name: 'defaulted' },
        spec: { captain: 'a' },
      },
    })) as ShipV1;
    expect(created.spec).toEqual({ captain: 'a', crew: 3 });
    await expect(
      api.createNamespacedCustomObject({
        ...ref,
        version: 'v1',
        body: { apiVersion: V1.apiVersion, kind: 'Ship', metadata: { name: 'no-captain' }, spec: {} },
      }),
    ).rejects.toMatchObject({ code: 422, body: expect.stringContaining('spec.captain: Required value') });
  });

  it('the apiserver converts through the webhook: written in v2, read back in v1 and v2', async () => {
    await api.createNamespacedCustomObject({
      ...ref,
      version: 'v2',
      body: {
        apiVersion: V2.apiVersion,
        kind: 'Ship',
        metadata: { name: 'converted' },
        spec: { people: { crew: 5, captain: 'b' } },
      },
    });
    const asV1 = (await api.getNamespacedCustomObject({
      ...ref,
      version: 'v1',
      name: 'converted',
    })) as ShipV1;
    expect(asV1.spec).toEqual({ crew: 5, captain: 'b' });
    const asV2 = (await api.getNamespacedCustomObject({
      ...ref,
      version: 'v2',
      name: 'converted',
    })) as ShipV2;
    expect(asV2.spec).toEqual({ people: { crew: 5, captain: 'b' } });
  });
});

describe('startEnvtest with bad webhookInstallOptions', () => {
  it('refuses a conversion CRD name it does not install, and leaves nothing behind', async () => {
    const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubesmith-envtest-bad-'));
    try {
      await expect(
        startEnvtest({
          binaryAssetsDirectory: assets,
          tmpDir,
          webhookInstallOptions: { conversionCrdNames: ['ships.typo.dev'] },
        }),
      ).rejects.toThrow(
        'webhookInstallOptions.conversionCrdNames names ships.typo.dev, which is not among the CRDs to install (none)',
      );
      expect(fs.readdirSync(tmpDir)).toEqual([]);
    } finally {
      fs.rmSync(tmpDir, { recursive: true, force: true });
    }
  });

  it('refuses a missing webhook path before starting anything', async () => {
    await expect(
      startEnvtest({
        binaryAssetsDirectory: assets,
        webhookInstallOptions: { paths: ['/nonexistent/webhook'] },
      }),
    ).rejects.toThrow('webhook path /nonexistent/webhook does not exist');
  });
});
