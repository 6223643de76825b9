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
 * The Guestbook controller on a real API server: envtest starts etcd and kube-apiserver, installs the CRDs
 * from config/crd/bases, and the manager runs in this process. `npm run setup-envtest` provides the
 * binaries (`npm test` runs it first); without them these tests are skipped, and in CI (`CI=true`) they fail.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadYaml } from '@kubernetes/client-node';
import { createLogger, findCondition, Manager } from '@kubesmith/runtime';
import { binaryAssetsOrSkip, startEnvtest, type Envtest } from '@kubesmith/runtime/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuestbookKind, type Guestbook } from '../../src/api/webapp/v1/guestbook.types.js';
import { AVAILABLE, GuestbookReconciler } from '../../src/controllers/guestbook.controller.js';

const root = new URL('../../', import.meta.url);

// Skipped, with one line, when the binaries are missing; under CI=true that fails the run instead.
const binaries = binaryAssetsOrSkip();

describe.skipIf(binaries === undefined)('GuestbookReconciler on a real API server', () => {
  let env: Envtest | undefined;
  let mgr: Manager | undefined;
  let running: Promise<void> | undefined;

  beforeAll(async () => {
    env = await startEnvtest({
      crdDirectoryPaths: [fileURLToPath(new URL('config/crd/bases', root))],
      ...(binaries ? { binaryAssetsDirectory: binaries } : {}),
    });
    mgr = Manager.create({
      kubeConfig: env.kubeConfig,
      metricsBindAddress: '0',
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger: createLogger({ level: 'warn' }),
    });
    new GuestbookReconciler(mgr.client).setupWithManager(mgr);
    running = mgr.start();
    await mgr.ready();
  }, 120_000);

  // env.stop() may take envtest's stopTimeoutMs (10 s) for kube-apiserver alone: more than vitest's 10 s default.
  afterAll(async () => {
    await mgr?.stop();
    await running;
    await env?.stop();
  }, 30_000);

  it('reconciles the sample: it becomes Available', async () => {
    const client = mgr!.client;
    const sample = loadYaml<Guestbook>(
      readFileSync(new URL('config/samples/webapp_v1_guestbook.yaml', root), 'utf8'),
    );
    sample.metadata = { ...sample.metadata, namespace: 'default' };
    await client.create(GuestbookKind, sample);
    const name = sample.metadata?.name ?? '';
    await expect
      .poll(
        async () =>
          findCondition((await client.get(GuestbookKind, name, 'default')).status?.conditions, AVAILABLE)
            ?.status,
        { timeout: 20_000, interval: 100 },
      )
      .toBe('True');
  });
});
