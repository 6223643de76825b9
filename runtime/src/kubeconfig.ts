/**
 * Where the API server is and how to talk to it, loaded the way controller-runtime's `config.GetConfig`
 * does, without loading @kubernetes/client-node (whose import costs about two seconds and 70 MiB): a
 * kubeconfig file given, else the files of `KUBECONFIG` merged, else the pod's service account, else
 * `~/.kube/config`. Client certificates, tokens, token files (read again every minute and after a 401),
 * basic auth, impersonation, exec credential plugins, HTTP(S) proxies and TLS server names are handled
 * here; a user with a legacy `auth-provider` (gcp, oidc, azure) or a SOCKS proxy is handed to client-node,
 * imported only then.
 */
import type http from 'node:http';
import type https from 'node:https';
import type * as ClientNode from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { ExecCredentialSource, type ExecCredential } from './internal/exec-credential.js';
import {
  KubeconfigError,
  loadKubeconfigList,
  loadKubeconfigPath,
  resolveContext,
  type ClusterEntry,
  type ResolvedContext,
  type UserEntry,
} from './internal/kubeconfig-file.js';
import { nodeFs, nodeOs, nodePath as path } from './internal/node-modules.js';

export { KubeconfigError } from './internal/kubeconfig-file.js';

/** The service account files of a pod. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** How long a token file's token is reused before the file is read again (client-go's: a minute). */
export const TOKEN_FILE_REFRESH_MS = 60_000;

/** A certificate bundle, key or token file larger than this is not one. */
const MAX_CREDENTIAL_FILE_BYTES = 4 * 2 ** 20;

export interface LoadKubeConfigOptions {
  /**
   * A kubeconfig file to read, alone (controller-runtime's `--kubeconfig`); it must exist. Default: the
   * files of `KUBECONFIG`, else the in-cluster service account, else `~/.kube/config`.
   */
  kubeconfig?: string;
  /** The context to use instead of the kubeconfig's current-context (kubectl's `--context`). Default: none. */
  context?: string;
  /** How long an exec credential plugin may run before it is killed. Default: 60 000 ms. */
  execTimeoutMs?: number;
  /** The environment read (KUBECONFIG, KUBERNETES_SERVICE_HOST/PORT, HOME). Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** Where the pod's service account is mounted. Default: SERVICE_ACCOUNT_DIR. */
  serviceAccountDir?: string;
}

/**
 * What a request needs to reach the API server: its URL, TLS settings and headers. HttpClient asks for
 * them before every request (a token file or exec plugin may have renewed them).
 */
export interface ConnectionSettings {
  server: string;
  tls: Pick<
    https.RequestOptions,
    'ca' | 'cert' | 'key' | 'pfx' | 'passphrase' | 'servername' | 'rejectUnauthorized'
  >;
  headers: Record<string, string | string[]>;
  /** `user:password` (client-node's basic auth). */
  auth?: string;
  /** An HTTP(S) proxy to tunnel through. */
  proxyUrl?: string;
  /** An agent to send with as it is (client-node's, for its proxies). */
  agent?: http.Agent;
}

/** Where HttpClient gets its connection settings: a RestConfig, or client-node's KubeConfig adapted. */
export interface ClusterAccess {
  connection(): Promise<ConnectionSettings>;
  /** A request sent with `used` got a 401: renew the credentials for the next one. */
  unauthorized(used: ConnectionSettings): void;
}

/** The connection settings of one kubeconfig context (controller-runtime's `rest.Config`). */
export class RestConfig implements ClusterAccess {
  /** The API server's URL. */
  readonly server: string;
  /** The context it came from; undefined in a cluster. */
  readonly contextName: string | undefined;
  /** The context's namespace, or the pod's in a cluster. */
  readonly namespace: string | undefined;
  private readonly tls: ConnectionSettings['tls'];
  private readonly staticHeaders: Record<string, string | string[]>;
  private readonly proxyUrl: string | undefined;
  private readonly token: TokenFile | undefined;
  private readonly staticToken: string | undefined;
  private readonly exec: ExecCredentialSource | undefined;
  private readonly fallback: (() => Promise<ClusterAccess>) | undefined;
  private fallbackAccess: Promise<ClusterAccess> | undefined;
  /** The credentials each handed-out connection was made with, for unauthorized(). */
  private readonly issued = new WeakMap<ConnectionSettings, { exec?: ExecCredential; token?: string }>();

  /** @internal Made by loadKubeConfig. */
  constructor(parts: RestConfigParts) {
    this.server = parts.server;
    this.contextName = parts.contextName;
    this.namespace = parts.namespace;
    this.tls = parts.tls;
    this.staticHeaders = parts.headers;
    this.proxyUrl = parts.proxyUrl;
    this.token = parts.tokenFile;
    this.staticToken = parts.token;
    this.exec = parts.exec;
    this.fallback = parts.fallback;
  }

  async connection(): Promise<ConnectionSettings> {
    if (this.fallback) {
      this.fallbackAccess ??= this.fallback();
      return (await this.fallbackAccess).connection();
    }
    const headers = { ...this.staticHeaders };
    const tls = { ...this.tls };
    const used: { exec?: ExecCredential; token?: string } = {};
    // client-go's order: a token file's token over a token; a token over an exec plugin's.
    const token = this.token?.read() ?? this.staticToken;
    if (token) {
      headers.Authorization = `Bearer ${token}`;
      used.token = token;
    } else if (this.exec) {
      const credential = await this.exec.get();
      used.exec = credential;
      if (credential.token) headers.Authorization = `Bearer ${credential.token}`;
      if (credential.cert && credential.key) {
        tls.cert = credential.cert;
        tls.key = credential.key;
      }
    }
    const settings: ConnectionSettings = {
      server: this.server,
      tls,
      headers,
      ...(this.proxyUrl ? { proxyUrl: this.proxyUrl } : {}),
    };
    this.issued.set(settings, used);
    return settings;
  }

  unauthorized(used: ConnectionSettings): void {
    if (this.fallback) {
      // A fallback that failed to load has failed the request already.
      void this.fallbackAccess?.then(
        (access) => access.unauthorized(used),
        () => {},
      );
      return;
    }
    const credentials = this.issued.get(used);
    if (credentials?.exec) this.exec?.unauthorized(credentials.exec);
    if (credentials?.token) this.token?.unauthorized(credentials.token);
  }
}

/** @internal */
export interface RestConfigParts {
  server: string;
  contextName?: string;
  namespace?: string;
  tls: ConnectionSettings['tls'];
  headers: Record<string, string | string[]>;
  proxyUrl?: string;
  token?: string;
  tokenFile?: TokenFile;
  exec?: ExecCredentialSource;
  fallback?: () => Promise<ClusterAccess>;
}

/**
 * The connection settings, found as controller-runtime's `config.GetConfig` finds them: the file
 * `options.kubeconfig` names; else, when `KUBECONFIG` is set, its files merged (client-go's rules: the
 * first file to set a cluster, user or context name keeps it; current-context from the first that sets
 * it); else the pod's service account when in a cluster; else `~/.kube/config`. Throws a KubeconfigError
 * (a message and a hint) when none can be used.
 */
export function loadKubeConfig(options: LoadKubeConfigOptions = {}): RestConfig {
  const env = options.env ?? process.env;
  if (options.kubeconfig) return fromKubeconfig(loadKubeconfigPath(options.kubeconfig), options);
  if (env.KUBECONFIG) return fromKubeconfig(loadKubeconfigList(env.KUBECONFIG), options);
  const inCluster = loadInClusterConfig(options);
  if (inCluster) return inCluster;
  const file = path.join(env.HOME || nodeOs().homedir(), '.kube', 'config');
  if (!nodeFs.existsSync(file)) {
    throw new KubeconfigError(
      'no kubeconfig found: KUBECONFIG is not set, this is not a pod, and ~/.kube/config does not exist',
      'set KUBECONFIG to a kubeconfig file, or create ~/.kube/config (kind, minikube and the clouds’ CLIs write it)',
    );
  }
  return fromKubeconfig(loadKubeconfigPath(file), options);
}

/**
 * The pod's service account (client-go's `rest.InClusterConfig`): the API server at
 * KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT, its CA, and the token, read again every minute (the
 * kubelet rotates it). Undefined outside a pod (those variables unset, or no token file).
 */
export function loadInClusterConfig(options: LoadKubeConfigOptions = {}): RestConfig | undefined {
  const env = options.env ?? process.env;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) return undefined;
  const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const tokenFile = new TokenFile(path.join(dir, 'token'));
  if (tokenFile.read() === undefined) return undefined;
  // A CA that cannot be read leaves the system's (client-go logs it and goes on).
  const ca = readOptional(path.join(dir, 'ca.crt'));
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return new RestConfig({
    server: `https://${hostPart}:${port}`,
    namespace: readOptional(path.join(dir, 'namespace'))?.trim() || undefined,
    tls: ca ? { ca } : {},
    headers: {},
    tokenFile,
  });
}

/** `config`'s context (the current one, or `options.context`) as a RestConfig. */
function fromKubeconfig(
  config: Parameters<typeof resolveContext>[0],
  options: LoadKubeConfigOptions,
): RestConfig {
  const context = resolveContext(config, options.context);
  const { cluster, user, userName } = context;
  checkUser(user, userName);
  const proxyUrl = cluster['proxy-url']
    ? parseProxyUrl(cluster['proxy-url'], context.clusterName)
    : undefined;
  const server = cluster.server as string;
  const base = {
    server,
    contextName: context.contextName,
    ...(context.namespace ? { namespace: context.namespace } : {}),
  };
  if (user['auth-provider'] || proxyUrl?.protocol.startsWith('socks')) {
    return new RestConfig({ ...base, tls: {}, headers: {}, fallback: () => clientNodeFallback(context) });
  }
  const tls: ConnectionSettings['tls'] = {};
  const ca = dataOrFile(
    cluster['certificate-authority-data'],
    cluster['certificate-authority'],
    'certificate-authority',
  );
  if (ca) tls.ca = ca;
  if (cluster['insecure-skip-tls-verify']) tls.rejectUnauthorized = false;
  if (cluster['tls-server-name']) tls.servername = cluster['tls-server-name'];
  const cert = dataOrFile(user['client-certificate-data'], user['client-certificate'], 'client-certificate');
  const key = dataOrFile(user['client-key-data'], user['client-key'], 'client-key');
  if (cert) tls.cert = cert;
  if (key) tls.key = key;
  const headers = impersonationHeaders(user);
  if (user.username || user.password) {
    headers.Authorization = `Basic ${Buffer.from(`${user.username ?? ''}:${user.password ?? ''}`).toString('base64')}`;
  }
  return new RestConfig({
    ...base,
    tls,
    headers,
    ...(proxyUrl ? { proxyUrl: proxyUrl.href } : {}),
    ...(user.token ? { token: user.token } : {}),
    ...(user.tokenFile ? { tokenFile: new TokenFile(user.tokenFile, user.token) } : {}),
    ...(user.exec
      ? {
          exec: new ExecCredentialSource({
            config: user.exec,
            userName,
            cluster,
            ...(options.execTimeoutMs !== undefined ? { timeoutMs: options.execTimeoutMs } : {}),
          }),
        }
      : {}),
  });
}

/** Refuses what client-go's validation refuses of a user. */
function checkUser(user: UserEntry, userName: string): void {
  const refuse = (what: string, hint: string) => {
    throw new KubeconfigError(`user "${userName}": ${what}`, hint);
  };
  if (user.token && (user.username || user.password)) {
    refuse('has both a token and a username/password', 'keep one authentication method');
  }
  if (
    (user['client-certificate'] || user['client-certificate-data']) &&
    !(user['client-key'] || user['client-key-data'])
  ) {
    refuse('has a client certificate without a client key', 'set client-key or client-key-data');
  }
  if (user.exec && user['auth-provider']) refuse('has both exec and auth-provider', 'keep one of them');
  if ((user['as-uid'] || user['as-groups']?.length || user['as-user-extra']) && !user.as) {
    refuse('impersonates a uid, groups or extras without a user', 'set `as` to the user to impersonate');
  }
}

function impersonationHeaders(user: UserEntry): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  if (!user.as) return headers;
  headers['Impersonate-User'] = user.as;
  if (user['as-uid']) headers['Impersonate-Uid'] = user['as-uid'];
  if (user['as-groups']?.length) headers['Impersonate-Group'] = user['as-groups'];
  for (const [key, values] of Object.entries(user['as-user-extra'] ?? {})) {
    headers[`Impersonate-Extra-${encodeURIComponent(key)}`] = values;
  }
  return headers;
}

/** `data` (base64) when set, else the file's text; a file that cannot be read is an error. */
function dataOrFile(data: string | undefined, file: string | undefined, what: string): string | undefined {
  if (data) return Buffer.from(data, 'base64').toString('utf8');
  if (!file) return undefined;
  try {
    return readCredentialFile(file);
  } catch (err) {
    throw new KubeconfigError(
      `cannot read ${what} ${file}: ${(err as Error).message}`,
      'fix the path in the kubeconfig (a relative one is resolved against the kubeconfig’s directory)',
    );
  }
}

function parseProxyUrl(value: string, clusterName: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new KubeconfigError(
      `cluster "${clusterName}": proxy-url "${value}" is not a URL`,
      'use http://host:port',
    );
  }
  if (!['http:', 'https:', 'socks5:', 'socks5h:'].includes(url.protocol)) {
    throw new KubeconfigError(
      `cluster "${clusterName}": proxy-url scheme ${url.protocol} is not supported`,
      'use an http, https or socks5 proxy',
    );
  }
  return url;
}

/**
 * A certificate, key or token file's text. Refused past MAX_CREDENTIAL_FILE_BYTES, and when not a regular
 * file: a path to /dev/zero or a FIFO is no credential, and must not hang or fill the process.
 */
function readCredentialFile(file: string): string {
  const stats = nodeFs.statSync(file);
  if (!stats.isFile()) throw new Error(`${file} is not a file`);
  if (stats.size > MAX_CREDENTIAL_FILE_BYTES) {
    throw new Error(`${file} is ${stats.size} bytes, over ${MAX_CREDENTIAL_FILE_BYTES}`);
  }
  return nodeFs.readFileSync(file, 'utf8');
}

function readOptional(file: string): string | undefined {
  try {
    return readCredentialFile(file);
  } catch {
    return undefined;
  }
}

/**
 * A token read from a file, read again once a minute and after a 401 (the kubelet rotates a projected
 * service account token; client-go's cached file token source). A read that fails keeps the last token.
 */
class TokenFile {
  private token: string | undefined;
  private readAt = -Infinity;

  constructor(
    private readonly file: string,
    /** The kubeconfig's `token`, used until the file has been read. */
    private readonly fallbackToken?: string,
  ) {}

  read(): string | undefined {
    if (Date.now() - this.readAt >= TOKEN_FILE_REFRESH_MS) {
      this.readAt = Date.now();
      const text = readOptional(this.file);
      const token = text?.trim();
      if (token) this.token = token;
    }
    return this.token ?? this.fallbackToken;
  }

  unauthorized(used: string): void {
    if (used === this.token) this.readAt = -Infinity;
  }
}

/**
 * What this loader does not implement (a legacy auth-provider, a SOCKS proxy) done by client-node, imported
 * now: its KubeConfig loads the one context, paths already resolved.
 */
async function clientNodeFallback(context: ResolvedContext): Promise<ClusterAccess> {
  let clientNode: typeof ClientNode;
  try {
    clientNode = await import('@kubernetes/client-node');
  } catch (err) {
    throw new KubeconfigError(
      `user "${context.userName}" needs @kubernetes/client-node (a legacy auth-provider or a SOCKS proxy), which cannot be loaded: ${(err as Error).message.split('\n')[0]}`,
      'install @kubernetes/client-node in the operator, or use an exec credential plugin instead',
    );
  }
  const { KubeConfig: ClientNodeKubeConfig } = clientNode;
  const kubeConfig = new ClientNodeKubeConfig();
  kubeConfig.loadFromString(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: context.clusterName, cluster: context.cluster satisfies ClusterEntry }],
      users: [{ name: context.userName || 'user', user: context.user }],
      contexts: [
        {
          name: context.contextName,
          context: {
            cluster: context.clusterName,
            user: context.userName || 'user',
            namespace: context.namespace,
          },
        },
      ],
      'current-context': context.contextName,
    }),
  );
  return clientNodeAccess(kubeConfig);
}

/** client-node's KubeConfig (envtest's, or one a user made) as a ClusterAccess. */
export function clientNodeAccess(kubeConfig: KubeConfig): ClusterAccess {
  return {
    async connection() {
      const cluster = kubeConfig.getCurrentCluster();
      if (!cluster) throw new Error('the kubeconfig has no current cluster');
      const options: https.RequestOptions = { headers: {} };
      await kubeConfig.applyToHTTPSOptions(options);
      const { ca, cert, key, pfx, passphrase, servername, rejectUnauthorized } = options;
      const tls = Object.fromEntries(
        Object.entries({ ca, cert, key, pfx, passphrase, servername, rejectUnauthorized }).filter(
          ([, value]) => value !== undefined,
        ),
      );
      return {
        server: cluster.server,
        tls,
        headers: (options.headers ?? {}) as Record<string, string | string[]>,
        ...(options.auth ? { auth: options.auth } : {}),
        // client-node knows how to make the agent of its proxies; without one, HttpClient's own is used.
        ...(cluster.proxyUrl && options.agent instanceof Object
          ? { agent: options.agent as http.Agent }
          : {}),
      };
    },
    unauthorized() {},
  };
}

/** A RestConfig as it is, client-node's KubeConfig adapted. */
export function clusterAccessOf(config: KubeConfig | ClusterAccess): ClusterAccess {
  return 'applyToHTTPSOptions' in config ? clientNodeAccess(config) : config;
}
