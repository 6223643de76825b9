/**
 * The priority queue on the real API server: a controller that starts with many objects replays them
 * (its informer's first list) at low priority, so an object created once its cache has synced is
 * reconciled within a bounded time, not after the replay; with `controller.usePriorityQueue: false` it
 * waits for the whole replay.
 *
 * PRIORITY_OBJECTS sets how many objects exist before the manager starts (default 2,000, which keeps the
 * file under a minute on a loaded 2-core machine); the tests print, on vs off, the time from the create
 * of the new object to its reconcile (`PRIORITY_OBJECTS=10000` measures the figure).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../../src/builder.js';
import { HttpClient, type Client } from '../../src/client.js';
import type { Envtest } from '../../src/envtest/index.js';
import {
  ConfigMapKind,
  createNamespace,
  eventually,
  runManager,
  startTestEnv,
  type ConfigMap,
  type RunningManager,
} from './helpers.js';

const OBJECTS = Number(process.env['PRIORITY_OBJECTS'] ?? 2_000);
if (!Number.isInteger(OBJECTS) || OBJECTS < 2)
  throw new Error('PRIORITY_OBJECTS must be a whole number above 1');
/** Each test starts a manager and waits, at worst, for the whole replay. */
const TEST_TIMEOUT_MS = 60_000 + OBJECTS * 30;
/** How long each reconcile takes: a few API calls' worth, so that the replay lasts a while. */
const RECONCILE_MS = 3;

let env: Envtest;
let client: Client;
let ns: string;

beforeAll(
  async () => {
    env = await startTestEnv();
    client = new HttpClient(env.kubeConfig);
    ns = await createNamespace(env, 'priority');
    const names = Array.from({ length: OBJECTS }, (_, i) => `existing-${i}`);
    for (let i = 0; i < names.length; i += 32) {
      await Promise.all(
        names.slice(i, i + 32).map((name) =>
          client.create(ConfigMapKind, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name, namespace: ns },
            data: { n: name },
          }),
        ),
      );
    }
  },
  60_000 + OBJECTS * 20,
);
afterAll(async () => {
  await env?.stop();
}, 30_000);

interface Replay {
  /** Of the objects that existed before the start, how many were reconciled before the new one. */
  before: number;
  /** Milliseconds from the create of the new object (once the caches had synced) to its reconcile. */
  latencyMs: number;
}

/**
 * Starts a manager whose controller reconciles the namespace's ConfigMaps (each taking RECONCILE_MS),
 * creates a new ConfigMap once the caches have synced, and reports when the new one was reconciled.
 */
async function replay(name: string, usePriorityQueue: boolean, streamingList = true): Promise<Replay> {
  const reconciled: string[] = [];
  let reconciledAt = 0;
  let running: RunningManager | undefined;
  try {
    running = await runManager(
      env,
      (mgr) => {
        controllerManagedBy(mgr)
          .for(ConfigMapKind)
          .complete({
            async reconcile(request) {
              await new Promise((resolve) => setTimeout(resolve, RECONCILE_MS));
              if (request.name === name) reconciledAt = performance.now();
              reconciled.push(request.name);
            },
          });
      },
      { cache: { namespace: ns, streamingList }, controller: { usePriorityQueue } },
    );
    const created = performance.now();
    await client.create(ConfigMapKind, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns },
    } satisfies ConfigMap);
    await eventually(() => reconciledAt > 0, `the reconcile of ${name}`, 30_000 + OBJECTS * 20);
    const before = reconciled.slice(0, reconciled.indexOf(name)).filter((n) => n.startsWith('existing-'));
    const result = { before: before.length, latencyMs: reconciledAt - created };
    const how = `${OBJECTS} objects${streamingList ? '' : ' listed in pages'}`;
    process.stderr.write(
      `priority queue ${usePriorityQueue ? 'on' : 'off'}, ${how}: the new object was reconciled ` +
        `${result.latencyMs.toFixed(0)} ms after its create, after ${result.before} of the replay\n`,
    );
    return result;
  } finally {
    await running?.mgr.stop();
  }
}

describe('a controller that starts with many objects', { timeout: TEST_TIMEOUT_MS }, () => {
  it('reconciles one created after its cache synced before the replay ends', async () => {
    const { before } = await replay('new-with-priorities', true);
    expect(before).toBeLessThan(OBJECTS / 2);
  });

  it('does so too when its informer reads the list in pages instead of streaming it', async () => {
    const { before } = await replay('new-after-pages', true, false);
    expect(before).toBeLessThan(OBJECTS / 2);
  });

  it('with usePriorityQueue off, reconciles it only after the replay', async () => {
    const { before } = await replay('new-without-priorities', false);
    expect(before).toBe(OBJECTS);
  });
});
