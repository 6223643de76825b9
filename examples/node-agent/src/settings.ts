/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

/**
 * The manager's settings from its command line and environment, the flags a kubebuilder operator takes.
 */
import { parseArgs } from 'node:util';

export interface Settings {
  /** Where /metrics is served; `0` turns it off. */
  metricsBindAddress: string;
  /**
   * Serve /metrics over HTTPS, only to callers whose token the API server authenticates (TokenReview) and
   * allows `get` on /metrics (SubjectAccessReview); `--metrics-secure=false` serves plain HTTP to anyone.
   */
  metricsSecure: boolean;
  /** Directory of the metrics serving certificate (tls.crt, tls.key); unset: a self-signed one. */
  metricsCertPath: string | undefined;
  /**
   * Whether the metrics and webhook servers offer HTTP/2 (`--enable-http2`). Off by default, as
   * kubebuilder scaffolds it: the servers speak HTTP/1.1 only, out of reach of HTTP/2's stream floods and
   * rapid resets (CVE-2023-44487).
   */
  enableHttp2: boolean;
  /** Where /healthz and /readyz are served; `0` turns them off. */
  healthProbeBindAddress: string;
  /**
   * Directory of the webhook serving certificate (tls.crt, tls.key), kubebuilder's `--webhook-cert-path`;
   * unset: `<tmpdir>/k8s-webhook-server/serving-certs`, where the Deployment mounts it.
   */
  webhookCertPath: string | undefined;
  /** The port the webhook server listens on (`kubesmith run --webhooks` picks its own). */
  webhookPort: number;
  /**
   * How long the webhook server keeps answering after SIGTERM, while the pod's endpoint leaves the Service
   * (WEBHOOK_SHUTDOWN_DELAY_MS); unset: the runtime's 5000. `kubesmith run` sets 0: nothing drains locally.
   */
  webhookShutdownDelayMs: number | undefined;
  /** Whether only one replica at a time reconciles, the one holding the leader election lease. */
  leaderElect: boolean;
  /** The one namespace to watch (WATCH_NAMESPACE); undefined watches all. */
  watchNamespace: string | undefined;
}

export function parseSettings(argv: string[], env: NodeJS.ProcessEnv): Settings {
  const { values } = parseArgs({
    args: argv,
    options: {
      'metrics-bind-address': { type: 'string', default: ':8443' },
      'metrics-secure': { type: 'string', default: 'true' },
      'metrics-cert-path': { type: 'string' },
      'enable-http2': { type: 'boolean', default: false },
      'health-probe-bind-address': { type: 'string', default: ':8081' },
      'webhook-cert-path': { type: 'string' },
      'webhook-port': { type: 'string', default: '9443' },
      'leader-elect': { type: 'boolean', default: false },
    },
    strict: true,
  });
  const secure = values['metrics-secure'];
  if (secure !== 'true' && secure !== 'false') {
    throw new Error(`--metrics-secure must be true or false, not "${secure}"`);
  }
  const webhookPort = values['webhook-port'];
  if (!/^\d{1,5}$/.test(webhookPort) || Number(webhookPort) < 1 || Number(webhookPort) > 65535) {
    throw new Error(`--webhook-port must be a port number from 1 to 65535, not "${webhookPort}"`);
  }
  const shutdownDelay = env['WEBHOOK_SHUTDOWN_DELAY_MS'] || undefined;
  if (shutdownDelay !== undefined && !/^\d{1,6}$/.test(shutdownDelay)) {
    throw new Error(`WEBHOOK_SHUTDOWN_DELAY_MS must be a number of milliseconds, not "${shutdownDelay}"`);
  }
  return {
    metricsBindAddress: values['metrics-bind-address'],
    metricsSecure: secure === 'true',
    metricsCertPath: values['metrics-cert-path'] || undefined,
    enableHttp2: values['enable-http2'],
    healthProbeBindAddress: values['health-probe-bind-address'],
    webhookCertPath: values['webhook-cert-path'] || undefined,
    webhookPort: Number(webhookPort),
    webhookShutdownDelayMs: shutdownDelay === undefined ? undefined : Number(shutdownDelay),
    leaderElect: values['leader-elect'],
    watchNamespace: env['WATCH_NAMESPACE'] || undefined,
  };
}
