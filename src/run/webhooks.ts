/**
 * Serving the project's webhooks from this machine: a CA and serving certificate made for the run, a local
 * port, and the cluster's webhook configurations and conversion CRDs pointed at
 * `https://<host>:<port><path>` with the run's CA bundle, each server-side applied under run's own field
 * manager after its original is recorded (changes.ts).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import { containedPath } from '../project/contained.js';
import { FIELD_MANAGER, type Changes } from './changes.js';
import type { WebhookConfiguration, WebhookEntry } from './manifests.js';
import type { KubeObject, RuntimeModule } from './project-modules.js';
import { RUN_DIR } from './state.js';

/** The conversion webhook's path, the runtime's CONVERT_PATH. */
const CONVERT_PATH = '/convert';

export interface Serving {
  /** The host the API server calls (URL and certificate). */
  host: string;
  port: number;
  /** Holds tls.crt and tls.key: the manager's --webhook-cert-path. */
  certDir: string;
  /** The CA that signed the serving certificate, PEM. */
  caCert: string;
}

/** A port nothing listens on: `wanted`, checked, or one the system picks. */
export async function freePort(wanted: number | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE' || error.code === 'EACCES'
          ? new KubesmithError(
              `port ${wanted} is ${error.code === 'EACCES' ? 'not allowed' : 'in use'}: the webhooks cannot be served on it`,
              { hint: 'give another port with --webhook-port, or leave it out for a free one' },
            )
          : error,
      );
    });
    // All interfaces, as the manager's webhook server listens.
    server.listen(wanted ?? 0, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Writes the run's certificate and key into `.kubesmith/run/certs` (the key readable by its owner only). */
export async function makeServing(
  runtime: RuntimeModule,
  root: string,
  host: string,
  port: number,
): Promise<Serving> {
  if (!runtime.makeServingCertificates)
    throw new KubesmithError(
      'the project’s @kubesmith/runtime cannot make certificates (it is older than this kubesmith)',
      {
        hint: 'update @kubesmith/runtime in the project to the version of kubesmith',
      },
    );
  const hosts = [...new Set([host, 'localhost', '127.0.0.1'])];
  const certs = await runtime.makeServingCertificates(hosts, { validDays: 7, name: 'kubesmith-run' });
  const certDir = containedPath(root, `${RUN_DIR}/certs`);
  fs.rmSync(certDir, { recursive: true, force: true });
  fs.mkdirSync(certDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(certDir, 'tls.crt'), certs.cert);
  fs.writeFileSync(path.join(certDir, 'tls.key'), certs.key, { mode: 0o600 });
  return { host, port, certDir, caCert: certs.caCert };
}

function clientConfig(serving: Serving, urlPath: string) {
  const host = serving.host.includes(':') ? `[${serving.host}]` : serving.host;
  return {
    url: `https://${host}:${serving.port}${urlPath}`,
    caBundle: Buffer.from(serving.caCert).toString('base64'),
  };
}

function pathOf(webhook: WebhookEntry): string {
  const config = webhook.clientConfig;
  if (config?.service?.path) return config.service.path;
  if (config?.url) return new URL(config.url).pathname;
  return '/';
}

/**
 * Points the configurations and the conversion of `conversionCrds` at the local server. An object that
 * exists already (a deployed operator's) first loses the `service` of the webhooks run takes over, which
 * cannot stand beside a `url`; its original is recorded before either write.
 */
export async function pointAtLocalServer(
  changes: Changes,
  serving: Serving,
  configurations: readonly WebhookConfiguration[],
  conversionCrds: readonly string[],
): Promise<void> {
  const cluster = changes.cluster;
  for (const configuration of configurations) {
    const ours = new Set(configuration.webhooks.map((webhook) => webhook.name));
    const current = await changes.record(configuration.kind, configuration.name);
    if (current) {
      const webhooks = (current['webhooks'] ?? []) as WebhookEntry[];
      if (webhooks.some((webhook) => ours.has(webhook.name) && webhook.clientConfig?.service)) {
        await cluster.update(configuration.kind, {
          ...current,
          webhooks: webhooks.map((webhook) =>
            ours.has(webhook.name)
              ? { ...webhook, clientConfig: withoutService(webhook.clientConfig) }
              : webhook,
          ),
        });
      }
    }
    await cluster.apply(
      configuration.kind,
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: configuration.kind,
        metadata: { name: configuration.name },
        webhooks: configuration.webhooks.map((webhook) => ({
          ...webhook,
          clientConfig: clientConfig(serving, pathOf(webhook)),
        })),
      },
      FIELD_MANAGER,
    );
  }
  for (const name of conversionCrds) {
    const current = await changes.record('CustomResourceDefinition', name);
    if (!current)
      throw new KubesmithError(
        `the CRD ${name} is not installed in the cluster: its conversion cannot be served`,
        {
          hint: 'add --install-crds, or install the CRDs with `npm run install-crds`',
        },
      );
    const conversion = (
      current['spec'] as { conversion?: { webhook?: { clientConfig?: object } } } | undefined
    )?.conversion;
    if (conversion?.webhook?.clientConfig && 'service' in conversion.webhook.clientConfig) {
      const spec = current['spec'] as Record<string, unknown>;
      await cluster.update('CustomResourceDefinition', {
        ...current,
        spec: {
          ...spec,
          conversion: {
            ...conversion,
            webhook: { ...conversion.webhook, clientConfig: withoutService(conversion.webhook.clientConfig) },
          },
        },
      });
    }
    const crd: KubeObject = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name },
      spec: {
        conversion: {
          strategy: 'Webhook',
          webhook: { clientConfig: clientConfig(serving, CONVERT_PATH), conversionReviewVersions: ['v1'] },
        },
      },
    };
    await cluster.apply('CustomResourceDefinition', crd, FIELD_MANAGER);
  }
}

/** A clientConfig without its service, and with a placeholder url until run's apply sets its own. */
function withoutService(config: object | undefined): object {
  const { service: _service, ...rest } = (config ?? {}) as { service?: unknown };
  void _service;
  return { ...rest, url: 'https://127.0.0.1:1/' };
}
