/**
 * The manager's Deployment and services of a generated project agree with what the runtime does: the
 * kubelet waits longer than the manager's graceful shutdown, the ports are the ones main.ts serves, and
 * every scaffolded RBAC rule is one the runtime uses.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS } from '../../runtime/src/manager.js';
import { read, removeTemp, run, tempDir } from '../helpers/run.js';

interface Container {
  args: string[];
  ports: { containerPort: number; name: string }[];
}
interface Deployment {
  spec: { template: { spec: { terminationGracePeriodSeconds: number; containers: Container[] } } };
}

let dir: string;
beforeAll(async () => {
  dir = await tempDir('guestbook');
  expect((await run(dir, 'init', '--skip-install')).code).toBe(0);
});
afterAll(async () => {
  await removeTemp(dir);
});

describe('the generated manager', () => {
  it("gets more time from the kubelet than the runtime's graceful shutdown takes", async () => {
    const deployment = parseAllDocuments(await read(dir, 'config/manager/manager.yaml'))
      .map((doc) => doc.toJS() as { kind: string } & Deployment)
      .find((doc) => doc.kind === 'Deployment')!;
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(
      DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS,
    );
    // Secure metrics on the port the Service, the ServiceMonitor and the NetworkPolicy use.
    const manager = deployment.spec.template.spec.containers[0]!;
    expect(manager.args).toContain('--metrics-bind-address=:8443');
    expect(manager.ports).toContainEqual(expect.objectContaining({ containerPort: 8443, name: 'metrics' }));
    const service = parse(await read(dir, 'config/default/metrics_service.yaml')) as {
      spec: { ports: { name: string; port: number; targetPort: string }[] };
    };
    expect(service.spec.ports).toEqual([
      { name: 'https', port: 8443, protocol: 'TCP', targetPort: 'metrics' },
    ]);
    const monitor = parse(await read(dir, 'config/prometheus/monitor.yaml')) as {
      spec: { endpoints: Record<string, unknown>[] };
    };
    expect(monitor.spec.endpoints[0]).toMatchObject({ port: 'https', scheme: 'https' });
    expect(monitor.spec.endpoints[0]!['bearerTokenFile']).toBe(
      '/var/run/secrets/kubernetes.io/serviceaccount/token',
    );
    expect(await read(dir, 'config/network-policy/allow-metrics-traffic.yaml')).toMatch(/- port: 8443\n/);
  });

  it('is granted the reviews secure metrics make', async () => {
    const role = parse(await read(dir, 'config/rbac/metrics_auth_role.yaml')) as {
      rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    };
    expect(role.rules).toEqual([
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ]);
    expect(await read(dir, 'src/main.ts')).toMatch(
      /metrics: \{(\n {4}.*)*\n {4}secureServing: settings\.metricsSecure,/,
    );
  });

  it('offers HTTP/2 on its metrics and webhook servers only with --enable-http2', async () => {
    // The generated settings module itself, as the manager runs it.
    const { parseSettings } = (await import(path.join(dir, 'src/settings.ts'))) as {
      parseSettings(argv: string[], env: Record<string, string>): { enableHttp2: boolean };
    };
    expect(parseSettings([], {}).enableHttp2).toBe(false);
    expect(parseSettings(['--enable-http2'], {}).enableHttp2).toBe(true);
    const main = await read(dir, 'src/main.ts');
    expect(main).toMatch(/metrics: \{(\n {4}.*)*\n {4}enableHttp2: settings\.enableHttp2,/);
    expect(main).toMatch(/webhookServer: \{\n {4}enableHttp2: settings\.enableHttp2,/);
  });

  it('serves its webhooks from --webhook-cert-path on --webhook-port (what kubesmith run passes)', async () => {
    const main = await read(dir, 'src/main.ts');
    expect(main).toContain('port: settings.webhookPort,');
    expect(main).toContain('...(settings.webhookCertPath ? { certDir: settings.webhookCertPath } : {}),');
  });

  it('drains its webhook server on stop for WEBHOOK_SHUTDOWN_DELAY_MS (kubesmith run sets 0), else the runtime default', async () => {
    const { parseSettings } = (await import(path.join(dir, 'src/settings.ts'))) as {
      parseSettings(argv: string[], env: Record<string, string>): { webhookShutdownDelayMs?: number };
    };
    expect(parseSettings([], {}).webhookShutdownDelayMs).toBeUndefined();
    expect(parseSettings([], { WEBHOOK_SHUTDOWN_DELAY_MS: '0' }).webhookShutdownDelayMs).toBe(0);
    expect(parseSettings([], { WEBHOOK_SHUTDOWN_DELAY_MS: '15000' }).webhookShutdownDelayMs).toBe(15_000);
    expect(() => parseSettings([], { WEBHOOK_SHUTDOWN_DELAY_MS: '5s' })).toThrow(
      'WEBHOOK_SHUTDOWN_DELAY_MS must be a number of milliseconds, not "5s"',
    );
    expect(await read(dir, 'src/main.ts')).toMatch(
      /\.\.\.\(settings\.webhookShutdownDelayMs !== undefined\s+\? \{ shutdownDelayMs: settings\.webhookShutdownDelayMs \}/,
    );
  });
});
