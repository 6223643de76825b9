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
 * The Guestbook controller on a real API server: the envtest of the test run (test/envtest.setup.ts starts
 * etcd and kube-apiserver once and installs the CRDs from config/crd/bases), shared with the other test
 * files; the manager runs in this process. `npm run setup-envtest` provides the binaries (`npm test` runs
 * it first); without them these tests are skipped, and in CI (`CI=true`) they fail.
 */
import { readFileSync } from 'node:fs';
import { loadYaml } from '@kubernetes/client-node';
import { createLogger, findCondition, Manager } from '@kubesmith/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuestbookKind, type Guestbook } from '../../src/api/webapp/v1/guestbook.types.js';
import { AVAILABLE, GuestbookReconciler } from '../../src/controllers/guestbook.controller.js';
import { createNamespace, sharedEnvtest } from '../../test/envtest.js';

const root = new URL('../../', import.meta.url);

// Undefined, and the tests skipped, when the binaries are missing; under CI=true that fails the run instead.
const envtest = sharedEnvtest();

describe.skipIf(envtest === undefined)('GuestbookReconciler on a real API server', () => {
  let mgr: Manager | undefined;
  let running: Promise<void> | undefined;
  let namespace: string;

  beforeAll(async () => {
    namespace = await createNamespace(envtest!, 'guestbook-controller-');
    mgr = Manager.create({
      kubeConfig: envtest!.kubeConfig,
      cache: { namespace },
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger: createLogger({ level: 'warn' }),
    });
    new GuestbookReconciler(mgr.client).setupWithManager(mgr);
    running = mgr.start();
    await mgr.ready();
  }, 60_000);

  afterAll(async () => {
    await mgr?.stop();
    await running;
  }, 30_000);

  it('reconciles the sample: it becomes Available', async () => {
    const client = mgr!.client;
    const sample = loadYaml<Guestbook>(
      readFileSync(new URL('config/samples/webapp_v1_guestbook.yaml', root), 'utf8'),
    );
    sample.metadata = { ...sample.metadata, namespace };
    await client.create(GuestbookKind, sample);
    const name = sample.metadata?.name ?? '';
    await expect
      .poll(
        async () =>
          findCondition((await client.get(GuestbookKind, name, namespace)).status?.conditions, AVAILABLE)
            ?.status,
        { timeout: 20_000, interval: 100 },
      )
      .toBe('True');
  });
});
