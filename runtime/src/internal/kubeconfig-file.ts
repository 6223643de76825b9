/**
 * Kubeconfig files: reading one, merging a list of them (the `KUBECONFIG` path list) and choosing a
 * context, with client-go's clientcmd rules: the first file to set a cluster, user or context name wins
 * that whole entry (a later file's entry of the same name is ignored, not merged into it); current-context
 * comes from the first file that sets it; a missing file of the list is skipped, an unreadable or invalid
 * one is an error; a relative path in a file (certificate-authority, client-certificate, client-key,
 * tokenFile, and an exec command that has a `/`) is resolved against that file's directory.
 */
import type * as YamlModule from 'yaml';
import { parseBlockYaml } from './block-yaml.js';
import { nodeFs, nodeModule, nodePath as path } from './node-modules.js';

/** A kubeconfig larger than this is not one (a few clusters and users take kilobytes). */
export const MAX_KUBECONFIG_BYTES = 4 * 2 ** 20;

export interface ClusterEntry {
  server?: string;
  'certificate-authority'?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
  'proxy-url'?: string;
  'disable-compression'?: boolean;
  extensions?: { name: string; extension: unknown }[];
}

export interface ExecEnvVar {
  name: string;
  value: string;
}

export interface ExecConfig {
  apiVersion?: string;
  command?: string;
  args?: string[];
  env?: ExecEnvVar[] | null;
  installHint?: string;
  provideClusterInfo?: boolean;
  interactiveMode?: 'Never' | 'IfAvailable' | 'Always';
}

export interface UserEntry {
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  as?: string;
  'as-uid'?: string;
  'as-groups'?: string[];
  'as-user-extra'?: Record<string, string[]>;
  exec?: ExecConfig;
  'auth-provider'?: { name?: string; config?: Record<string, string> };
}

export interface ContextEntry {
  cluster?: string;
  user?: string;
  namespace?: string;
}

/** One file's, or a merged list's, clusters, users and contexts by name. */
export interface KubeconfigData {
  clusters: Map<string, ClusterEntry>;
  users: Map<string, UserEntry>;
  contexts: Map<string, ContextEntry>;
  currentContext: string | undefined;
}

/** The chosen context's cluster and user, named. */
export interface ResolvedContext {
  contextName: string;
  clusterName: string;
  cluster: ClusterEntry;
  userName: string;
  user: UserEntry;
  namespace: string | undefined;
}

/** A kubeconfig that cannot be used: a one-line message, and what to do. */
export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(`${message}\nhint: ${hint}`);
  }
}

/**
 * A YAML kubeconfig: read by the small block reader when it is written as kubectl and the tools write
 * kubeconfigs, else (anchors, flow style, block scalars, numbers...) by the `yaml` package, which costs
 * ~60 ms to load and is loaded only then. Both read a kubeconfig the same (block-yaml.ts).
 */
function parseYaml(text: string): unknown {
  const simple = parseBlockYaml(text);
  if (simple !== undefined) return simple.value;
  const yaml = nodeModule.createRequire(import.meta.url)('yaml') as typeof YamlModule;
  return yaml.parse(text, { maxAliasCount: 100 });
}

/** The text of `file`, refused when it is larger than MAX_KUBECONFIG_BYTES or not a file. */
function readBounded(file: string): string {
  const stats = nodeFs.statSync(file);
  if (!stats.isFile())
    throw new KubeconfigError(`kubeconfig ${file} is not a file`, 'point KUBECONFIG at a file');
  if (stats.size > MAX_KUBECONFIG_BYTES) {
    throw new KubeconfigError(
      `kubeconfig ${file} is ${stats.size} bytes, over ${MAX_KUBECONFIG_BYTES}`,
      'a kubeconfig holds a few clusters and users: check the path',
    );
  }
  return nodeFs.readFileSync(file, 'utf8');
}

/**
 * Reads one kubeconfig file, its relative paths resolved against its directory. Throws ENOENT as is (the
 * caller decides whether a missing file is an error).
 */
export function readKubeconfigFile(file: string): KubeconfigData {
  const text = readBounded(file);
  return parseKubeconfig(text, file);
}

/** A kubeconfig's text (JSON or YAML), its relative paths resolved against `file`'s directory. */
export function parseKubeconfig(text: string, file: string): KubeconfigData {
  let doc: unknown;
  try {
    doc = text.trimStart().startsWith('{') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new KubeconfigError(
      `kubeconfig ${file} is not valid YAML: ${firstLine(err)}`,
      'fix the file, or point KUBECONFIG at another one',
    );
  }
  if (doc === null || doc === undefined) doc = {};
  if (!isObject(doc)) throw invalid(file, 'the file is not a mapping');
  const base = path.dirname(path.resolve(file));
  const data: KubeconfigData = {
    clusters: namedEntries(doc.clusters, 'clusters', 'cluster', file) as Map<string, ClusterEntry>,
    users: namedEntries(doc.users, 'users', 'user', file) as Map<string, UserEntry>,
    contexts: namedEntries(doc.contexts, 'contexts', 'context', file) as Map<string, ContextEntry>,
    currentContext: optionalString(doc['current-context'], 'current-context', file) || undefined,
  };
  for (const cluster of data.clusters.values()) {
    cluster['certificate-authority'] = resolvePath(cluster['certificate-authority'], base);
  }
  for (const user of data.users.values()) {
    user['client-certificate'] = resolvePath(user['client-certificate'], base);
    user['client-key'] = resolvePath(user['client-key'], base);
    user.tokenFile = resolvePath(user.tokenFile, base);
    // A bare command name is looked up on PATH; only one with a separator is a path (client-go's rule).
    if (user.exec?.command?.includes(path.sep)) user.exec.command = resolvePath(user.exec.command, base);
  }
  return data;
}

/**
 * The files of a `KUBECONFIG` value, merged: missing and empty entries skipped, duplicates read once.
 * Throws when no file of the list exists.
 */
export function loadKubeconfigList(value: string): KubeconfigData {
  const files = [...new Set(value.split(path.delimiter).filter((file) => file !== ''))];
  const found: KubeconfigData[] = [];
  for (const file of files) {
    try {
      found.push(readKubeconfigFile(file));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err instanceof KubeconfigError ? err : cannotRead(file, err);
    }
  }
  if (found.length === 0) {
    throw new KubeconfigError(
      `none of the files KUBECONFIG lists exists: ${files.join(path.delimiter)}`,
      'set KUBECONFIG to an existing kubeconfig file, or unset it',
    );
  }
  return mergeKubeconfigs(found);
}

/** Reads a file that must exist (an explicit path, `~/.kube/config` once found). */
export function loadKubeconfigPath(file: string): KubeconfigData {
  try {
    return readKubeconfigFile(file);
  } catch (err) {
    throw err instanceof KubeconfigError ? err : cannotRead(file, err);
  }
}

/**
 * Kubeconfigs merged in precedence order, the first the strongest: the first to set a name keeps its
 * whole entry, and the first current-context set wins.
 */
export function mergeKubeconfigs(configs: readonly KubeconfigData[]): KubeconfigData {
  const merged: KubeconfigData = {
    clusters: new Map(),
    users: new Map(),
    contexts: new Map(),
    currentContext: undefined,
  };
  for (const config of configs) {
    for (const key of ['clusters', 'users', 'contexts'] as const) {
      const into = merged[key] as Map<string, unknown>;
      for (const [name, entry] of config[key]) if (!into.has(name)) into.set(name, entry);
    }
    merged.currentContext ??= config.currentContext;
  }
  return merged;
}

/** The context `override` names, else the current one, with its cluster and user; throws what is missing. */
export function resolveContext(config: KubeconfigData, override?: string): ResolvedContext {
  const contextName = override || config.currentContext;
  if (!contextName) {
    throw new KubeconfigError(
      'the kubeconfig has no current-context',
      'run `kubectl config use-context <name>`, or pass the context to use',
    );
  }
  const context = config.contexts.get(contextName);
  if (!context) {
    throw new KubeconfigError(
      `context "${contextName}" is not in the kubeconfig`,
      `the contexts are: ${[...config.contexts.keys()].join(', ') || 'none'}`,
    );
  }
  const clusterName = context.cluster ?? '';
  const cluster = config.clusters.get(clusterName);
  if (!cluster) {
    throw new KubeconfigError(
      `cluster "${clusterName}" of context "${contextName}" is not in the kubeconfig`,
      'add the cluster, or fix the context',
    );
  }
  if (!cluster.server) {
    throw new KubeconfigError(
      `cluster "${clusterName}" has no server`,
      "set the cluster's server: https://host:port",
    );
  }
  const userName = context.user ?? '';
  // A user the kubeconfig lacks is no user: the requests go anonymously, as client-go's do.
  const user = config.users.get(userName) ?? {};
  return { contextName, clusterName, cluster, userName, user, namespace: context.namespace || undefined };
}

function namedEntries(list: unknown, key: string, field: string, file: string): Map<string, object> {
  const out = new Map<string, object>();
  if (list === undefined || list === null) return out;
  if (!Array.isArray(list)) throw invalid(file, `${key} is not a list`);
  for (const item of list) {
    if (!isObject(item) || typeof item.name !== 'string')
      throw invalid(file, `an entry of ${key} has no name`);
    const entry = item[field] ?? {};
    if (!isObject(entry)) throw invalid(file, `${key} entry "${item.name}" has no ${field} mapping`);
    // The first of two entries of one name in one file wins, as with two files.
    if (!out.has(item.name)) out.set(item.name, { ...entry });
  }
  return out;
}

function optionalString(value: unknown, key: string, file: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(file, `${key} is not a string`);
  return value;
}

function resolvePath(file: string | undefined, base: string): string | undefined {
  if (!file) return file;
  return path.isAbsolute(file) ? file : path.join(base, file);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(file: string, what: string): KubeconfigError {
  return new KubeconfigError(
    `kubeconfig ${file} is invalid: ${what}`,
    'fix the file (see `kubectl config view`)',
  );
}

function cannotRead(file: string, err: unknown): KubeconfigError {
  return new KubeconfigError(
    `cannot read kubeconfig ${file}: ${firstLine(err)}`,
    'check the path and its permissions',
  );
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
}
