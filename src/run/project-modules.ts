/**
 * The project's own packages, loaded from its node_modules: `@kubesmith/runtime` (the kubeconfig loader, the
 * HTTP client and the certificate maker the manager itself uses, so that `run` reaches the cluster exactly
 * as the manager does) and `typescript` (the compiler the project builds with). The CLI depends on neither:
 * only the shapes it uses are declared here.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { KubesmithError } from '../errors.js';
import type TS from 'typescript';
import { PACKAGE_FILE } from '../project/layout.js';

/** A Kubernetes object as read and written here: only metadata is looked into. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    uid?: string;
    resourceVersion?: string;
    managedFields?: { manager?: string }[];
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/** A kind as the runtime's client names it (its ResourceKind). */
export interface Kind {
  group: string;
  version: string;
  apiVersion: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

export interface RuntimeClient {
  get(kind: Kind, name: string, namespace?: string, options?: { timeoutMs?: number }): Promise<KubeObject>;
  update(kind: Kind, object: KubeObject, options?: { timeoutMs?: number }): Promise<KubeObject>;
  apply(
    kind: Kind,
    object: KubeObject,
    options: { fieldManager: string; force?: boolean; timeoutMs?: number },
  ): Promise<KubeObject>;
  delete(kind: Kind, name: string, namespace?: string, options?: { timeoutMs?: number }): Promise<void>;
  close(): void;
}

export interface RestConfigLike {
  server: string;
  contextName: string | undefined;
}

/** What `run` uses of @kubesmith/runtime. */
export interface RuntimeModule {
  loadKubeConfig(options: { env?: NodeJS.ProcessEnv }): RestConfigLike;
  HttpClient: new (config: RestConfigLike, options: { timeoutMs?: number }) => RuntimeClient;
  makeServingCertificates?: (
    hosts: readonly string[],
    options?: { validDays?: number; name?: string },
  ) => Promise<{ caCert: string; cert: string; key: string }>;
}

function resolveFrom(root: string, name: string): string {
  try {
    return createRequire(path.join(root, PACKAGE_FILE)).resolve(name);
  } catch {
    throw new KubesmithError(`${name} is not installed in the project (${root})`, {
      hint: 'run `npm install` in the project',
    });
  }
}

export async function loadRuntime(root: string): Promise<RuntimeModule> {
  return (await import(pathToFileURL(resolveFrom(root, '@kubesmith/runtime')).href)) as RuntimeModule;
}

/** The project's TypeScript (typed by the CLI's own, the API `run` uses being old and stable). */
export async function loadTypeScript(root: string): Promise<typeof TS> {
  const loaded = (await import(pathToFileURL(resolveFrom(root, 'typescript')).href)) as {
    default?: typeof TS;
  };
  return loaded.default ?? (loaded as typeof TS);
}
