/**
 * The typed client: CRUD of any kind through the API server's REST paths, with the connection settings
 * (server, certificates, tokens) of a KubeConfig. Failures are ApiErrors.
 */
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { ApiError } from './errors.js';
import type { ResourceKind } from './kinds.js';
import type { KubernetesObject } from './types.js';

export type PatchType = 'merge' | 'json';

export interface ListOptions {
  /** Only this namespace; all namespaces when absent. */
  namespace?: string;
  /** `app=web,tier!=cache` */
  labelSelector?: string;
  /** `metadata.name=x,status.phase=Running` */
  fieldSelector?: string;
  /**
   * The list is read in pages of this many objects (the API's `limit` and `continue`); every page is
   * returned. Default: 500.
   */
  pageSize?: number;
}

export interface DeleteOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
}

export interface ApplyOptions {
  /** Who owns the fields this configuration sets: one name per controller, such as `widget-controller`. */
  fieldManager: string;
  /** Take fields another manager owns instead of failing with a 409 Conflict. Default: false. */
  force?: boolean;
}

/** The reading half of a Client: controller-runtime's `client.Reader`. */
export interface Reader {
  get<T>(kind: ResourceKind<T>, name: string, namespace?: string): Promise<T>;
  list<T>(kind: ResourceKind<T>, options?: ListOptions): Promise<T[]>;
}

export interface Client extends Reader {
  create<T>(kind: ResourceKind<T>, object: T): Promise<T>;
  /** Replaces the object; its metadata.resourceVersion makes the update conditional (409 when stale). */
  update<T>(kind: ResourceKind<T>, object: T): Promise<T>;
  /** Replaces the status subresource only. */
  updateStatus<T>(kind: ResourceKind<T>, object: T): Promise<T>;
  /** A JSON merge patch (an object) or a JSON patch (a list of operations). */
  patch<T>(
    kind: ResourceKind<T>,
    name: string,
    namespace: string,
    patch: unknown,
    type?: PatchType,
  ): Promise<T>;
  delete<T>(kind: ResourceKind<T>, name: string, namespace?: string, options?: DeleteOptions): Promise<void>;
  /**
   * Server-side apply: `object` is the whole configuration `fieldManager` wants (apiVersion, kind,
   * metadata.name, and only the fields it manages). Creates the object when absent; fields this manager
   * set before and leaves out now are removed; a field another manager owns is a 409 Conflict unless
   * `force`.
   */
  apply<T>(kind: ResourceKind<T>, object: T, options: ApplyOptions): Promise<T>;
}

/** The REST path of a kind's collection, or of one object when `name` is given. */
export function resourcePath(
  kind: ResourceKind<unknown>,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  const base = kind.group === '' ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`;
  const scope = kind.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const object = name === undefined ? '' : `/${encodeURIComponent(name)}`;
  return `${base}${scope}/${kind.plural}${object}${subresource ? `/${subresource}` : ''}`;
}

/**
 * The URL of `path` on `server`. A server URL may carry a path of its own (an API server behind a proxy:
 * `https://rancher.example.com/k8s/clusters/c-1`); `path` goes after it, as kubectl and client-node's
 * watch do, rather than replacing it as `new URL(path, server)` would.
 */
export function requestUrl(server: string, path: string): URL {
  return new URL(`${server.replace(/\/+$/, '')}${path}`);
}

function metaOf(object: unknown): { name?: string; namespace?: string } {
  return (object as KubernetesObject).metadata ?? {};
}

function requireName(kind: ResourceKind<unknown>, object: unknown): string {
  const name = metaOf(object).name;
  if (!name) throw new ApiError(422, 'Invalid', `${kind.kind}: metadata.name is required`);
  return name;
}

/** A Client that talks to the API server of a KubeConfig's current context. */
export class HttpClient implements Client {
  constructor(private readonly kubeConfig: KubeConfig) {}

  async get<T>(kind: ResourceKind<T>, name: string, namespace?: string): Promise<T> {
    return this.request<T>('GET', resourcePath(kind, namespace, name), `get ${kind.kind} ${name}`);
  }

  async list<T>(kind: ResourceKind<T>, options: ListOptions = {}): Promise<T[]> {
    const items: T[] = [];
    let continueToken: string | undefined;
    do {
      const query = new URLSearchParams();
      if (options.labelSelector) query.set('labelSelector', options.labelSelector);
      if (options.fieldSelector) query.set('fieldSelector', options.fieldSelector);
      query.set('limit', String(options.pageSize ?? 500));
      if (continueToken) query.set('continue', continueToken);
      const page = await this.request<{ items: T[]; metadata?: { continue?: string } }>(
        'GET',
        `${resourcePath(kind, options.namespace)}?${query.toString()}`,
        `list ${kind.plural}`,
      );
      for (const item of page.items) items.push(withKind(kind, item));
      continueToken = page.metadata?.continue || undefined;
    } while (continueToken);
    return items;
  }

  /** The raw list (items and the list's resourceVersion) that an informer starts from. */
  async listPage<T>(
    kind: ResourceKind<T>,
    options: ListOptions = {},
  ): Promise<{ items: T[]; metadata: { resourceVersion?: string } }> {
    const query = new URLSearchParams();
    if (options.labelSelector) query.set('labelSelector', options.labelSelector);
    if (options.fieldSelector) query.set('fieldSelector', options.fieldSelector);
    const page = await this.request<{ items: T[]; metadata?: { resourceVersion?: string } }>(
      'GET',
      `${resourcePath(kind, options.namespace)}${query.size > 0 ? `?${query.toString()}` : ''}`,
      `list ${kind.plural}`,
    );
    return { items: page.items.map((item) => withKind(kind, item)), metadata: page.metadata ?? {} };
  }

  async create<T>(kind: ResourceKind<T>, object: T): Promise<T> {
    const { namespace } = metaOf(object);
    return this.request<T>(
      'POST',
      resourcePath(kind, namespace),
      `create ${kind.kind}`,
      withKind(kind, object),
    );
  }

  async update<T>(kind: ResourceKind<T>, object: T): Promise<T> {
    const name = requireName(kind, object);
    const path = resourcePath(kind, metaOf(object).namespace, name);
    return this.request<T>('PUT', path, `update ${kind.kind} ${name}`, withKind(kind, object));
  }

  async updateStatus<T>(kind: ResourceKind<T>, object: T): Promise<T> {
    const name = requireName(kind, object);
    const path = resourcePath(kind, metaOf(object).namespace, name, 'status');
    return this.request<T>('PUT', path, `update status of ${kind.kind} ${name}`, withKind(kind, object));
  }

  async patch<T>(
    kind: ResourceKind<T>,
    name: string,
    namespace: string,
    patch: unknown,
    type: PatchType = 'merge',
  ): Promise<T> {
    const contentType = type === 'json' ? 'application/json-patch+json' : 'application/merge-patch+json';
    return this.request<T>(
      'PATCH',
      resourcePath(kind, namespace, name),
      `patch ${kind.kind} ${name}`,
      patch,
      contentType,
    );
  }

  async apply<T>(kind: ResourceKind<T>, object: T, options: ApplyOptions): Promise<T> {
    const name = requireName(kind, object);
    if (!options.fieldManager) throw new Error(`apply ${kind.kind} ${name}: a fieldManager is required`);
    const query = new URLSearchParams({ fieldManager: options.fieldManager });
    if (options.force) query.set('force', 'true');
    const path = `${resourcePath(kind, metaOf(object).namespace, name)}?${query.toString()}`;
    // JSON is YAML: the apply content type takes a JSON body.
    return this.request<T>(
      'PATCH',
      path,
      `apply ${kind.kind} ${name}`,
      withKind(kind, object),
      'application/apply-patch+yaml',
    );
  }

  async delete<T>(
    kind: ResourceKind<T>,
    name: string,
    namespace?: string,
    options: DeleteOptions = {},
  ): Promise<void> {
    const body = options.propagationPolicy
      ? { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: options.propagationPolicy }
      : undefined;
    await this.request('DELETE', resourcePath(kind, namespace, name), `delete ${kind.kind} ${name}`, body);
  }

  private async request<T>(
    method: string,
    path: string,
    what: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<T> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const url = requestUrl(cluster.server, path);
    const options: https.RequestOptions = { method, headers: { Accept: 'application/json' } };
    await this.kubeConfig.applyToHTTPSOptions(options);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) {
      // Content-Length, not chunked: Node sends a DELETE body unframed, and the server would read none.
      options.headers = {
        ...options.headers,
        'Content-Type': contentType,
        'Content-Length': Buffer.byteLength(payload),
      };
    }
    const transport = url.protocol === 'http:' ? http : https;
    return new Promise<T>((resolve, reject) => {
      const req = transport.request(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300) {
            reject(ApiError.fromResponse(status, text, what));
            return;
          }
          try {
            resolve((text ? JSON.parse(text) : undefined) as T);
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        });
      });
      req.on('error', reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }
}

/** Lists leave apiVersion and kind out of their items; objects going out need them. */
function withKind<T>(kind: ResourceKind<T>, object: T): T {
  const o = object as KubernetesObject;
  if (o.apiVersion && o.kind) return object;
  return { ...o, apiVersion: kind.apiVersion, kind: kind.kind } as T;
}
