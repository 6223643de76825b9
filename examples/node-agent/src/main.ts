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
 * The operator's entry point: it reads its settings, creates the manager, registers every controller and
 * runs until SIGTERM or SIGINT, then stops gracefully.
 */
import { Manager } from '@kubesmith/runtime';
import { parseSettings } from './settings.js';
import { NodeAgentReconciler } from './controllers/nodeagent.controller.js';
// +kubesmith:scaffold:imports

const settings = parseSettings(process.argv.slice(2), process.env);

const mgr = Manager.create({
  metrics: {
    bindAddress: settings.metricsBindAddress,
    secureServing: settings.metricsSecure,
    ...(settings.metricsCertPath ? { certDir: settings.metricsCertPath } : {}),
    enableHttp2: settings.enableHttp2,
  },
  webhookServer: {
    enableHttp2: settings.enableHttp2,
    port: settings.webhookPort,
    ...(settings.webhookCertPath ? { certDir: settings.webhookCertPath } : {}),
    ...(settings.webhookShutdownDelayMs !== undefined
      ? { shutdownDelayMs: settings.webhookShutdownDelayMs }
      : {}),
  },
  healthProbeBindAddress: settings.healthProbeBindAddress,
  leaderElection: { enabled: settings.leaderElect, id: 'node-agent.example.com' },
  cache: { namespace: settings.watchNamespace },
});

new NodeAgentReconciler(mgr.client).setupWithManager(mgr);
// +kubesmith:scaffold:builder

mgr.logger.info('starting manager');
await mgr.start();
