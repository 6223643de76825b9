/**
 * startEnvtest on the real binaries (provisioned by `npx kubesmith envtest`): a control plane starts, serves
 * CRDs from files and custom resources, and leaves no process and no directory behind.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiextensionsV1Api, CustomObjectsApi, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findBinaryAssets, startEnvtest, type Envtest } from '../../src/envtest/index.js';
import { isGone, isRunning, waitFor } from './helpers.js';

const crdDir = fileURLToPath(new URL('./fixtures/crds', import.meta.url));

/** A CRD given as an object, with the schema keywords whose names client-node's models spell otherwise. */
const things = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'things.envtest.kubesmith.dev' },
  spec: {
    group: 'envtest.kubesmith.dev',
    names: { kind: 'Thing', listKind: 'ThingList', plural: 'things', singular: 'thing' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                'x-kubernetes-validations': [{ rule: 'self.port != 22', message: 'port 22 is reserved' }],
                properties: {
                  mode: { type: 'string', enum: ['fast', 'safe'], default: 'safe' },
                  port: { 'x-kubernetes-int-or-string': true },
                  extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                },
              },
            },
          },
        },
      },
    ],
  },
};

// Fails (does not skip) without binaries; the message says to run `npx kubesmith envtest`.
const assets = findBinaryAssets();

describe('startEnvtest', () => {
  let env: Envtest;
  let startMs: number;
  beforeAll(async () => {
    const started = Date.now();
    env = await startEnvtest({ crdDirectoryPaths: [crdDir], crds: [things], binaryAssetsDirectory: assets });
    startMs = Date.now() - started;
  }, 90_000);
  afterAll(async () => {
    await env?.stop();
  }, 30_000);

  it('starts etcd and kube-apiserver with admin credentials, within a minute', async () => {
    expect(startMs).toBeLessThan(60_000);
    console.info(`envtest started in ${startMs} ms at ${env.server}`);
    expect(env.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(isRunning(env.pids.etcd)).toBe(true);
    expect(isRunning(env.pids.apiServer)).toBe(true);
    expect(existsSync(env.kubeconfigPath)).toBe(true);
    expect(path.dirname(env.directory)).toBe(os.tmpdir());
  });

  it('installed the CRDs of every YAML and JSON file, Established', async () => {
    const api = env.kubeConfig.makeApiClient(ApiextensionsV1Api);
    const names = (await api.listCustomResourceDefinition()).items.map((crd) => crd.metadata?.name).sort();
    expect(names).toEqual([
      'gadgets.envtest.kubesmith.dev',
      'things.envtest.kubesmith.dev',
      'widgets.envtest.kubesmith.dev',
    ]);
  });

  it('installs CRDs as written: default, enum, x-kubernetes-* and CEL rules are enforced', async () => {
    const api = env.kubeConfig.makeApiClient(CustomObjectsApi);
    const ref = { group: 'envtest.kubesmith.dev', version: 'v1', namespace: 'default', plural: 'things' };
    const thing = (name: string, spec: Record<string, unknown>) => ({
      ...ref,
      body: { apiVersion: 'envtest.kubesmith.dev/v1', kind: 'Thing', metadata: { name }, spec },
    });
    const created = (await api.createNamespacedCustomObject(
      thing('t1', { port: 'http', extra: { anything: { goes: 1 } } }),
    )) as { spec: Record<string, unknown> };
    expect(created.spec).toEqual({ mode: 'safe', port: 'http', extra: { anything: { goes: 1 } } });
    await expect(api.createNamespacedCustomObject(thing('t2', { port: 8080 }))).resolves.toBeTruthy();
    await expect(api.createNamespacedCustomObject(thing('t3', { mode: 'reckless' }))).rejects.toMatchObject({
      code: 422,
      body: expect.stringContaining('Unsupported value: \\"reckless\\"'),
    });
    await expect(api.createNamespacedCustomObject(thing('t4', { port: 22 }))).rejects.toMatchObject({
      code: 422,
      body: expect.stringContaining('port 22 is reserved'),
    });
  });

  it('serves custom resources with schema defaults and validation', async () => {
    const api = env.kubeConfig.makeApiClient(CustomObjectsApi);
    const ref = { group: 'envtest.kubesmith.dev', version: 'v1', namespace: 'default', plural: 'widgets' };
    const created = (await api.createNamespacedCustomObject({
      ...ref,
      body: { apiVersion: 'envtest.kubesmith.dev/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: {} },
    })) as KubernetesObject & { spec: { size: number } };
    expect(created.metadata?.uid).toBeTruthy();
    expect(created.spec.size).toBe(3);
    await expect(
      api.createNamespacedCustomObject({
        ...ref,
        body: {
          apiVersion: 'envtest.kubesmith.dev/v1',
          kind: 'Widget',
          metadata: { name: 'w2' },
          spec: { size: 0 },
        },
      }),
    ).rejects.toMatchObject({ code: 422 });
  });

  it('stop() leaves no process and no directory, and can be called again', async () => {
    const { pids, directory } = env;
    const started = Date.now();
    await env.stop();
    console.info(`envtest stopped in ${Date.now() - started} ms`);
    expect(isGone(pids.etcd)).toBe(true);
    expect(isGone(pids.apiServer)).toBe(true);
    expect(existsSync(directory)).toBe(false);
    await waitFor(() => isGone(pids.guard), 5_000, 'the guard to exit');
    await env.stop();
  }, 30_000);
});

describe('startEnvtest failures', () => {
  let tmpDir: string;
  beforeEach(async () => {
    tmpDir = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-envtest-failures-'));
  });
  afterEach(async () => {
    await rm(tmpDir, { recursive: true, force: true });
  });

  it('fails before starting anything when a CRD path is missing', async () => {
    await expect(
      startEnvtest({ crdDirectoryPaths: [path.join(crdDir, 'nope')], binaryAssetsDirectory: assets, tmpDir }),
    ).rejects.toThrow(/CRD path .*nope does not exist/);
    expect(readdirSync(tmpDir)).toEqual([]);
  });

  it('stops and cleans up when a CRD is refused, and says which', async () => {
    const bad = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'wrong.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'Thing', plural: 'things' },
        scope: 'Namespaced',
        versions: [],
      },
    };
    const error = (await startEnvtest({ crds: [bad], binaryAssetsDirectory: assets, tmpDir }).catch(
      (e: unknown) => e,
    )) as Error;
    expect(error.message).toMatch(/^installing CRD wrong\.example\.com: 422 /);
    expect(readdirSync(tmpDir)).toEqual([]);
  }, 90_000);

  it("refuses a CRD written with client-node's model names, naming the field", async () => {
    const modelNames = structuredClone(things) as { spec: { versions: { schema: unknown }[] } };
    modelNames.spec.versions[0]!.schema = {
      openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true },
    };
    const error = (await startEnvtest({ crds: [modelNames], binaryAssetsDirectory: assets, tmpDir }).catch(
      (e: unknown) => e,
    )) as Error;
    expect(error.message).toMatch(
      /^installing CRD things\.envtest\.kubesmith\.dev: 400 .*unknown field "spec\.versions\[0\]\.schema\.openAPIV3Schema\.x_kubernetes_preserve_unknown_fields"/,
    );
    expect(readdirSync(tmpDir)).toEqual([]);
  }, 90_000);
});
