/**
 * The webhook server called by a real kube-apiserver (envtest): a CRD with two versions converted through
 * the webhook, and mutating and validating configurations pointing at https://127.0.0.1:<port> with the
 * test CA as caBundle. Needs the envtest binaries (`npx kubesmith envtest`).
 */
import fs from 'node:fs';
import {
  AdmissionregistrationV1Api,
  CustomObjectsApi,
  type V1CustomResourceDefinition,
  type V1CustomResourceValidation,
  type V1JSONSchemaProps,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBinaryAssets, startEnvtest, type Envtest } from '../../src/envtest/index.js';
import { groupVersion } from '../../src/kinds.js';
import {
  ValidationError,
  convertible,
  defaulting,
  fieldError,
  mutatePath,
  validatePath,
  validating,
  WebhookServer,
  registerConversion,
} from '../../src/webhook/index.js';
import { webhookServerConfig } from '../../src/options.js';
import { makeCertificates, memoryLogger, tempDir, waitFor } from './helpers.js';

interface GuestbookV1 {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; [key: string]: unknown };
  spec: { replicas?: number; image?: string };
}
interface GuestbookV2 {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; [key: string]: unknown };
  spec: { scale?: { replicas?: number }; containerImage?: string };
}

const GROUP = 'webhook.kubesmith.dev';
const V1 = groupVersion(GROUP, 'v1').kind<GuestbookV1>('Guestbook', { plural: 'guestbooks' });
const V2 = groupVersion(GROUP, 'v2').kind<GuestbookV2>('Guestbook', { plural: 'guestbooks' });

const assets = findBinaryAssets(); // fails (does not skip) without binaries

function crd(url: string, caBundle: string): V1CustomResourceDefinition {
  // Explicit properties: client-node's typed CRD drops a raw `x-kubernetes-preserve-unknown-fields` key.
  const spec = (properties: Record<string, V1JSONSchemaProps>): V1CustomResourceValidation => ({
    openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties } } },
  });
  const v1 = spec({ replicas: { type: 'integer' }, image: { type: 'string' } });
  const v2 = spec({
    scale: { type: 'object', properties: { replicas: { type: 'integer' } } },
    containerImage: { type: 'string' },
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `guestbooks.${GROUP}` },
    spec: {
      group: GROUP,
      names: { kind: 'Guestbook', listKind: 'GuestbookList', plural: 'guestbooks', singular: 'guestbook' },
      scope: 'Namespaced',
      versions: [
        { name: 'v1', served: true, storage: true, schema: v1 },
        { name: 'v2', served: true, storage: false, schema: v2 },
      ],
      conversion: {
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `${url}/convert`, caBundle } },
      },
    },
  };
}

describe('webhooks called by kube-apiserver', () => {
  let env: Envtest;
  let server: WebhookServer;
  let certDir: string;
  let api: CustomObjectsApi;
  const ref = { group: GROUP, namespace: 'default', plural: 'guestbooks' };

  beforeAll(async () => {
    certDir = tempDir();
    const certs = makeCertificates(certDir);
    const caBundle = Buffer.from(certs.ca).toString('base64');
    server = new WebhookServer(
      webhookServerConfig({ host: '127.0.0.1', port: 0, certDir, logger: memoryLogger().logger }),
    );
    server.register(
      mutatePath(V1),
      defaulting(V1, {
        default: (obj) => {
          obj.spec.replicas ??= 1;
          obj.spec.image ??= 'nginx:1.27';
        },
      }),
    );
    server.register(
      validatePath(V1),
      validating(V1, {
        validateCreate: (obj) => {
          if ((obj.spec.replicas ?? 0) < 1) {
            throw new ValidationError(
              fieldError.invalid('spec.replicas', obj.spec.replicas, 'must be at least 1'),
            );
          }
          return obj.spec.image?.endsWith(':latest') ? { warnings: ['spec.image: avoid :latest'] } : {};
        },
        validateUpdate: (obj, old) => {
          if (obj.spec.image !== old.spec.image) {
            throw new ValidationError(fieldError.forbidden('spec.image', 'field is immutable'));
          }
        },
      }),
    );
    registerConversion(server, V1, [
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
    await server.start();
    const url = `https://127.0.0.1:${server.address!.port}`;
    env = await startEnvtest({ crds: [crd(url, caBundle)], binaryAssetsDirectory: assets });
    api = env.kubeConfig.makeApiClient(CustomObjectsApi);
    const admission = env.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    const rules = [
      {
        apiGroups: [GROUP],
        apiVersions: ['v1'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['guestbooks'],
      },
    ];
    const common = { admissionReviewVersions: ['v1'], sideEffects: 'None', failurePolicy: 'Fail', rules };
    await admission.createMutatingWebhookConfiguration({
      body: {
        metadata: { name: 'mutating-webhook-configuration' },
        webhooks: [
          {
            name: 'mguestbook-v1.kb.io',
            clientConfig: { url: `${url}${mutatePath(V1)}`, caBundle },
            ...common,
          },
        ],
      },
    });
    await admission.createValidatingWebhookConfiguration({
      body: {
        metadata: { name: 'validating-webhook-configuration' },
        webhooks: [
          {
            name: 'vguestbook-v1.kb.io',
            clientConfig: { url: `${url}${validatePath(V1)}`, caBundle },
            ...common,
          },
        ],
      },
    });
    // The apiserver picks configurations up through an informer: wait until a dry run is defaulted.
    await waitFor(async () => {
      const probe = (await api.createNamespacedCustomObject({
        ...ref,
        version: 'v1',
        dryRun: 'All',
        body: {
          apiVersion: V1.apiVersion,
          kind: 'Guestbook',
          metadata: { name: 'probe' },
          spec: { replicas: 2 },
        },
      })) as GuestbookV1;
      return probe.spec.image === 'nginx:1.27';
    }, 20_000);
  }, 120_000);

  afterAll(async () => {
    await env?.stop();
    await server?.stop();
    if (certDir) fs.rmSync(certDir, { recursive: true, force: true });
  }, 30_000);

  it('defaults a created resource through the mutating webhook', async () => {
    const created = (await api.createNamespacedCustomObject({
      ...ref,
      version: 'v1',
      body: { apiVersion: V1.apiVersion, kind: 'Guestbook', metadata: { name: 'defaulted' }, spec: {} },
    })) as GuestbookV1;
    expect(created.spec).toEqual({ replicas: 1, image: 'nginx:1.27' });
    const metrics = server.metrics;
    expect(
      await metrics.value('controller_runtime_webhook_requests_total', {
        webhook: mutatePath(V1),
        code: '200',
      }),
    ).toBeGreaterThan(0);
  });

  it('refuses an invalid resource with the field message and cause', async () => {
    const error = (await api
      .createNamespacedCustomObject({
        ...ref,
        version: 'v1',
        body: {
          apiVersion: V1.apiVersion,
          kind: 'Guestbook',
          metadata: { name: 'invalid' },
          spec: { replicas: 0 },
        },
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      )) as { code: number; body: unknown };
    expect(error?.code).toBe(422);
    const status = typeof error.body === 'string' ? JSON.parse(error.body) : error.body;
    expect(status.message).toBe(
      'admission webhook "vguestbook-v1.kb.io" denied the request: Guestbook.webhook.kubesmith.dev "invalid" is invalid: ' +
        'spec.replicas: Invalid value: 0: must be at least 1',
    );
    expect(status.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: 0: must be at least 1',
        field: 'spec.replicas',
      },
    ]);
  });

  it('refuses an update that breaks an immutability rule', async () => {
    const body = {
      apiVersion: V1.apiVersion,
      kind: 'Guestbook',
      metadata: { name: 'immutable' },
      spec: { image: 'a' },
    };
    const created = (await api.createNamespacedCustomObject({ ...ref, version: 'v1', body })) as GuestbookV1;
    await expect(
      api.replaceNamespacedCustomObject({
        ...ref,
        version: 'v1',
        name: 'immutable',
        body: { ...created, spec: { ...created.spec, image: 'b' } },
      }),
    ).rejects.toMatchObject({ code: 422 });
  });

  it('converts through the webhook: written in v2, read in v1 and v2 unchanged', async () => {
    await api.createNamespacedCustomObject({
      ...ref,
      version: 'v2',
      body: {
        apiVersion: V2.apiVersion,
        kind: 'Guestbook',
        metadata: { name: 'converted' },
        spec: { scale: { replicas: 3 }, containerImage: 'redis:7' },
      },
    });
    const asV1 = (await api.getNamespacedCustomObject({
      ...ref,
      version: 'v1',
      name: 'converted',
    })) as GuestbookV1;
    expect(asV1).toMatchObject({ apiVersion: V1.apiVersion, spec: { replicas: 3, image: 'redis:7' } });
    const asV2 = (await api.getNamespacedCustomObject({
      ...ref,
      version: 'v2',
      name: 'converted',
    })) as GuestbookV2;
    expect(asV2).toMatchObject({
      apiVersion: V2.apiVersion,
      spec: { scale: { replicas: 3 }, containerImage: 'redis:7' },
    });
    expect(
      await server.metrics.value('controller_runtime_webhook_requests_total', {
        webhook: '/convert',
        code: '200',
      }),
    ).toBeGreaterThan(0);
  });
});
