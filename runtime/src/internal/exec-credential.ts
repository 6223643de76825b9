/**
 * Exec credential plugins (client.authentication.k8s.io v1 and v1beta1), as client-go runs them: the
 * command gets the kubeconfig's args, the process's environment plus the kubeconfig's env, and
 * KUBERNETES_EXEC_INFO (an ExecCredential saying it is not interactive, with the cluster when
 * provideClusterInfo is set); it prints an ExecCredential whose status holds a token or a client
 * certificate and key. That credential is reused until its expirationTimestamp (for ever without one),
 * and the plugin runs again after that or once a request made with it got a 401.
 *
 * Unlike client-go, which waits on a plugin for ever (a person may be typing a password), a plugin here
 * runs without a terminal and is bounded: it is killed after `timeoutMs`, and its output is refused past
 * MAX_EXEC_OUTPUT_BYTES.
 */
import type { ClusterEntry, ExecConfig } from './kubeconfig-file.js';
import { KubeconfigError } from './kubeconfig-file.js';

/** The API versions of ExecCredential a plugin may speak. */
const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];

/** An ExecCredential is a token or a certificate and key: a few kilobytes. */
export const MAX_EXEC_OUTPUT_BYTES = 1 * 2 ** 20;

/** How long a plugin may run when the kubeconfig's user does not say: 60 s. */
export const DEFAULT_EXEC_TIMEOUT_MS = 60_000;

/** What a plugin gave: a token, or a client certificate and key (PEM), or both. */
export interface ExecCredential {
  token?: string;
  cert?: string;
  key?: string;
  /** ms since the epoch; undefined: valid until a 401. */
  expiresAt?: number;
}

export interface ExecPluginOptions {
  config: ExecConfig;
  /** The user's name in the kubeconfig, for messages. */
  userName: string;
  /** The cluster, handed to the plugin when provideClusterInfo is set. */
  cluster: ClusterEntry;
  timeoutMs?: number;
  now?: () => number;
}

/** Refuses an exec section client-go would refuse; returns it when usable. */
export function checkExecConfig(config: ExecConfig, userName: string): void {
  const refuse = (what: string, hint: string) => {
    throw new KubeconfigError(`user "${userName}": exec plugin ${what}`, hint);
  };
  if (!config.command) refuse('has no command', 'set users[].user.exec.command');
  if (!config.apiVersion || !EXEC_API_VERSIONS.includes(config.apiVersion)) {
    refuse(
      `apiVersion "${config.apiVersion ?? ''}" is not supported`,
      `use one of ${EXEC_API_VERSIONS.join(', ')}`,
    );
  }
  const mode = config.interactiveMode;
  if (mode === undefined && config.apiVersion === 'client.authentication.k8s.io/v1') {
    refuse('has no interactiveMode', 'set exec.interactiveMode: Never (v1 requires it)');
  }
  if (mode !== undefined && !['Never', 'IfAvailable', 'Always'].includes(mode)) {
    refuse(`has an invalid interactiveMode "${String(mode)}"`, 'use Never, IfAvailable or Always');
  }
  if (mode === 'Always') {
    refuse(
      'needs a terminal (interactiveMode: Always)',
      'an operator has none: use a plugin that can run with interactiveMode: Never',
    );
  }
  for (const variable of config.env ?? []) {
    if (!variable?.name) refuse('has an env entry without a name', 'give every exec.env entry a name');
  }
}

/**
 * One user's plugin and its cached credential. Concurrent requests share one run of the plugin.
 */
export class ExecCredentialSource {
  private cached: ExecCredential | undefined;
  private running: Promise<ExecCredential> | undefined;
  private readonly now: () => number;

  constructor(private readonly options: ExecPluginOptions) {
    checkExecConfig(options.config, options.userName);
    this.now = options.now ?? Date.now;
  }

  /** The cached credential while valid, else a new one from the plugin. */
  get(): Promise<ExecCredential> {
    const cached = this.cached;
    if (cached && (cached.expiresAt === undefined || this.now() < cached.expiresAt)) {
      return Promise.resolve(cached);
    }
    this.running ??= this.run().finally(() => (this.running = undefined));
    return this.running;
  }

  /**
   * A request made with `used` got a 401: the next one runs the plugin again, unless the credential
   * changed meanwhile (another request renewed it already).
   */
  unauthorized(used: ExecCredential): void {
    if (this.cached === used) this.cached = undefined;
  }

  private async run(): Promise<ExecCredential> {
    const credential = await runExecPlugin(this.options);
    this.cached = credential;
    return credential;
  }
}

/** Runs the plugin once and reads its ExecCredential. */
export async function runExecPlugin(options: ExecPluginOptions): Promise<ExecCredential> {
  const { config, userName } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;
  const command = config.command as string;
  const info = {
    apiVersion: config.apiVersion,
    kind: 'ExecCredential',
    spec: {
      interactive: false,
      ...(config.provideClusterInfo ? { cluster: clusterInfo(options.cluster) } : {}),
    },
  };
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const variable of config.env ?? []) env[variable.name] = variable.value;
  env.KUBERNETES_EXEC_INFO = JSON.stringify(info);
  const what = `user "${userName}": exec plugin ${command}`;

  // Imported here: most kubeconfigs have no exec plugin, and most processes never spawn one.
  const { spawn } = await import('node:child_process');
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = spawn(command, config.args ?? [], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let failure: Error | undefined;
    const fail = (error: Error) => {
      failure ??= error;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(
      () =>
        fail(
          new KubeconfigError(
            `${what} did not finish within ${timeoutMs} ms`,
            'check the plugin runs without a terminal',
          ),
        ),
      timeoutMs,
    );
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > MAX_EXEC_OUTPUT_BYTES) {
        fail(
          new KubeconfigError(
            `${what} printed more than ${MAX_EXEC_OUTPUT_BYTES} bytes`,
            'a plugin prints one ExecCredential',
          ),
        );
      } else out.push(chunk);
    });
    // Kept for the error message only, and only its end: the plugin's last words say why it failed.
    child.stderr.on('data', (chunk: Buffer) => (err = (err + chunk.toString('utf8')).slice(-2_000)));
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') {
        fail(
          new KubeconfigError(
            `${what} was not found`,
            config.installHint?.trim() || 'install it, or put it on PATH',
          ),
        );
      } else fail(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (failure) return reject(failure);
      if (code !== 0) {
        const said = err.trim().split('\n').pop() ?? '';
        return reject(
          new KubeconfigError(
            `${what} failed (${signal ?? `exit code ${code}`})${said ? `: ${said}` : ''}`,
            config.installHint?.trim() || 'run the command by hand to see what it needs',
          ),
        );
      }
      resolve(Buffer.concat(out).toString('utf8'));
    });
  });
  return parseExecCredential(stdout, config.apiVersion as string, what);
}

/** The credential of a plugin's output, checked as client-go checks it. */
export function parseExecCredential(stdout: string, apiVersion: string, what: string): ExecCredential {
  let doc: {
    apiVersion?: unknown;
    kind?: unknown;
    status?: {
      token?: unknown;
      clientCertificateData?: unknown;
      clientKeyData?: unknown;
      expirationTimestamp?: unknown;
    };
  };
  const refuse = (why: string) =>
    new KubeconfigError(`${what} ${why}`, 'the plugin must print an ExecCredential as JSON');
  try {
    doc = JSON.parse(stdout) as typeof doc;
  } catch {
    throw refuse('printed something that is not JSON');
  }
  if (typeof doc !== 'object' || doc === null)
    throw refuse('printed something that is not an ExecCredential');
  if (doc.kind !== 'ExecCredential') throw refuse(`printed kind "${String(doc.kind)}", not ExecCredential`);
  if (doc.apiVersion !== apiVersion) {
    throw refuse(`returned apiVersion "${String(doc.apiVersion)}" where the kubeconfig says ${apiVersion}`);
  }
  const status = doc.status;
  if (!status || typeof status !== 'object') throw refuse('returned no status');
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const token = text(status.token);
  const cert = text(status.clientCertificateData);
  const key = text(status.clientKeyData);
  if (!token && !cert && !key) throw refuse('returned neither a token nor a certificate and key');
  if (!cert !== !key)
    throw refuse('returned a certificate without its key, or a key without its certificate');
  let expiresAt: number | undefined;
  if (status.expirationTimestamp !== undefined && status.expirationTimestamp !== null) {
    expiresAt = Date.parse(String(status.expirationTimestamp));
    if (Number.isNaN(expiresAt)) throw refuse(`returned an invalid expirationTimestamp`);
  }
  return {
    ...(token ? { token } : {}),
    ...(cert && key ? { cert, key } : {}),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
  };
}

/** The cluster as KUBERNETES_EXEC_INFO carries it (client.authentication.k8s.io's Cluster). */
function clusterInfo(cluster: ClusterEntry): Record<string, unknown> {
  const config = cluster.extensions?.find((e) => e.name === 'client.authentication.k8s.io/exec')?.extension;
  return {
    server: cluster.server,
    ...(cluster['tls-server-name'] ? { 'tls-server-name': cluster['tls-server-name'] } : {}),
    ...(cluster['insecure-skip-tls-verify'] ? { 'insecure-skip-tls-verify': true } : {}),
    ...(cluster['certificate-authority-data']
      ? { 'certificate-authority-data': cluster['certificate-authority-data'] }
      : {}),
    ...(cluster['proxy-url'] ? { 'proxy-url': cluster['proxy-url'] } : {}),
    ...(cluster['disable-compression'] ? { 'disable-compression': true } : {}),
    ...(config !== undefined ? { config } : {}),
  };
}
