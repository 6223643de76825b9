/**
 * The cluster `kubesmith run` changes: the kubeconfig's current context, loaded by the project's runtime as
 * the manager loads it, and the few requests run makes, each bounded by a timeout. A kubeconfig that cannot
 * be used and a server that does not answer are one line each, before anything is changed.
 */
import { KubesmithError } from '../errors.js';
import type { Kind, KubeObject, RuntimeClient, RuntimeModule } from './project-modules.js';

/** Every request of run: a cluster that takes longer is not one to develop against. */
export const REQUEST_TIMEOUT_MS = 15_000;

const kind = (group: string, version: string, name: string, plural: string): Kind => ({
  group,
  version,
  apiVersion: group ? `${group}/${version}` : version,
  kind: name,
  plural,
  namespaced: false,
});

export const KINDS = {
  MutatingWebhookConfiguration: kind(
    'admissionregistration.k8s.io',
    'v1',
    'MutatingWebhookConfiguration',
    'mutatingwebhookconfigurations',
  ),
  ValidatingWebhookConfiguration: kind(
    'admissionregistration.k8s.io',
    'v1',
    'ValidatingWebhookConfiguration',
    'validatingwebhookconfigurations',
  ),
  CustomResourceDefinition: kind(
    'apiextensions.k8s.io',
    'v1',
    'CustomResourceDefinition',
    'customresourcedefinitions',
  ),
} as const;

export type KindName = keyof typeof KINDS;

const NAMESPACES = kind('', 'v1', 'Namespace', 'namespaces');

const CONTEXT_HINT =
  'check that the cluster is running and that the current context (kubectl config current-context) is the one you mean';

export class Cluster {
  private constructor(
    private readonly client: RuntimeClient,
    /** The API server's URL. */
    readonly server: string,
    /** The kubeconfig context, or undefined in a pod. */
    readonly context: string | undefined,
  ) {}

  /** The current context's cluster, once it has answered a request (any answer, a 403 included). */
  static async connect(runtime: RuntimeModule, env: NodeJS.ProcessEnv): Promise<Cluster> {
    let config;
    try {
      config = runtime.loadKubeConfig({ env });
    } catch (error) {
      const hint = (error as { hint?: unknown }).hint;
      throw new KubesmithError((error as Error).message, {
        hint: typeof hint === 'string' ? hint : 'set KUBECONFIG to a kubeconfig file whose context to use',
      });
    }
    const cluster = new Cluster(
      new runtime.HttpClient(config, { timeoutMs: REQUEST_TIMEOUT_MS }),
      config.server,
      config.contextName,
    );
    try {
      await cluster.client.get(NAMESPACES, 'default');
    } catch (error) {
      if (statusOf(error) === 401) {
        cluster.close();
        throw new KubesmithError(
          `the API server ${config.server} refused the credentials of context ${config.contextName ?? '(in-cluster)'}`,
          { hint: 'log in again (your cloud CLI renews the kubeconfig), or pick another context' },
        );
      }
      if (!isHttpAnswer(error)) {
        cluster.close();
        throw new KubesmithError(
          `cannot reach the API server ${config.server}${config.contextName ? ` (context ${config.contextName})` : ''}: ${(error as Error).message}`,
          { hint: CONTEXT_HINT },
        );
      }
    }
    return cluster;
  }

  /** The object, or undefined when there is none. */
  async get(kindName: KindName, name: string): Promise<KubeObject | undefined> {
    try {
      return await this.client.get(KINDS[kindName], name);
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw this.failure(`get ${kindName} ${name}`, error);
    }
  }

  async apply(kindName: KindName, object: KubeObject, fieldManager: string): Promise<KubeObject> {
    try {
      return await this.client.apply(KINDS[kindName], object, { fieldManager, force: true });
    } catch (error) {
      throw this.failure(`apply ${kindName} ${object.metadata?.name ?? ''}`, error);
    }
  }

  async update(kindName: KindName, object: KubeObject): Promise<KubeObject> {
    try {
      return await this.client.update(KINDS[kindName], object);
    } catch (error) {
      throw this.failure(`update ${kindName} ${object.metadata?.name ?? ''}`, error);
    }
  }

  async delete(kindName: KindName, name: string): Promise<void> {
    try {
      await this.client.delete(KINDS[kindName], name);
    } catch (error) {
      if (statusOf(error) === 404) return;
      throw this.failure(`delete ${kindName} ${name}`, error);
    }
  }

  close(): void {
    this.client.close();
  }

  private failure(what: string, error: unknown): KubesmithError {
    const status = statusOf(error);
    return new KubesmithError(`${what} on ${this.server}: ${(error as Error).message}`, {
      hint:
        status === 403
          ? 'the current context’s user may not do this: use a context with cluster-admin rights for run'
          : status === 409
            ? 'the object changed meanwhile: run again'
            : CONTEXT_HINT,
      cause: error,
    });
  }
}

/** The HTTP status of the runtime's ApiError, or undefined for an error before any answer. */
export function statusOf(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

function isHttpAnswer(error: unknown): boolean {
  return statusOf(error) !== undefined;
}
