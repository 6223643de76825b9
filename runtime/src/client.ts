/**
 * The typed client: CRUD of any kind through the API server's REST paths, with the connection settings
 * (server, certificates, tokens) of a KubeConfig. Failures are ApiErrors; a request that gets no answer
 * in time is a RequestTimeoutError. Connections are kept alive and reused between requests.
 */
import type http from 'node:http';
import type https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { ApiError, RequestTimeoutError } from './errors.js';
import { checkPathSegments } from './internal/path-segment.js';
import { loadHttp, type HttpModules } from './internal/node-modules.js';
import type { ProxyAgentOptions } from './internal/proxy-agent.js';
import type { ResourceKind } from './kinds.js';
import { clusterAccessOf, type ClusterAccess, type ConnectionSettings } from './kubeconfig.js';
import type { SpanHandle, Tracing } from './tracing.js';
import type { KubernetesObject } from './types.js';

/**
 * `merge`: a JSON merge patch (RFC 7386, an object; lists are replaced whole). `json`: a JSON patch
 * (RFC 6902, a list of operations). `strategic`: a strategic merge patch, for built-in kinds only (lists
 * such as a pod's containers are merged by their key, `name`); custom resources refuse it with 415.
 */
export type PatchType = 'merge' | 'json' | 'strategic';

/** The client's request timeout when none is given: 30 s (the API server ends its own at 60 s). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/**
 * The longest watch event line accepted: 16 Mi characters of the decoded answer (a 16 MiB line of ASCII
 * JSON). An object is at most 1.5 MiB in etcd (3 MiB in a request); an answer that long without a line end
 * is not a watch.
 */
export const MAX_WATCH_EVENT_BYTES = 16 * 2 ** 20;

/** What every call takes: how long it may wait for its answer, and a signal to abort it. */
export interface RequestOptions {
  /**
   * Give up after this many ms without the whole answer: the call fails with a RequestTimeoutError and
   * its connection is closed. Default: the client's `timeoutMs` (DEFAULT_REQUEST_TIMEOUT_MS).
   */
  timeoutMs?: number;
  /** Aborts the request: the call fails with the signal's reason. */
  signal?: AbortSignal;
}

export interface PatchOptions extends RequestOptions {
  /** Default: `merge`. */
  type?: PatchType;
}

/** What a read takes: RequestOptions, and whether it wants the object's metadata only. */
export interface GetOptions extends RequestOptions {
  /**
   * Read the object's metadata only (controller-runtime's PartialObjectMetadata): the answer has the
   * kind's apiVersion and kind and the object's `metadata` (names, labels, annotations, owner references,
   * finalizers...), nothing else. The API server is asked for a PartialObjectMetadata; from the cache,
   * the kind's metadata-only informer answers, a cache of its own. Default: false (the whole object).
   */
  metadataOnly?: boolean;
}

/** A field index of the cache and the value to look up in it (`list(kind, { index: { name, value } })`). */
export interface IndexLookup {
  /** The name the index was registered with (`mgr.cache.indexField(kind, name, fn)`). */
  name: string;
  /** The objects whose index function returned this value (exact match). */
  value: string;
}

export interface ListOptions extends GetOptions {
  /** Only this namespace; all namespaces when absent. */
  namespace?: string;
  /** `app=web,tier!=cache` */
  labelSelector?: string;
  /** `metadata.name=x,status.phase=Running` */
  fieldSelector?: string;
  /**
   * The list is read in pages of this many objects (the API's `limit` and `continue`); every page is
   * returned. Default: 500; `0` reads it in one request.
   */
  pageSize?: number;
  /**
   * Only the objects a field index of the cache maps to `value` (controller-runtime's `MatchingFields`
   * on an indexed field), in `namespace` when one is given; combines with the selectors. A cache
   * feature: the API server has no indexes, and a client that reads from it refuses the option. Default:
   * none.
   */
  index?: IndexLookup;
}

export interface DeleteOptions extends RequestOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
}

export interface ApplyOptions extends RequestOptions {
  /** Who owns the fields this configuration sets: one name per controller, such as `widget-controller`. */
  fieldManager: string;
  /** Take fields another manager owns instead of failing with a 409 Conflict. Default: false. */
  force?: boolean;
}

/** The reading half of a Client: controller-runtime's `client.Reader`. */
export interface Reader {
  get<T>(kind: ResourceKind<T>, name: string, namespace?: string, options?: GetOptions): Promise<T>;
  list<T>(kind: ResourceKind<T>, options?: ListOptions): Promise<T[]>;
}

export interface Client extends Reader {
  create<T>(kind: ResourceKind<T>, object: T, options?: RequestOptions): Promise<T>;
  /**
   * Replaces the object; its metadata.resourceVersion makes the update conditional (409 when stale: read
   * again and retry, as `retryOnConflict` does).
   */
  update<T>(kind: ResourceKind<T>, object: T, options?: RequestOptions): Promise<T>;
  /** Replaces the status subresource only. */
  updateStatus<T>(kind: ResourceKind<T>, object: T, options?: RequestOptions): Promise<T>;
  /**
   * A JSON merge patch (an object; the default), a JSON patch (a list of operations) or, for built-in
   * kinds, a strategic merge patch: `patch(kind, name, ns, body, { type: 'strategic' })` (or just the
   * type, `'strategic'`). A merge patch that carries metadata.resourceVersion is conditional (409 when
   * stale); without one, the patch applies to whatever the object is then.
   */
  patch<T>(
    kind: ResourceKind<T>,
    name: string,
    namespace: string,
    patch: unknown,
    options?: PatchType | PatchOptions,
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

/**
 * The REST path of a kind's collection, or of one object when `name` is given. Throws when the name or
 * namespace cannot be a path segment (`..`, `a/b`: client-go's rules), so that no request leaves with it.
 */
export function resourcePath(
  kind: ResourceKind<unknown>,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  checkPathSegments(kind.kind, name, kind.namespaced ? namespace : undefined);
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

/**
 * How the manager's clients talk to the API server (controller-runtime's `client.Options`): the manager's
 * `client` option. `withDefaults` (options.ts) applies the defaults.
 */
export interface ClientOptions {
  /**
   * How long every request to the API server but a watch (gets, lists, writes, leader election, events,
   * an informer's list) may wait for its answer before it fails with a RequestTimeoutError; a reconcile
   * that meets one fails and is requeued with backoff. A call can set its own (`{ timeoutMs }`). A
   * streamed list may go this long between two events. Default: 30 000 ms (DEFAULT_REQUEST_TIMEOUT_MS).
   */
  timeoutMs?: number;
  /**
   * Kinds `mgr.client` reads from the API server instead of the cache (controller-runtime's
   * `client.CacheOptions.DisableFor`): kinds too many or too large to cache, read seldom. Default: none.
   */
  disableCacheFor?: readonly ResourceKind<unknown>[];
  /**
   * Read-your-own-writes (controller-runtime's `EnableReadYourWritesConsistency`, KEP-5647): `mgr.client`
   * remembers the resourceVersion each of its writes of a cached kind returns until the informer has seen
   * it; a cached `get` of that object waits for it, a cached `list` of its kind waits for the kind's writes
   * in its namespace scope, and a controller defers (re-queues shortly) the reconcile of a key whose own
   * write is still unseen. `false` reads the cache as it is. Reads of metadata-only informers do not wait.
   * Default: true.
   */
  readYourWrites?: boolean;
  /**
   * How long after a write reads may wait for the informer to see it. A read still waiting then returns
   * what the cache holds (counted in `kubesmith_read_your_writes_waits_total{outcome="timeout"}`), as it
   * would without read-your-own-writes, and the write is forgotten. Default: 5 000 ms.
   */
  readYourWritesTimeoutMs?: number;
}

export interface HttpClientOptions {
  /** How long a request may wait for its answer, unless the call says otherwise. Default: 30 000 ms. */
  timeoutMs?: number;
  /** Makes a span of each request (not of watches): the manager's `tracing` option. Default: none. */
  tracing?: Tracing;
}

const CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

/**
 * A Client that talks to the API server of a RestConfig (loadKubeConfig) or of a client-node KubeConfig's
 * current context. Every request is bounded by a timeout; connections are kept alive and reused (one
 * agent per client, replaced when the certificates change), where client-node would open a new TCP and
 * TLS connection per request. A 401 tells the config, so that its token file is read again or its exec
 * plugin runs again for the next request.
 */
export class HttpClient implements Client {
  private readonly timeoutMs: number;
  private readonly access: ClusterAccess;
  private agent: { key: string; agent: http.Agent } | undefined;
  private readonly tracing: Tracing | undefined;

  constructor(config: KubeConfig | ClusterAccess, options: HttpClientOptions = {}) {
    this.access = clusterAccessOf(config);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.tracing = options.tracing;
  }

  async get<T>(kind: ResourceKind<T>, name: string, namespace?: string, options?: GetOptions): Promise<T> {
    const path = resourcePath(kind, namespace, name);
    if (!options?.metadataOnly) return this.request<T>('GET', path, `get ${kind.kind} ${name}`, options);
    const object = await this.request<KubernetesObject>('GET', path, `get ${kind.kind} ${name}`, options, {
      accept: METADATA_ACCEPT.object,
    });
    return toPartialObjectMetadata(kind, object) as T;
  }

  async list<T>(kind: ResourceKind<T>, options: ListOptions = {}): Promise<T[]> {
    const items: T[] = [];
    await this.listEach(kind, options, (item) => items.push(item));
    return items;
  }

  /**
   * Reads a list page by page (`pageSize` objects a request, default 500; `0` reads it in one request),
   * following its continue tokens, and hands each item, with its kind set, to `onItem` as its page
   * arrives: the next page is already being read meanwhile. Resolves with the list's resourceVersion. A
   * continue token that expired (after an etcd compaction) fails with a 410 ApiError.
   */
  async listEach<T>(
    kind: ResourceKind<T>,
    options: ListOptions,
    onItem: (item: T) => void,
  ): Promise<{ resourceVersion?: string }> {
    type Page = { items: T[]; metadata?: { resourceVersion?: string; continue?: string } };
    refuseIndex(kind, options);
    const limit = options.pageSize ?? 500;
    const accept = options.metadataOnly ? { accept: METADATA_ACCEPT.list } : {};
    const fetchPage = (continueToken: string | undefined): Promise<Page> => {
      const query = new URLSearchParams();
      if (options.labelSelector) query.set('labelSelector', options.labelSelector);
      if (options.fieldSelector) query.set('fieldSelector', options.fieldSelector);
      if (limit > 0) query.set('limit', String(limit));
      if (continueToken) query.set('continue', continueToken);
      return this.request<Page>(
        'GET',
        `${resourcePath(kind, options.namespace)}${query.size > 0 ? `?${query.toString()}` : ''}`,
        `list ${kind.plural}`,
        options,
        accept,
      );
    };
    let next: Promise<Page> | undefined = fetchPage(undefined);
    let resourceVersion: string | undefined;
    while (next) {
      const page: Page = await next;
      const continueToken: string | undefined = page.metadata?.continue || undefined;
      // The next page is asked for before this one is handed out, so that the API server reads it while
      // the items of this one are transformed and stored: at most two pages are held at once. Its failure
      // is handled where it is awaited (a rejection caught meanwhile would otherwise be unhandled).
      next = continueToken ? fetchPage(continueToken) : undefined;
      next?.catch(() => {});
      // The items were parsed from this answer and are nobody else's: their kind is set in place.
      for (const item of page.items) {
        onItem(
          options.metadataOnly
            ? (toPartialObjectMetadata(kind, item as KubernetesObject) as T)
            : setKind(kind, item),
        );
      }
      resourceVersion = page.metadata?.resourceVersion;
    }
    return resourceVersion !== undefined ? { resourceVersion } : {};
  }

  async create<T>(kind: ResourceKind<T>, object: T, options?: RequestOptions): Promise<T> {
    const { namespace } = metaOf(object);
    return this.request<T>('POST', resourcePath(kind, namespace), `create ${kind.kind}`, options, {
      body: withKind(kind, object),
    });
  }

  async update<T>(kind: ResourceKind<T>, object: T, options?: RequestOptions): Promise<T> {
    const name = requireName(kind, object);
    const path = resourcePath(kind, metaOf(object).namespace, name);
    return this.request<T>('PUT', path, `update ${kind.kind} ${name}`, options, {
      body: withKind(kind, object),
    });
  }

  async updateStatus<T>(kind: ResourceKind<T>, object: T, options?: RequestOptions): Promise<T> {
    const name = requireName(kind, object);
    const path = resourcePath(kind, metaOf(object).namespace, name, 'status');
    return this.request<T>('PUT', path, `update status of ${kind.kind} ${name}`, options, {
      body: withKind(kind, object),
    });
  }

  async patch<T>(
    kind: ResourceKind<T>,
    name: string,
    namespace: string,
    patch: unknown,
    options: PatchType | PatchOptions = {},
  ): Promise<T> {
    const { type = 'merge', ...rest } = typeof options === 'string' ? { type: options } : options;
    const what = `patch ${kind.kind} ${name}`;
    try {
      return await this.request<T>('PATCH', resourcePath(kind, namespace, name), what, rest, {
        body: patch,
        contentType: CONTENT_TYPES[type],
      });
    } catch (err) {
      if (type === 'strategic' && err instanceof ApiError && err.statusCode === 415) {
        throw new ApiError(
          415,
          err.reason,
          `${what}: ${err.message}\nhint: a strategic merge patch works on built-in kinds only; ` +
            "patch a custom resource with type 'merge' or 'json', or use apply",
          err.body,
        );
      }
      throw err;
    }
  }

  async apply<T>(kind: ResourceKind<T>, object: T, options: ApplyOptions): Promise<T> {
    const name = requireName(kind, object);
    if (!options.fieldManager) throw new Error(`apply ${kind.kind} ${name}: a fieldManager is required`);
    const query = new URLSearchParams({ fieldManager: options.fieldManager });
    if (options.force) query.set('force', 'true');
    const path = `${resourcePath(kind, metaOf(object).namespace, name)}?${query.toString()}`;
    // JSON is YAML: the apply content type takes a JSON body.
    return this.request<T>('PATCH', path, `apply ${kind.kind} ${name}`, options, {
      body: withKind(kind, object),
      contentType: 'application/apply-patch+yaml',
    });
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
    await this.request(
      'DELETE',
      resourcePath(kind, namespace, name),
      `delete ${kind.kind} ${name}`,
      options,
      {
        ...(body ? { body } : {}),
      },
    );
  }

  /**
   * A watch of the collection at `path`: a GET with `watch=true` and `query`, whose answer is one event a
   * line, each handed to `onEvent(type, object)` as it arrives. `done(err)` is called once, when it ends:
   * with null when the server ended it (its timeoutSeconds), an ApiError when it answered with an error
   * status (410, 422...), else what broke it, an abort included. The answer must begin within the client's
   * timeout (a connection that never answers is an error, not a watch that waits for ever); after that the
   * watch is bounded by its owner (watchWithBookmarks, in cache.ts). An event line longer than
   * MAX_WATCH_EVENT_BYTES ends it with an error. It runs on the client's kept-alive connections: a watch the
   * server ended leaves its connection to the next request or watch, where client-node's Watch opened a
   * new TCP and TLS connection for every watch. Resolves once the answer began (or failed), with what
   * aborts it.
   */
  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: string, object: unknown) => void,
    done: (err: unknown) => void,
    watchOptions: { metadataOnly?: boolean } = {},
  ): Promise<{ abort(): void }> {
    const { url, options, settings, transport } = await this.connection(
      'GET',
      path,
      watchOptions.metadataOnly ? METADATA_ACCEPT.object : undefined,
    );
    url.searchParams.set('watch', 'true');
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const what = `watch ${path}`;
    return new Promise((resolve) => {
      let finished = false;
      const finish = (err: unknown, destroy: boolean) => {
        clearTimeout(timer);
        if (finished) return;
        finished = true;
        if (destroy) req.destroy();
        done(err);
        resolve(handle);
      };
      const handle = { abort: () => finish(new Error(`${what}: aborted`), true) };
      const req = transport.request(url, options, (res) => {
        clearTimeout(timer);
        const status = res.statusCode ?? 0;
        if (status !== 200) {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            if (text.length < MAX_WATCH_EVENT_BYTES) text += chunk;
          });
          if (status === 401) this.access.unauthorized(settings);
          res.on('end', () => finish(ApiError.fromResponse(status, text, what), false));
          res.on('error', (err) => finish(err, true));
          return;
        }
        resolve(handle);
        res.setEncoding('utf8');
        // The part of a line that came without its end yet. Only the new chunk is searched for a newline:
        // an object of a megabyte, in chunks of 16 KB, is not searched again and again.
        let partial = '';
        const line = (text: string) => {
          if (text.trim() === '') return;
          let event: { type?: unknown; object?: unknown };
          try {
            event = JSON.parse(text) as typeof event;
          } catch {
            return finish(new Error(`${what}: the API server sent an event that is not JSON`), true);
          }
          try {
            onEvent(String(event.type), event.object);
          } catch (err) {
            // Not out of the socket's 'data' handler, where it would crash the process: the watch ends with it.
            finish(err, true);
          }
        };
        res.on('data', (chunk: string) => {
          let start = 0;
          for (let end = chunk.indexOf('\n'); end !== -1 && !finished; end = chunk.indexOf('\n', start)) {
            line(partial ? partial + chunk.slice(start, end) : chunk.slice(start, end));
            partial = '';
            start = end + 1;
          }
          if (finished) return;
          partial += chunk.slice(start);
          if (partial.length > MAX_WATCH_EVENT_BYTES) {
            finish(new Error(`${what}: an event longer than ${MAX_WATCH_EVENT_BYTES} bytes`), true);
          }
        });
        res.on('end', () => finish(null, false));
        res.on('error', (err) => finish(err, true));
        res.on('close', () => {
          if (!res.complete) finish(new Error(`${what}: the connection was closed`), true);
        });
      });
      const timer = setTimeout(
        () => finish(new RequestTimeoutError(what, this.timeoutMs), true),
        this.timeoutMs,
      );
      req.on('error', (err) => finish(err, true));
      req.end();
    });
  }

  /**
   * The URL of `path` and the request options: the config's credentials, on the client's agent; and the
   * module (node:http or node:https) that sends it.
   */
  private async connection(
    method: string,
    path: string,
    accept = 'application/json',
  ): Promise<{
    url: URL;
    options: https.RequestOptions;
    settings: ConnectionSettings;
    transport: Transport;
  }> {
    const settings = await this.access.connection();
    const modules = await loadHttp();
    // Loaded before agentFor, which must not wait: two requests at once share one agent.
    const proxyAgent = settings.proxyUrl ? (await import('./internal/proxy-agent.js')).proxyAgent : undefined;
    const url = requestUrl(settings.server, path);
    const options: https.RequestOptions = {
      method,
      headers: { Accept: accept, ...settings.headers },
      ...settings.tls,
      ...(settings.auth ? { auth: settings.auth } : {}),
    };
    options.agent = settings.agent ?? this.agentFor(url.protocol, settings, modules, proxyAgent);
    const transport = url.protocol === 'http:' ? modules.http : modules.https;
    return { url, options, settings, transport };
  }

  private async request<T>(
    method: string,
    path: string,
    what: string,
    call: RequestOptions = {},
    content: { body?: unknown; contentType?: string; accept?: string } = {},
  ): Promise<T> {
    const { url, options, settings, transport } = await this.connection(method, path, content.accept);
    const payload = content.body === undefined ? undefined : JSON.stringify(content.body);
    if (payload !== undefined) {
      // Content-Length, not chunked: Node sends a DELETE body unframed, and the server would read none.
      options.headers = {
        ...options.headers,
        'Content-Type': content.contentType ?? 'application/json',
        'Content-Length': Buffer.byteLength(payload),
      };
    }
    const timeoutMs = call.timeoutMs ?? this.timeoutMs;
    const exchange = { status: 0 };
    const span = this.tracing?.child(`${method} ${resourceOfPath(path)}`, {
      'http.request.method': method,
      'url.full': url.href,
      'server.address': url.hostname,
      'server.port': Number(url.port) || (url.protocol === 'http:' ? 80 : 443),
    });
    for (let attempt = 1; ; attempt++) {
      try {
        const answer = (await sendRequest(
          transport,
          url,
          options,
          payload,
          what,
          timeoutMs,
          call.signal,
          exchange,
        )) as T;
        if (span) endRequestSpan(span, exchange.status, attempt);
        return answer;
      } catch (err) {
        if (err instanceof ApiError && err.statusCode === 401) this.access.unauthorized(settings);
        // A kept-alive connection the server closed while idle fails at once, the request unread: an
        // idempotent one is safe to send again (on the next pooled connection, or a new one).
        const stale = err instanceof StaleConnectionError;
        if (!stale || attempt >= 3 || method === 'POST' || method === 'PATCH') {
          const thrown: unknown = stale ? err.cause : err;
          if (span) endRequestSpan(span, exchange.status, attempt, thrown);
          throw thrown;
        }
      }
    }
  }

  /**
   * One keep-alive agent per TLS identity and proxy (certificates rotate: a new identity gets a new
   * agent); through a proxy, its connections are CONNECT tunnels.
   */
  private agentFor(
    protocol: string,
    settings: ConnectionSettings,
    { http, https }: HttpModules,
    proxyAgent: ((options: ProxyAgentOptions) => http.Agent) | undefined,
  ): http.Agent {
    const { tls, proxyUrl } = settings;
    const key = `${protocol}${proxyUrl ?? ''}${JSON.stringify(tls)}`;
    if (this.agent?.key === key) return this.agent.agent;
    const previous = this.agent?.agent;
    // Idle connections close after 30 s, before the API server's own idle timeout (90 s) closes them.
    const keepAlive = { keepAlive: true, timeout: 30_000, scheduling: 'lifo' as const };
    const agentOptions = {
      ...keepAlive,
      ...(protocol === 'http:'
        ? {}
        : Object.fromEntries(Object.entries(tls).filter(([, v]) => v !== undefined))),
    };
    const agent =
      proxyUrl && proxyAgent
        ? proxyAgent({
            proxyUrl: new URL(proxyUrl),
            protocol,
            connectTimeoutMs: this.timeoutMs,
            agentOptions,
          })
        : protocol === 'http:'
          ? new http.Agent(agentOptions)
          : new https.Agent(agentOptions);
    this.agent = { key, agent };
    // Requests still running on the previous agent end within their timeout.
    if (previous) setTimeout(() => previous.destroy(), this.timeoutMs + 1_000).unref();
    return agent;
  }

  /** Closes the kept-alive connections (a process that wants to exit need not wait for them). */
  close(): void {
    this.agent?.agent.destroy();
    this.agent = undefined;
  }
}

/** node:http or node:https: the same request function. */
type Transport = Pick<typeof http, 'request'>;

/** A reused connection that the server had closed: the request never reached it. */
class StaleConnectionError extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}

/**
 * The resource of a REST path, as a request span names it (`GET widgets`, `PUT widgets/status`): its
 * plural and subresource, without the names of the object and its namespace (a span name has few values).
 */
export function resourceOfPath(path: string): string {
  const parts = (path.split('?')[0] as string).split('/').filter(Boolean);
  // /api/v1/... or /apis/<group>/<version>/...
  let rest = parts[0] === 'api' ? parts.slice(2) : parts.slice(3);
  if (rest[0] === 'namespaces' && rest.length > 2) rest = rest.slice(2);
  const [plural = 'namespaces', , subresource] = rest;
  return subresource ? `${plural}/${subresource}` : plural;
}

/** Ends an API call's span: the answer's status code, and the error of a failed call. */
function endRequestSpan(span: SpanHandle, status: number, attempts: number, err?: unknown): void {
  span.set({
    'http.response.status_code': status || undefined,
    'http.request.resend_count': attempts > 1 ? attempts - 1 : undefined,
  });
  if (err === undefined) return span.end();
  span.end(err, status ? String(status) : err instanceof Error ? err.name : undefined);
}

/**
 * One HTTP exchange, bounded by `timeoutMs` from start to the last byte of the answer. The answer's
 * status code goes to `exchange.status` (a span reports it).
 */
function sendRequest(
  transport: Transport,
  url: URL,
  options: https.RequestOptions,
  payload: string | undefined,
  what: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  exchange?: { status: number },
): Promise<unknown> {
  return new Promise<unknown>((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | undefined, value?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve(value);
    };
    const req = transport.request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', (err) => finish(err));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        if (exchange) exchange.status = status;
        if (status < 200 || status >= 300) return finish(ApiError.fromResponse(status, text, what));
        try {
          finish(undefined, text ? JSON.parse(text) : undefined);
        } catch (err) {
          finish(err instanceof Error ? err : new Error(String(err)));
        }
      });
    });
    // Registered first: destroying the request (its signal already aborted, below) emits an error.
    req.on('error', (err: NodeJS.ErrnoException) => {
      const stale = req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
      finish(stale ? new StaleConnectionError(err) : err);
    });
    // Destroying the request closes its connection, so that a black-holed one never returns to the pool.
    const timer = setTimeout(() => {
      const err = new RequestTimeoutError(what, timeoutMs);
      finish(err);
      req.destroy(err);
    }, timeoutMs);
    const onAbort = () => {
      const reason = signal?.reason instanceof Error ? signal.reason : new Error(`${what}: aborted`);
      finish(reason);
      req.destroy(reason);
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/**
 * The Accept headers of metadata-only reads: a PartialObjectMetadata (a get, and each event of a watch)
 * or a PartialObjectMetadataList, as client-go's metadata client asks. Plain JSON comes after, for a
 * server that cannot answer with metadata (an aggregated API may not): toPartialObjectMetadata keeps the
 * metadata of whatever comes.
 */
export const METADATA_ACCEPT = {
  object: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
  list: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
};

/**
 * The object's metadata under the kind's apiVersion and kind (not meta.k8s.io/v1 PartialObjectMetadata,
 * which the API server sends): as controller-runtime's metadata informers, so that handlers and readers
 * see which kind the object is, and an owner reference can be matched.
 */
export function toPartialObjectMetadata(
  kind: ResourceKind<unknown>,
  object: KubernetesObject,
): KubernetesObject {
  return { apiVersion: kind.apiVersion, kind: kind.kind, metadata: object.metadata ?? {} };
}

/** `index` is a lookup in the cache's field indexes: a list from the API server cannot honour it. */
export function refuseIndex(kind: ResourceKind<unknown>, options: ListOptions): void {
  if (options.index === undefined) return;
  throw new Error(
    `cannot list ${kind.kind} by the index "${options.index.name}": field indexes are the cache's, and ` +
      'this list goes to the API server\nhint: list through mgr.client (and not a kind in ' +
      'client.disableCacheFor), or use a fieldSelector the API server supports',
  );
}

/** `object`, its apiVersion and kind set in place when absent (list items come without them). */
function setKind<T>(kind: ResourceKind<T>, object: T): T {
  const o = object as KubernetesObject;
  if (!o.apiVersion || !o.kind) {
    o.apiVersion = kind.apiVersion;
    o.kind = kind.kind;
  }
  return object;
}

/** `object` with its apiVersion and kind, a copy if it lacked them: objects going out need them. */
function withKind<T>(kind: ResourceKind<T>, object: T): T {
  const o = object as KubernetesObject;
  if (o.apiVersion && o.kind) return object;
  return { ...o, apiVersion: kind.apiVersion, kind: kind.kind } as T;
}
