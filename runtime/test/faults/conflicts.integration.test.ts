/**
 * Fault: writers race on one object. Every writer increments a counter annotation by read-modify-write
 * (an update carrying the resourceVersion it read). Without a retry, most increments fail with 409
 * Conflict; with retryOnConflict every one lands, and none is lost: the counter ends at the number of
 * increments. Also: a strategic merge patch merges a built-in kind's lists by key, and a custom resource
 * refuses it with a hint.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient, type Client } from '../../src/client.js';
import type { Envtest } from '../../src/envtest/index.js';
import { ApiError, isConflict } from '../../src/errors.js';
import { DEFAULT_RETRY, retryOnConflict, type Backoff } from '../../src/retry.js';
import {
  ConfigMapKind,
  createNamespace,
  DeploymentKind,
  startTestEnv,
  WidgetKind,
} from '../integration/helpers.js';

let env: Envtest;
let client: Client;

beforeAll(async () => {
  env = await startTestEnv();
  client = new HttpClient(env.kubeConfig);
}, 90_000);
afterAll(async () => {
  await env?.stop();
}, 30_000);

const WRITERS = 8;
const INCREMENTS = 5;

/** One increment of the `count` annotation: read, add one, write back (conditional on the read). */
async function increment(ns: string): Promise<void> {
  const cm = await client.get(ConfigMapKind, 'counter', ns);
  const count = Number(cm.metadata?.annotations?.['count'] ?? '0');
  await client.update(ConfigMapKind, {
    ...cm,
    metadata: { ...cm.metadata, annotations: { count: String(count + 1) } },
  });
}

/** WRITERS writers at once, INCREMENTS each: how many landed, how many failed, and the final counter. */
async function race(
  ns: string,
  attempt: () => Promise<void>,
): Promise<{ landed: number; failed: number; counter: number }> {
  await client.create(ConfigMapKind, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'counter', namespace: ns, annotations: { count: '0' } },
  });
  let landed = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      for (let i = 0; i < INCREMENTS; i++) {
        try {
          await attempt();
          landed++;
        } catch (error) {
          if (!isConflict(error)) throw error;
          failed++;
        }
      }
    }),
  );
  const cm = await client.get(ConfigMapKind, 'counter', ns);
  return { landed, failed, counter: Number(cm.metadata?.annotations?.['count']) };
}

describe('writers racing on one object', () => {
  it('without a retry: increments fail with Conflict, and the counter shows only those that landed', async () => {
    const ns = await createNamespace(env, 'race-once');
    const outcome = await race(ns, () => increment(ns));
    console.info(`no retry: ${outcome.landed} of ${WRITERS * INCREMENTS} increments landed`, outcome);
    expect(outcome.failed).toBeGreaterThan(0);
    expect(outcome.counter).toBe(outcome.landed);
  }, 60_000);

  it('retryOnConflict (DefaultRetry): most land, none is lost: the counter ends at the number that landed', async () => {
    const ns = await createNamespace(env, 'race-retry');
    const started = performance.now();
    const outcome = await race(ns, () => retryOnConflict(() => increment(ns)));
    const ms = Math.round(performance.now() - started);
    console.info(
      `retryOnConflict(DEFAULT_RETRY): ${outcome.landed} of ${WRITERS * INCREMENTS} landed in ${ms} ms`,
    );
    expect(outcome.counter).toBe(outcome.landed);
    expect(outcome.landed + outcome.failed).toBe(WRITERS * INCREMENTS);
    // Five attempts 10 ms apart against seven other writers: most land (without a retry, about a quarter
    // do); those that do not fail loudly with the last Conflict, as client-go's RetryOnConflict.
    expect(outcome.landed).toBeGreaterThan((WRITERS * INCREMENTS) / 2);
  }, 60_000);

  it('retryOnConflict with a longer backoff: every increment lands', async () => {
    const ns = await createNamespace(env, 'race-backoff');
    const patient: Backoff = { ...DEFAULT_RETRY, steps: 30, factor: 1.5, capMs: 500 };
    const outcome = await race(ns, () => retryOnConflict(() => increment(ns), patient));
    expect(outcome).toEqual({ landed: WRITERS * INCREMENTS, failed: 0, counter: WRITERS * INCREMENTS });
  }, 60_000);
});

describe('a strategic merge patch', () => {
  it('merges a built-in kind’s containers by name, where a merge patch replaces the list', async () => {
    const ns = await createNamespace(env, 'strategic');
    const containers = [
      { name: 'a', image: 'a:1' },
      { name: 'b', image: 'b:1' },
    ];
    await client.create(DeploymentKind, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: ns },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers } },
      },
    });
    const body = { spec: { template: { spec: { containers: [{ name: 'b', image: 'b:2' }] } } } };
    const merged = await client.patch(DeploymentKind, 'web', ns, body, { type: 'strategic' });
    expect(merged.spec?.template.spec.containers.map((c) => `${c.name}=${c.image}`)).toEqual([
      'a=a:1',
      'b=b:2',
    ]);
    const replaced = await client.patch(DeploymentKind, 'web', ns, body, 'merge');
    expect(replaced.spec?.template.spec.containers.map((c) => c.name)).toEqual(['b']);
  });

  it('on a custom resource: 415 with a hint', async () => {
    const ns = await createNamespace(env, 'strategic-cr');
    await client.create(WidgetKind, {
      apiVersion: WidgetKind.apiVersion,
      kind: 'Widget',
      metadata: { name: 'w', namespace: ns },
    });
    const error = await client
      .patch(WidgetKind, 'w', ns, { spec: { size: 2 } }, { type: 'strategic' })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).statusCode).toBe(415);
    expect((error as ApiError).message).toMatch(/hint: a strategic merge patch works on built-in kinds only/);
  });
});
