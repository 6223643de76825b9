/**
 * One control plane for many test files, as kubebuilder's suite_test.go starts one envtest per package: a
 * vitest global setup starts it once (startEnvtest) and hands its kubeconfig to the test files. A test file
 * that serves webhooks installs its own on it with installWebhooks(): its own port and certificate, the
 * webhooks of its kind only, limited to its own namespace, under names no other file uses, and removed again
 * by uninstall().
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  KubeConfig,
  type V1CustomResourceConversion,
  type V1CustomResourceDefinition,
  type V1Namespace,
  type V1ServiceAccount,
} from '@kubernetes/client-node';
import { HttpClient } from '../client.js';
import { isNotFound } from '../errors.js';
import { resourceKind } from '../kinds.js';
import { CONVERT_PATH } from '../webhook/paths.js';
import { apiRequest, statusMessage, type ApiAccess } from './internal/rest.js';
import {
  installWebhookConfigurations,
  localClientConfig,
  pointAtLocalServer,
  prepareLocalServing,
  readWebhookConfigurations,
  scopeWebhookConfigurations,
  type GroupResource,
  type LocalWebhookServing,
  type WebhookInstallOptions,
} from './internal/webhooks.js';

export type { GroupResource } from './internal/webhooks.js';

/**
 * What the global setup of a test run hands its test files (vitest's `provide`): where the shared envtest
 * is, or why there is none.
 */
export interface ProvidedEnvtest {
  /** The admin kubeconfig of the running envtest; absent when no envtest runs. */
  kubeconfigPath?: string;
  /** envtest's cluster mode: controllers, a scheduler and fake nodes run too. */
  controllers: boolean;
  /** Why the integration tests cannot run where they must (CI): each of their files fails with it. */
  error?: string;
}

/** The shared envtest as a test file uses it. */
export interface SharedEnvtest {
  /** Admin credentials for the shared apiserver. */
  kubeConfig: KubeConfig;
  controllers: boolean;
}

/**
 * The shared envtest from what the global setup provided (vitest's `inject('envtest')`), or undefined when
 * there is none (its binaries are missing: the global setup said so once, and the tests are skipped).
 * Throws where the tests must run (CI) but cannot, and when nothing was provided.
 */
export function sharedEnvtestFrom(provided: ProvidedEnvtest | undefined): SharedEnvtest | undefined {
  if (provided === undefined) {
    throw new Error(
      'no envtest was provided: vitest.config.ts must list test/envtest.setup.ts in globalSetup',
    );
  }
  if (provided.error !== undefined) throw new Error(provided.error);
  if (provided.kubeconfigPath === undefined) return undefined;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(provided.kubeconfigPath);
  return { kubeConfig, controllers: provided.controllers };
}

const NamespaceKind = resourceKind<V1Namespace>({
  group: '',
  version: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  namespaced: false,
});
const ServiceAccountKind = resourceKind<V1ServiceAccount>({
  group: '',
  version: 'v1',
  kind: 'ServiceAccount',
  plural: 'serviceaccounts',
  namespaced: true,
});

/**
 * Creates a namespace named `<prefix><random suffix>` for one test file and returns its name. In cluster
 * mode (`controllers`) it resolves once the namespace's `default` ServiceAccount exists, as pods need it.
 */
export async function createNamespace(
  envtest: { kubeConfig: KubeConfig; controllers?: boolean },
  prefix: string,
): Promise<string> {
  const api = new HttpClient(envtest.kubeConfig);
  try {
    const created = await api.create(NamespaceKind, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { generateName: prefix },
    });
    const name = created.metadata?.name ?? '';
    if (envtest.controllers) {
      const deadline = Date.now() + 30_000;
      for (;;) {
        try {
          await api.get(ServiceAccountKind, 'default', name);
          break;
        } catch (error) {
          if (!isNotFound(error) || Date.now() > deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    }
    return name;
  } finally {
    api.close();
  }
}

export interface InstallWebhooksOptions extends WebhookInstallOptions {
  /**
   * Only the webhooks whose rules cover one of these resources: those of the kind the test file serves.
   * Another file's kinds stay without webhooks rather than calling a server that does not serve them.
   * Default: every webhook of the configurations.
   */
  resources?: GroupResource[];
  /**
   * Only objects in this namespace reach the webhooks (a `namespaceSelector` on its name), so that objects
   * other files create in their namespaces never call this file's server. Cluster-scoped objects are not
   * limited. Default: every namespace.
   */
  namespace?: string;
  /** Where the directory of the serving certificate is made. Default: os.tmpdir(). */
  tmpDir?: string;
  /** Time allowed for each request to the apiserver, in ms. Default: 10_000. */
  requestTimeoutMs?: number;
}

/** Where the file's webhook server must listen, and how to take its webhooks away again. */
export interface InstalledWebhooks extends LocalWebhookServing {
  /** The names of the webhook configurations created (each `<name in the file>-<random suffix>`). */
  configurationNames: string[];
  /**
   * Deletes the configurations, gives the conversion CRDs back the conversion they had, and removes the
   * certificate directory. Safe to call more than once.
   */
  uninstall(): Promise<void>;
}

/** The apiserver's address, CA and token from a kubeconfig such as envtest's (token authentication). */
function accessOf(kubeConfig: KubeConfig): ApiAccess {
  const cluster = kubeConfig.getCurrentCluster();
  const token = kubeConfig.getCurrentUser()?.token;
  if (!cluster || !token) {
    throw new Error(
      'installWebhooks: the kubeconfig needs a current cluster and a user with a token (envtest’s)',
    );
  }
  const ca = cluster.caData
    ? Buffer.from(cluster.caData, 'base64')
    : cluster.caFile
      ? readFileSync(cluster.caFile)
      : undefined;
  if (!ca) throw new Error(`installWebhooks: the kubeconfig's cluster ${cluster.name} has no CA`);
  return { server: cluster.server, ca, token };
}

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const ADMISSION = '/apis/admissionregistration.k8s.io/v1';

async function patchConversion(
  access: ApiAccess,
  name: string,
  conversion: V1CustomResourceConversion,
  timeoutMs: number,
): Promise<void> {
  // `webhook: null` removes a previous webhook when the strategy goes back to None.
  const body = { spec: { conversion: { webhook: null, ...conversion } } };
  const answer = await apiRequest(access, 'PATCH', `${CRDS}/${name}`, body, timeoutMs);
  if (answer.status >= 300) {
    throw new Error(`setting the conversion of CRD ${name}: ${answer.status} ${statusMessage(answer)}`);
  }
}

/**
 * Installs the webhooks a test file serves on a running apiserver (one a global setup started and other
 * files share): makes a CA and serving certificate in a new temporary directory, picks a free port, creates
 * the file's webhook configurations pointed at `https://<host>:<port><path>`, and points the conversion of
 * the CRDs named in `conversionCrdNames` at its `/convert`. Start the manager's webhook server on the
 * returned host, port and certDir, and await `mgr.ready()` before creating objects; call `uninstall()` when
 * the file is done.
 */
export async function installWebhooks(
  kubeConfig: KubeConfig,
  options: InstallWebhooksOptions,
): Promise<InstalledWebhooks> {
  const timeoutMs = options.requestTimeoutMs ?? 10_000;
  const access = accessOf(kubeConfig);
  const suffix = randomBytes(4).toString('hex');
  const configurations = scopeWebhookConfigurations(readWebhookConfigurations(options, true), {
    ...(options.resources ? { resources: options.resources } : {}),
    ...(options.namespace ? { namespace: options.namespace } : {}),
    suffix,
  });
  const directory = await mkdtemp(path.join(options.tmpDir ?? os.tmpdir(), 'kubesmith-webhooks-'));
  const restore = new Map<string, V1CustomResourceConversion>();
  const created: { collection: string; name: string }[] = [];
  let uninstalled = false;
  const uninstall = async (): Promise<void> => {
    if (uninstalled) return;
    uninstalled = true;
    const errors: string[] = [];
    for (const { collection, name } of created) {
      const answer = await apiRequest(
        access,
        'DELETE',
        `${ADMISSION}/${collection}/${name}`,
        undefined,
        timeoutMs,
      );
      if (answer.status >= 300 && answer.status !== 404) errors.push(`${name}: ${statusMessage(answer)}`);
    }
    for (const [name, conversion] of restore) {
      await patchConversion(access, name, conversion, timeoutMs).catch((error: unknown) =>
        errors.push(error instanceof Error ? error.message : String(error)),
      );
    }
    await rm(directory, { recursive: true, force: true });
    if (errors.length > 0) throw new Error(`uninstalling the webhooks: ${errors.join('; ')}`);
  };
  try {
    const serving = await prepareLocalServing(directory, options);
    for (const name of options.conversionCrdNames ?? []) {
      const answer = await apiRequest(access, 'GET', `${CRDS}/${name}`, undefined, timeoutMs);
      if (answer.status >= 300) {
        throw new Error(
          `conversionCrdNames names ${name}: ${answer.status} ${statusMessage(answer)} (is it among the CRDs envtest installed?)`,
        );
      }
      restore.set(name, (answer.body as V1CustomResourceDefinition).spec.conversion ?? { strategy: 'None' });
      await patchConversion(
        access,
        name,
        {
          strategy: 'Webhook',
          webhook: {
            clientConfig: localClientConfig(serving, CONVERT_PATH),
            conversionReviewVersions: ['v1'],
          },
        },
        timeoutMs,
      );
    }
    const pointed = pointAtLocalServer(configurations, serving);
    for (const c of pointed.mutating) {
      created.push({ collection: 'mutatingwebhookconfigurations', name: c.metadata?.name ?? '' });
    }
    for (const c of pointed.validating) {
      created.push({ collection: 'validatingwebhookconfigurations', name: c.metadata?.name ?? '' });
    }
    await installWebhookConfigurations(access, pointed);
    return { ...serving, configurationNames: created.map((c) => c.name), uninstall };
  } catch (error) {
    await uninstall().catch(() => undefined);
    throw error;
  }
}
