/**
 * Fault: the informer lags behind the API server (every watch event delayed by a second, through the HTTP
 * fault proxy). A controller that reads its object from the cache just after writing it then sees the old
 * object, and its next update, carrying the old resourceVersion, fails with a 409. With read-your-own-writes
 * (the default) the reconcile of an object with an unseen own write is deferred and the cached read waits,
 * so the controller never sees its old object and never meets a 409 of its own making.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../../src/builder.js';
import { HttpClient, type Client } from '../../src/client.js';
import type { Envtest } from '../../src/envtest/index.js';
import { isConflict } from '../../src/errors.js';
import type { Manager } from '../../src/manager.js';
import {
  ConfigMapKind,
  createNamespace,
  eventually,
  runManager,
  startTestEnv,
} from '../integration/helpers.js';
import { HttpFaultProxy } from './proxy.js';

let env: Envtest;
let client: Client;
let httpProxy: HttpFaultProxy;

beforeAll(async () => {
  env = await startTestEnv();
  client = new HttpClient(env.kubeConfig);
  httpProxy = new HttpFaultProxy(env.kubeConfig);
  await httpProxy.listen();
  httpProxy.delayWatches(1_000);
}, 90_000);
afterAll(async () => {
  await httpProxy?.close();
  await env?.stop();
}, 30_000);

/** How many increments the controller makes. */
const TARGET = 4;

interface Outcome {
  /** Updates that landed. */
  landed: number;
  /** Updates refused with 409 Conflict. */
  conflicts: number;
  /** Reads that showed a count below the updates landed so far: the old object. */
  staleReads: number;
  /** The count on the API server at the end. */
  counter: number;
  deferrals: number;
}

/**
 * A controller that, on each reconcile, reads its ConfigMap from the cache, adds one to `data.count` and
 * updates it, then asks to be reconciled again 50 ms later, until the count reaches TARGET.
 */
async function countTo(readYourWrites: boolean): Promise<Outcome> {
  const ns = await createNamespace(env, readYourWrites ? 'ryow-on' : 'ryow-off');
  const outcome: Outcome = { landed: 0, conflicts: 0, staleReads: 0, counter: 0, deferrals: 0 };
  let mgr!: Manager;
  const running = await runManager(
    env,
    (m) => {
      mgr = m;
      controllerManagedBy(m)
        .for(ConfigMapKind)
        .complete({
          async reconcile(request) {
            if (request.name !== 'counter') return;
            const cm = await m.client.get(ConfigMapKind, request.name, request.namespace);
            const count = Number(cm.data?.['count'] ?? '0');
            if (count < outcome.landed) outcome.staleReads++;
            if (count >= TARGET) return;
            try {
              await m.client.update(ConfigMapKind, { ...cm, data: { count: String(count + 1) } });
              outcome.landed++;
            } catch (error) {
              if (isConflict(error)) outcome.conflicts++;
              throw error;
            }
            return { requeueAfter: 50 };
          },
        });
    },
    {
      kubeConfig: httpProxy.kubeConfig(),
      cache: { namespace: ns },
      client: { readYourWrites },
    },
  );
  try {
    await client.create(ConfigMapKind, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'counter', namespace: ns },
      data: { count: '0' },
    });
    await eventually(
      async () => Number((await client.get(ConfigMapKind, 'counter', ns)).data?.['count']) >= TARGET,
      `the count to reach ${TARGET}`,
      60_000,
    );
    // A little longer: a stale reconcile still queued would show its 409 now.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    outcome.counter = Number((await client.get(ConfigMapKind, 'counter', ns)).data?.['count']);
    outcome.deferrals =
      (await mgr.metrics.value('kubesmith_reconcile_deferrals_total', { controller: 'configmap' })) ?? 0;
  } finally {
    await running.mgr.stop();
  }
  console.info(`read-your-writes ${readYourWrites ? 'on' : 'off'}, watch delayed 1 s:`, outcome);
  return outcome;
}

describe('a controller that reads after it writes, with its informer a second behind', () => {
  it('with read-your-own-writes (the default): never sees its old object, never gets a 409', async () => {
    const outcome = await countTo(true);
    expect(outcome.conflicts).toBe(0);
    expect(outcome.staleReads).toBe(0);
    expect(outcome.landed).toBe(TARGET);
    expect(outcome.counter).toBe(TARGET);
    expect(outcome.deferrals).toBeGreaterThan(0);
  }, 90_000);

  it('without it (client.readYourWrites: false): reads the old object and meets 409s', async () => {
    const outcome = await countTo(false);
    expect(outcome.conflicts + outcome.staleReads).toBeGreaterThan(0);
    expect(outcome.conflicts).toBeGreaterThan(0);
    expect(outcome.counter).toBe(TARGET);
  }, 90_000);
});
