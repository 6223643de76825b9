/**
 * installWebhooks: two test files sharing one envtest each install the webhooks of config/webhook for
 * their own namespace, served by their own manager. Each namespace's objects reach its own server only,
 * the configurations' names do not collide, the conversion of the CRD goes to the installing server, and
 * uninstall() leaves the apiserver as it was.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  AdmissionregistrationV1Api,
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  dumpYaml,
  KubeConfig,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  findBinaryAssets,
  installWebhooks,
  startEnvtest,
  type Envtest,
  type InstalledWebhooks,
} from '../../src/envtest/index.js';
import { ships, type ShipV1, type ShipV2 } from './ships.js';
import { createLogger } from '../../src/logger.js';
import { Manager } from '../../src/manager.js';
import { convertible, defaulting, mutatePath, registerConversion } from '../../src/webhook/index.js';

const GROUP = 'envtest-shared.kubesmith.dev';
const { V1, V2, crdName: CRD_NAME, crd } = ships(GROUP);
const assets = findBinaryAssets(); // fails (does not skip) without binaries

/** As `kubesmith manifests` writes config/webhook/manifests.yaml: one mutating webhook, by service. */
const manifests = dumpYaml({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'MutatingWebhookConfiguration',
  metadata: { name: 'mutating-webhook-configuration' },
  webhooks: [
    {
      admissionReviewVersions: ['v1'],
      clientConfig: { service: { name: 'webhook-service', namespace: 'system', path: mutatePath(V1) } },
      failurePolicy: 'Fail',
      name: 'mship-v1.kb.io',
      rules: [{ apiGroups: [GROUP], apiVersions: ['v1'], operations: ['CREATE'], resources: ['ships'] }],
      sideEffects: 'None',
    },
  ],
});

/** One test file: its namespace, its webhooks, its manager defaulting the crew to `crewSize`. */
async function testFile(
  kubeConfig: KubeConfig,
  namespace: string,
  crewSize: number,
  webhookDir: string,
  conversion: boolean,
): Promise<{ installed: InstalledWebhooks; stop: () => Promise<void> }> {
  const installed = await installWebhooks(kubeConfig, {
    paths: [webhookDir],
    resources: [{ group: GROUP, resource: 'ships' }],
    namespace,
    conversionCrdNames: conversion ? [CRD_NAME] : [],
  });
  const { host, port, certDir } = installed;
  const mgr = Manager.create({
    kubeConfig,
    metrics: { bindAddress: '0' },
    healthProbeBindAddress: '0',
    handleSignals: false,
    logger: createLogger({ level: 'error' }),
    webhookServer: { host, port, certDir, shutdownDelayMs: 0 }, // uninstalled first: nothing to drain
  });
  mgr.webhookServer.register(
    mutatePath(V1),
    defaulting(V1, { default: (s) => void (s.spec.crew ??= crewSize) }),
  );
  registerConversion(mgr.webhookServer, V1, [
    convertible<ShipV1, ShipV2>(V2, {
      convertTo: ({ spec, ...rest }) => ({ ...rest, spec: { ...spec.people } }),
      convertFrom: ({ spec, ...rest }) => ({ ...rest, spec: { people: { ...spec } } }),
    }),
  ]);
  const running = mgr.start();
  await mgr.ready();
  return {
    installed,
    stop: async () => {
      await installed.uninstall();
      await mgr.stop();
      await running;
    },
  };
}

describe('installWebhooks on a shared envtest', () => {
  let dir: string;
  let env: Envtest;
  let kubeConfig: KubeConfig;
  let api: CustomObjectsApi;
  const files: { installed: InstalledWebhooks; stop: () => Promise<void> }[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubesmith-envtest-shared-'));
    fs.writeFileSync(path.join(dir, 'manifests.yaml'), manifests);
    env = await startEnvtest({ binaryAssetsDirectory: assets, crds: [crd] });
    // As a test file gets it from the global setup: the kubeconfig file.
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(env.kubeconfigPath);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    for (const name of ['file-a', 'file-b', 'no-webhooks']) {
      await core.createNamespace({ body: { metadata: { name } } });
    }
    files.push(await testFile(kubeConfig, 'file-a', 3, dir, true));
    files.push(await testFile(kubeConfig, 'file-b', 7, dir, false));
    api = kubeConfig.makeApiClient(CustomObjectsApi);
  }, 120_000);

  afterAll(async () => {
    for (const file of files) await file.stop();
    await env?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  const create = async (namespace: string, name: string, version = 'v1', spec: object = { captain: 'a' }) =>
    (await api.createNamespacedCustomObject({
      group: GROUP,
      version,
      namespace,
      plural: 'ships',
      body: { apiVersion: `${GROUP}/${version}`, kind: 'Ship', metadata: { name }, spec },
    })) as ShipV1 | ShipV2;

  it('sends each namespace to its own server, and no other namespace to either', async () => {
    expect((await create('file-a', 'a')).spec).toEqual({ captain: 'a', crew: 3 });
    expect((await create('file-b', 'b')).spec).toEqual({ captain: 'a', crew: 7 });
    expect((await create('no-webhooks', 'c')).spec).toEqual({ captain: 'a' });
  });

  it('names each file’s configuration apart, and points the CRD’s conversion at the installing file', async () => {
    const [a, b] = files.map((file) => file.installed);
    expect(a!.configurationNames).toHaveLength(1);
    expect(a!.configurationNames[0]).toMatch(/^mutating-webhook-configuration-[0-9a-f]{8}$/);
    expect(b!.configurationNames[0]).not.toBe(a!.configurationNames[0]);
    const crdNow = await kubeConfig
      .makeApiClient(ApiextensionsV1Api)
      .readCustomResourceDefinition({ name: CRD_NAME });
    expect(crdNow.spec.conversion?.webhook?.clientConfig?.url).toBe(`https://127.0.0.1:${a!.port}/convert`);
    await create('file-a', 'converted', 'v2', { people: { crew: 5, captain: 'b' } });
    const asV1 = (await api.getNamespacedCustomObject({
      group: GROUP,
      version: 'v1',
      namespace: 'file-a',
      plural: 'ships',
      name: 'converted',
    })) as ShipV1;
    expect(asV1.spec).toEqual({ crew: 5, captain: 'b' });
  });

  it('installs nothing for resources the configurations do not cover', async () => {
    const none = await installWebhooks(kubeConfig, {
      paths: [dir],
      resources: [{ group: GROUP, resource: 'boats' }],
    });
    expect(none.configurationNames).toEqual([]);
    await none.uninstall();
  });

  it('uninstall() deletes the configurations and gives the CRD its conversion back', async () => {
    const a = files.shift()!;
    await a.stop();
    const admission = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    const names = (await admission.listMutatingWebhookConfiguration()).items.map((c) => c.metadata?.name);
    expect(names).not.toContain(a.installed.configurationNames[0]);
    expect(names).toContain(files[0]!.installed.configurationNames[0]);
    const crdNow = await kubeConfig
      .makeApiClient(ApiextensionsV1Api)
      .readCustomResourceDefinition({ name: CRD_NAME });
    expect(crdNow.spec.conversion).toEqual({ strategy: 'None' });
    expect(fs.existsSync(a.installed.certDir)).toBe(false);
    // file-a's namespace no longer calls a webhook; file-b's still does.
    expect((await create('file-a', 'after')).spec).toEqual({ captain: 'a' });
    expect((await create('file-b', 'after')).spec).toEqual({ captain: 'a', crew: 7 });
  });
});
