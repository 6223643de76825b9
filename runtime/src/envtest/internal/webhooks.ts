/**
 * Webhooks served by the test process and called by envtest's kube-apiserver, as Go envtest's
 * WebhookInstallOptions: a CA and serving certificate made for the occasion, the webhook configurations
 * (and the conversion of chosen CRDs) pointed at `https://<host>:<port><path>` with that CA, and installed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type {
  AdmissionregistrationV1ServiceReference,
  AdmissionregistrationV1WebhookClientConfig,
  V1CustomResourceDefinition,
  V1LabelSelector,
  V1MutatingWebhookConfiguration,
  V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import { CONVERT_PATH } from '../../webhook/paths.js';
import { makeServingCertificates } from '../../internal/certs.js';
import { createOrReplace } from './install.js';
import { isKind, readDocuments } from './manifests.js';
import { freePorts } from './ports.js';
import type { ApiAccess } from './rest.js';

export interface WebhookInstallOptions {
  /**
   * Directories or files holding MutatingWebhookConfigurations and ValidatingWebhookConfigurations, such as
   * `config/webhook` (other documents there are ignored). Each webhook's `clientConfig` is replaced by the
   * local server's URL, keeping the service's path.
   */
  paths?: string[];
  /** Configurations to install besides those files. */
  mutatingWebhooks?: V1MutatingWebhookConfiguration[];
  validatingWebhooks?: V1ValidatingWebhookConfiguration[];
  /**
   * Names of installed CRDs (`guestbooks.webapp.example.com`) whose versions convert through the local
   * server's `/convert`: their conversion strategy becomes Webhook, as the kustomize patch
   * `config/crd/patches/webhook_in_<plural>.yaml` makes it in a cluster.
   */
  conversionCrdNames?: string[];
  /** The address the webhook server listens on and the apiserver calls. Default: 127.0.0.1. */
  localServingHost?: string;
  /** Its port. Default: a free port. */
  localServingPort?: number;
}

/** Where the test's webhook server must listen for envtest's apiserver to reach it. */
export interface LocalWebhookServing {
  host: string;
  port: number;
  /** Holds `tls.crt` and `tls.key`, the serving certificate for `host`, `localhost` and 127.0.0.1. */
  certDir: string;
  /** The CA that signed the serving certificate, PEM (the configurations' `caBundle`). */
  caCert: string;
}

export interface WebhookConfigurations {
  mutating: V1MutatingWebhookConfiguration[];
  validating: V1ValidatingWebhookConfiguration[];
}

const ADMISSION_GROUP = 'admissionregistration.k8s.io';

/** The configurations of `options`, read before any process starts so that a bad file fails early. */
export function readWebhookConfigurations(
  options: WebhookInstallOptions,
  errorIfPathMissing: boolean,
): WebhookConfigurations {
  const documents = readDocuments(options.paths ?? [], errorIfPathMissing, 'webhook');
  return {
    mutating: [
      ...documents.filter((doc): doc is V1MutatingWebhookConfiguration =>
        isKind(doc, ADMISSION_GROUP, 'MutatingWebhookConfiguration'),
      ),
      ...(options.mutatingWebhooks ?? []),
    ],
    validating: [
      ...documents.filter((doc): doc is V1ValidatingWebhookConfiguration =>
        isKind(doc, ADMISSION_GROUP, 'ValidatingWebhookConfiguration'),
      ),
      ...(options.validatingWebhooks ?? []),
    ],
  };
}

/** Picks the port and writes the certificates into `<directory>/webhook-certs`. */
export async function prepareLocalServing(
  directory: string,
  options: WebhookInstallOptions,
): Promise<LocalWebhookServing> {
  const host = options.localServingHost ?? '127.0.0.1';
  const port = options.localServingPort ?? (await freePorts(1, host))[0]!;
  const certDir = path.join(directory, 'webhook-certs');
  mkdirSync(certDir, { recursive: true });
  const hosts = [...new Set([host, 'localhost', '127.0.0.1'])];
  const certs = makeServingCertificates(hosts);
  writeFileSync(path.join(certDir, 'tls.crt'), certs.cert);
  writeFileSync(path.join(certDir, 'tls.key'), certs.key, { mode: 0o600 });
  return { host, port, certDir, caCert: certs.caCert };
}

/** The client configuration that sends a webhook's calls to the local server, on `urlPath`. */
export function localClientConfig(
  serving: LocalWebhookServing,
  urlPath: string,
): AdmissionregistrationV1WebhookClientConfig {
  const host = serving.host.includes(':') ? `[${serving.host}]` : serving.host;
  return {
    url: `https://${host}:${serving.port}${urlPath}`,
    caBundle: Buffer.from(serving.caCert).toString('base64'),
  };
}

function pathOf(config: { service?: AdmissionregistrationV1ServiceReference; url?: string }): string {
  if (config.service?.path) return config.service.path;
  if (config.url) return new URL(config.url).pathname;
  return '/';
}

/** The configurations with every webhook pointed at the local server (copies; the inputs stay as they were). */
export function pointAtLocalServer(
  configurations: WebhookConfigurations,
  serving: LocalWebhookServing,
): WebhookConfigurations {
  const point = <T extends { clientConfig: AdmissionregistrationV1WebhookClientConfig }>(webhook: T): T => ({
    ...webhook,
    clientConfig: localClientConfig(serving, pathOf(webhook.clientConfig)),
  });
  return {
    mutating: configurations.mutating.map((c) => ({ ...c, webhooks: c.webhooks?.map(point) })),
    validating: configurations.validating.map((c) => ({ ...c, webhooks: c.webhooks?.map(point) })),
  };
}

/**
 * The CRDs with conversion through the local server for those named in `names`; a name that is not among
 * them is an error (a typo would otherwise leave conversion untested).
 */
export function withConversionWebhooks(
  crds: readonly V1CustomResourceDefinition[],
  names: readonly string[],
  serving: LocalWebhookServing,
): V1CustomResourceDefinition[] {
  const known = new Set(crds.map((crd) => crd.metadata?.name));
  for (const name of names) {
    if (!known.has(name)) {
      throw new Error(
        `webhookInstallOptions.conversionCrdNames names ${name}, which is not among the CRDs to install ` +
          `(${[...known].join(', ') || 'none'})`,
      );
    }
  }
  return crds.map((crd) =>
    names.includes(crd.metadata?.name ?? '')
      ? {
          ...crd,
          spec: {
            ...crd.spec,
            conversion: {
              strategy: 'Webhook',
              webhook: {
                clientConfig: localClientConfig(serving, CONVERT_PATH),
                conversionReviewVersions: ['v1'],
              },
            },
          },
        }
      : crd,
  );
}

/**
 * Creates (or replaces) the configurations. The apiserver's admission plugin learns of them through a
 * watch, a few milliseconds later: well before a test's manager has started its webhook server.
 */
export async function installWebhookConfigurations(
  access: ApiAccess,
  configurations: WebhookConfigurations,
): Promise<void> {
  const path = '/apis/admissionregistration.k8s.io/v1';
  for (const body of configurations.mutating) {
    await createOrReplace(
      access,
      'MutatingWebhookConfiguration',
      `${path}/mutatingwebhookconfigurations`,
      body,
    );
  }
  for (const body of configurations.validating) {
    await createOrReplace(
      access,
      'ValidatingWebhookConfiguration',
      `${path}/validatingwebhookconfigurations`,
      body,
    );
  }
}

/** A group and resource a webhook's rules may cover (`{ group: 'webapp.example.com', resource: 'guestbooks' }`). */
export interface GroupResource {
  /** The API group; '' for the core group. */
  group: string;
  /** The plural resource name. */
  resource: string;
}

function covers(
  rules: { apiGroups?: string[]; resources?: string[] }[] | undefined,
  wanted: GroupResource,
): boolean {
  return (rules ?? []).some(
    (rule) =>
      (rule.apiGroups ?? []).some((group) => group === '*' || group === wanted.group) &&
      (rule.resources ?? []).some(
        (resource) =>
          resource === '*' || resource === wanted.resource || resource.startsWith(`${wanted.resource}/`),
      ),
  );
}

/** The label every namespace carries with its own name (set by the apiserver). */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/**
 * The configurations cut to the webhooks of `resources` (all when undefined), each webhook limited to
 * objects of `namespace` when given, and each configuration named `<name>-<suffix>`: what one test file
 * installs on a control plane other files share. Configurations left without webhooks are dropped.
 */
export function scopeWebhookConfigurations(
  configurations: WebhookConfigurations,
  scope: { resources?: GroupResource[]; namespace?: string; suffix: string },
): WebhookConfigurations {
  const keep = (webhook: { rules?: { apiGroups?: string[]; resources?: string[] }[] }) =>
    scope.resources === undefined || scope.resources.some((wanted) => covers(webhook.rules, wanted));
  const limit = <T extends { namespaceSelector?: V1LabelSelector }>(webhook: T): T =>
    scope.namespace === undefined
      ? webhook
      : {
          ...webhook,
          namespaceSelector: {
            ...webhook.namespaceSelector,
            matchLabels: {
              ...webhook.namespaceSelector?.matchLabels,
              [NAMESPACE_NAME_LABEL]: scope.namespace,
            },
          },
        };
  const scoped = <
    C extends { metadata?: { name?: string }; webhooks?: W[] },
    W extends {
      rules?: { apiGroups?: string[]; resources?: string[] }[];
      namespaceSelector?: V1LabelSelector;
    },
  >(
    configuration: C,
  ): C => ({
    ...configuration,
    metadata: {
      ...configuration.metadata,
      name: `${configuration.metadata?.name ?? 'webhooks'}-${scope.suffix}`,
    },
    webhooks: (configuration.webhooks ?? []).filter(keep).map(limit),
  });
  const nonEmpty = (configuration: { webhooks?: unknown[] }) => (configuration.webhooks ?? []).length > 0;
  return {
    mutating: configurations.mutating.map(scoped).filter(nonEmpty),
    validating: configurations.validating.map(scoped).filter(nonEmpty),
  };
}
