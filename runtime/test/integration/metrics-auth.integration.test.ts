/**
 * Secure metrics on a real API server: HTTPS, a TokenReview of the caller's bearer token and a
 * SubjectAccessReview for `get` on /metrics, as kubebuilder v4's scaffold serves them. A token of a service
 * account bound to a metrics-reader role gets the metrics; any other caller does not.
 */
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Envtest } from '../../src/envtest/index.js';
import { runManager, startTestEnv, type RunningManager } from './helpers.js';

let env: Envtest;
let run: RunningManager;

beforeAll(async () => {
  env = await startTestEnv();
  run = await runManager(env, () => {}, { metrics: { secureServing: true } });
}, 90_000);
afterAll(async () => {
  await run?.mgr.stop();
  await env?.stop();
}, 30_000);

function get(
  port: number,
  token?: string,
): Promise<{ status: number; body: string; protocol: string | undefined }> {
  return new Promise((resolve, reject) => {
    https
      .get(
        {
          host: '127.0.0.1',
          port,
          path: '/metrics',
          rejectUnauthorized: false,
          headers: token ? { Authorization: `Bearer ${token}` } : {},
        },
        (res) => {
          let body = '';
          const protocol = (res.socket as TLSSocket).getProtocol?.() ?? undefined;
          res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body, protocol }));
        },
      )
      .on('error', reject);
  });
}

/** A token of a new service account in `default`, from the TokenRequest API (what a pod would mount). */
async function serviceAccountToken(name: string): Promise<string> {
  const core = env.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name } } });
  const request = await core.createNamespacedServiceAccountToken({
    name,
    namespace: 'default',
    body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  return request.status!.token;
}

describe('secure metrics', () => {
  it('no token: 401; a token without the permission: 403; a token bound to metrics-reader: 200', async () => {
    const port = run.mgr.addresses.metrics!.port;
    const rbac = env.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRole({
      body: {
        metadata: { name: 'metrics-reader' },
        rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: 'scraper-metrics-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'metrics-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'scraper', namespace: 'default' }],
      },
    });
    const scraper = await serviceAccountToken('scraper');
    const nobody = await serviceAccountToken('nobody');

    const anonymous = await get(port);
    expect(anonymous.status).toBe(401);
    expect(anonymous.protocol).toMatch(/^TLSv1\.[23]$/);
    expect((await get(port, 'not-a-token')).status).toBe(401);
    const forbidden = await get(port, nobody);
    expect(forbidden).toMatchObject({ status: 403, body: 'Forbidden: get on /metrics is not allowed\n' });
    const allowed = await get(port, scraper);
    expect(allowed.status).toBe(200);
    expect(allowed.body).toMatch(/^# HELP /m);
    expect(allowed.body).toMatch(/^process_cpu_seconds_total /m);
  });
});
