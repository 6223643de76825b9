/**
 * Shared by the runtime's integration tests: one envtest per test file with the fixture CRDs (Widget,
 * namespaced, with a status subresource; Gadget, cluster-scoped), the kinds they use, polling with a
 * deadline, and managers started on the real API server.
 */
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import {
  createNamespace as createEnvtestNamespace,
  startEnvtest,
  type Envtest,
  type EnvtestOptions,
} from '../../src/envtest/index.js';
import { groupVersion, resourceKind } from '../../src/kinds.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { Manager, type ManagerOptions } from '../../src/manager.js';
import type { KubernetesObject } from '../../src/types.js';

export const crdDir = fileURLToPath(new URL('../envtest/fixtures/crds', import.meta.url));

export interface Widget extends KubernetesObject {
  spec?: { size?: number };
  status?: { ready?: boolean };
}

export const WidgetKind = groupVersion('envtest.kubesmith.dev', 'v1').kind<Widget>('Widget', {
  plural: 'widgets',
});
export const GadgetKind = groupVersion('envtest.kubesmith.dev', 'v1').kind('Gadget', {
  plural: 'gadgets',
  namespaced: false,
});

export interface ConfigMap extends KubernetesObject {
  data?: Record<string, string>;
}
export const ConfigMapKind = resourceKind<ConfigMap>({
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
});

export interface Deployment extends KubernetesObject {
  spec?: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: { containers: { name: string; image: string }[] };
    };
  };
}
export const DeploymentKind = resourceKind<Deployment>({
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  plural: 'deployments',
  namespaced: true,
});

/** Starts envtest with the fixture CRDs: call in beforeAll, and `env.stop()` in afterAll. */
export function startTestEnv(options: EnvtestOptions = {}): Promise<Envtest> {
  return startEnvtest({ crdDirectoryPaths: [crdDir], ...options });
}

/** A fresh namespace per test, so that tests of one file do not see each other's objects. */
export function createNamespace(env: Envtest, prefix = 'test'): Promise<string> {
  return createEnvtestNamespace(env, `${prefix}-`);
}

/** Polls `condition` every 20 ms until it returns a truthy value; fails after `timeoutMs` naming `what`. */
export async function eventually<T>(
  condition: () => T | Promise<T>,
  what: string,
  timeoutMs = 10_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const detail = last instanceof Error ? ` (last error: ${last.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A logger that keeps its lines (parsed) instead of writing them; LOG_LEVEL=debug shows them too. */
export function memoryLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const show = process.env['LOG_LEVEL'] === 'debug';
  const logger = createLogger({
    level: 'debug',
    write: (line) => {
      lines.push(JSON.parse(line) as Record<string, unknown>);
      if (show) process.stderr.write(line);
    },
  });
  return { logger, lines };
}

export interface RunningManager {
  mgr: Manager;
  /** What start() settled with, once it has. */
  result: Promise<unknown>;
  lines: Record<string, unknown>[];
}

/**
 * Creates a manager on `env` (servers on free loopback ports, no signal handlers), lets `setup` add its
 * controllers, starts it and, unless `waitReady` is false, waits until its controllers run.
 */
export async function runManager(
  env: Envtest,
  setup: (mgr: Manager) => void,
  options: ManagerOptions & { waitReady?: boolean } = {},
): Promise<RunningManager> {
  const { waitReady = true, ...rest } = options;
  const { logger, lines } = memoryLogger();
  const mgr = Manager.create({
    kubeConfig: env.kubeConfig,
    metrics: { bindAddress: '127.0.0.1:0' },
    healthProbeBindAddress: '127.0.0.1:0',
    handleSignals: false,
    logger,
    ...rest,
  });
  setup(mgr);
  const result = mgr.start().then(
    () => 'stopped',
    (error: unknown) => error,
  );
  if (waitReady) {
    await Promise.race([
      mgr.ready(),
      result.then((outcome) => {
        throw new Error(`the manager ended before it was ready: ${String(outcome)}`);
      }),
    ]);
  }
  return { mgr, result, lines };
}

/** GET `path` on a manager's server: its status and body. */
export function httpGet(
  address: { port: number } | undefined,
  path: string,
): Promise<{ status: number; body: string }> {
  if (!address) throw new Error('the server is not listening');
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: address.port, path }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

/** A promise with its resolve function outside: a gate a test opens. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
