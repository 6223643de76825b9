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
 * The Guestbook webhooks called by a real API server: the envtest of the test run (test/envtest.setup.ts
 * starts it once, with the CRDs of config/crd/bases), shared with the other test files. This file installs
 * the Guestbook webhooks of config/webhook (`npm run manifests` writes both) for its own namespace, pointed at
 * the webhook server of the manager it runs, and removes them at the end. `npm run setup-envtest` provides
 * the binaries once; without them these tests are skipped.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadYaml } from '@kubernetes/client-node';
import { createLogger, HttpClient, Manager } from '@kubesmith/runtime';
import { installWebhooks, type InstalledWebhooks } from '@kubesmith/runtime/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuestbookKind, type Guestbook } from '../../../../src/api/webapp/v1/guestbook.types.js';
import * as webhooks from '../../../../src/api/webapp/v1/guestbook.webhook.js';
import { createNamespace, sharedEnvtest } from '../../../../test/envtest.js';
import {
  GuestbookKind as GuestbookV2Kind,
  type Guestbook as GuestbookV2,
} from '../../../../src/api/webapp/v2/guestbook.types.js';
import * as guestbookV2 from '../../../../src/api/webapp/v2/guestbook.conversion.js';
// +kubesmith:scaffold:imports

const root = new URL('../../../../', import.meta.url);
/** This file's own namespace on the shared API server (beforeAll creates it). */
let namespace = '';

/** config/samples/webapp_v1_guestbook.yaml, named `name`. */
function sample(name: string): Guestbook {
  const object = loadYaml<Guestbook>(
    readFileSync(new URL('config/samples/webapp_v1_guestbook.yaml', root), 'utf8'),
  );
  return { ...object, metadata: { ...object.metadata, name, namespace } };
}

// Undefined, and the tests skipped, when the binaries are missing; under CI=true that fails the run instead.
const envtest = sharedEnvtest();

describe.skipIf(envtest === undefined)('Guestbook webhooks on a real API server', () => {
  let installed: InstalledWebhooks | undefined;
  let mgr: Manager | undefined;
  let running: Promise<void> | undefined;
  /** Reads and writes straight to the API server, as kubectl would. */
  let api: HttpClient;

  beforeAll(async () => {
    namespace = await createNamespace(envtest!, 'guestbook-webhook-');
    installed = await installWebhooks(envtest!.kubeConfig, {
      paths: [fileURLToPath(new URL('config/webhook', root))],
      // This kind's webhooks only, for this file's namespace only: the objects of the
      // other test files never call this file's server.
      resources: [{ group: 'webapp.example.com', resource: 'guestbooks' }],
      namespace,
      conversionCrdNames: [
        'guestbooks.webapp.example.com',
        // +kubesmith:scaffold:conversioncrds
      ],
    });
    const { host, port, certDir } = installed;
    mgr = Manager.create({
      kubeConfig: envtest!.kubeConfig,
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger: createLogger({ level: 'warn' }),
      webhookServer: { host, port, certDir },
    });
    webhooks.setupGuestbookWebhookWithManager(mgr);
    running = mgr.start();
    await mgr.ready();
    api = new HttpClient(envtest!.kubeConfig);
  }, 60_000);

  afterAll(async () => {
    try {
      await installed?.uninstall();
    } finally {
      await mgr?.stop();
      await running;
    }
  }, 30_000);

  /** How many requests the webhook at `path` answered with `code`: proof that the API server called it. */
  async function answered(path: string, code = '200'): Promise<number> {
    const labels = { webhook: path, code };
    return (await mgr!.webhookServer.metrics.value('controller_runtime_webhook_requests_total', labels)) ?? 0;
  }

  it('the API server accepts the sample, and no webhook fails', async () => {
    const created = await api.create(GuestbookKind, sample('guestbook-accepted'));
    expect(created.metadata?.uid).toBeTruthy();
    expect(
      (await answered('/mutate-webapp-example-com-v1-guestbook', '500')) +
        (await answered('/validate-webapp-example-com-v1-guestbook', '500')),
    ).toBe(0);
  });

  it('the API server calls the defaulting webhook: the stored Guestbook is defaulted', async () => {
    const before = await answered('/mutate-webapp-example-com-v1-guestbook');
    const created = await api.create(GuestbookKind, sample('guestbook-defaulted'));
    const expected = sample('guestbook-defaulted');
    webhooks.defaultGuestbook(expected);
    expect(created.spec).toMatchObject(expected.spec ?? {});
    expect(await answered('/mutate-webapp-example-com-v1-guestbook')).toBeGreaterThan(before);
  });

  it('the API server calls the validating webhook: an invalid Guestbook is refused, naming the field', async () => {
    await expect(api.create(GuestbookKind, sample('x'.repeat(64)))).rejects.toThrow(
      /admission webhook "vguestbook-v1.kb.io" denied the request: .*metadata\.name: Too long/,
    );
  });

  it('the API server calls the validating webhook: an update that changes the app label is refused', async () => {
    const label = webhooks.APP_LABEL;
    const labelled = sample('guestbook-labelled');
    labelled.metadata = { ...labelled.metadata, labels: { ...labelled.metadata?.labels, [label]: 'a' } };
    const created = await api.create(GuestbookKind, labelled);
    const changed = {
      ...created,
      metadata: { ...created.metadata, labels: { ...created.metadata?.labels, [label]: 'b' } },
    };
    await expect(api.update(GuestbookKind, changed)).rejects.toThrow(
      /denied the request: .*metadata\.labels\[app\.kubernetes\.io\/name\]: Forbidden: field is immutable/,
    );
  });

  it('the API server converts Guestbook v2 through the webhook: written in v2, read back in v1 and v2', async () => {
    const name = 'guestbook-from-v2';
    const written = loadYaml<GuestbookV2>(
      readFileSync(new URL('config/samples/webapp_v2_guestbook.yaml', root), 'utf8'),
    );
    written.metadata = { ...written.metadata, name, namespace: namespace };
    const created = await api.create(GuestbookV2Kind, written);
    const asHub = await api.get(GuestbookKind, name, namespace);
    expect(asHub.apiVersion).toBe('webapp.example.com/v1');
    expect(asHub.spec).toEqual(guestbookV2.convertTo(created).spec);
    const asSpoke = await api.get(GuestbookV2Kind, name, namespace);
    expect(asSpoke.spec).toEqual(created.spec);
    expect(await answered('/convert')).toBeGreaterThan(0);
  });

  // +kubesmith:scaffold:webhookintegrationtests
});
