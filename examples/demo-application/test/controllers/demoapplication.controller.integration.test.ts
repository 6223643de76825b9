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
 * The DemoApplication controller on a cluster whose controllers run: the envtest of the test run in cluster mode
 * (test/envtest.setup.ts starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and a fake node
 * (KWOK) once, with the CRDs from config/crd/bases), shared with the other test files; the manager runs in
 * this process and watches a namespace of this file's own. Deployments get pods that are scheduled and
 * reported Running and Ready (no container runs), and owner references are garbage-collected.
 * `npm test` provides the binaries (`kubesmith envtest --with-controllers`); without them these tests are
 * skipped with one line, and in CI (`CI=true`) they fail.
 */
import { readFileSync } from 'node:fs';
import { loadYaml, type V1Pod, type V1ReplicaSet } from '@kubernetes/client-node';
import {
  createLogger,
  findCondition,
  isNotFound,
  Manager,
  resourceKind,
  type Reader,
} from '@kubesmith/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DemoApplicationKind, type DemoApplication } from '../../src/api/demo/v1/demoapplication.types.js';
import {
  AVAILABLE,
  DeploymentKind,
  FINALIZER,
  ServiceKind,
  DemoApplicationReconciler,
} from '../../src/controllers/demoapplication.controller.js';
import { createNamespace, sharedEnvtest } from '../../test/envtest.js';

const root = new URL('../../', import.meta.url);
const ReplicaSetKind = resourceKind<V1ReplicaSet>({
  group: 'apps',
  version: 'v1',
  kind: 'ReplicaSet',
  plural: 'replicasets',
  namespaced: true,
});
const PodKind = resourceKind<V1Pod>({
  group: '',
  version: 'v1',
  kind: 'Pod',
  plural: 'pods',
  namespaced: true,
});
const poll = { timeout: 30_000, interval: 50 };
/** Each test waits up to `poll.timeout` for the cluster's controllers: more than vitest's default 5 s. */
const STEP_TIMEOUT = { timeout: 60_000 };

// Undefined, and the tests skipped, when the binaries are missing; under CI=true that fails the run instead.
const envtest = sharedEnvtest();

describe.skipIf(envtest === undefined)(
  'DemoApplicationReconciler on a cluster (envtest cluster mode)',
  STEP_TIMEOUT,
  () => {
    let namespace: string;
    let mgr: Manager | undefined;
    let running: Promise<void> | undefined;
    let sample: DemoApplication;
    /** How long each step of the proof took, printed at the end. */
    const timings: string[] = [];

    // The API server itself, not the manager's cache: what the test sees is what the cluster holds.
    const server = (): Reader => mgr!.apiReader;
    const name = () => sample.metadata?.name ?? '';
    async function step(what: string, run: () => Promise<void>): Promise<void> {
      const started = performance.now();
      await run();
      timings.push(`${what}: ${Math.round(performance.now() - started)} ms`);
    }
    const selector = () => `app.kubernetes.io/instance=${name()}`;

    beforeAll(async () => {
      if (!envtest!.controllers) {
        throw new Error(
          'these tests need envtest cluster mode: set controllers: true in test/envtest.setup.ts',
        );
      }
      const started = performance.now();
      namespace = await createNamespace(envtest!, 'demoapplication-');
      mgr = Manager.create({
        kubeConfig: envtest!.kubeConfig,
        cache: { namespace },
        metrics: { bindAddress: '0' },
        healthProbeBindAddress: '0',
        handleSignals: false,
        logger: createLogger({ level: 'warn' }),
      });
      new DemoApplicationReconciler(mgr.client).setupWithManager(mgr);
      running = mgr.start();
      await mgr.ready();
      timings.push(`namespace and manager started: ${Math.round(performance.now() - started)} ms`);
      sample = loadYaml<DemoApplication>(
        readFileSync(new URL('config/samples/demo_v1_demoapplication.yaml', root), 'utf8'),
      );
      sample.metadata = { ...sample.metadata, namespace };
    }, 60_000);

    afterAll(async () => {
      if (timings.length > 0) console.info(`DemoApplication proof timings: ${timings.join('; ')}`);
      await mgr?.stop();
      await running;
    }, 30_000);

    it('runs the sample: a Deployment with its replicas Ready, reported Available', async () => {
      const replicas = sample.spec.replicas ?? 1;
      await step('sample created -> Deployment ready and reported Available', async () => {
        await mgr!.client.create(DemoApplicationKind, sample);
        await expect
          .poll(async () => (await server().get(DemoApplicationKind, name(), namespace)).status, poll)
          .toMatchObject({ readyReplicas: replicas });
        const demoApplication = await server().get(DemoApplicationKind, name(), namespace);
        expect(findCondition(demoApplication.status?.conditions, AVAILABLE)?.status).toBe('True');
      });
      const deployment = await server().get(DeploymentKind, name(), namespace);
      expect(deployment.status?.readyReplicas).toBe(replicas);
      const pods = await server().list(PodKind, { namespace, labelSelector: selector() });
      expect(pods.filter((pod) => pod.status?.phase === 'Running')).toHaveLength(replicas);
      const service = await server().get(ServiceKind, name(), namespace);
      expect(service.spec?.ports?.map((port) => port.port)).toEqual(
        sample.spec.ports?.map((port) => port.port),
      );
      expect((await server().get(DemoApplicationKind, name(), namespace)).metadata?.finalizers).toContain(
        FINALIZER,
      );
    });

    it('puts back a Deployment scaled by hand', async () => {
      const replicas = sample.spec.replicas ?? 1;
      await step('Deployment scaled by hand -> restored', async () => {
        await mgr!.client.patch(DeploymentKind, name(), namespace, { spec: { replicas: replicas + 3 } });
        await expect
          .poll(async () => (await server().get(DeploymentKind, name(), namespace)).spec?.replicas, poll)
          .toBe(replicas);
      });
    });

    it('follows image and port changes of the spec in the Deployment and the Service', async () => {
      const image = 'registry.example.com/demoapplication:v2';
      await step('image and ports changed -> Deployment and Service follow', async () => {
        await mgr!.client.patch(DemoApplicationKind, name(), namespace, {
          spec: { image, ports: [{ port: 8443, name: 'https' }] },
        });
        await expect
          .poll(async () => {
            const container = (await server().get(DeploymentKind, name(), namespace)).spec?.template.spec
              ?.containers[0];
            const service = await server().get(ServiceKind, name(), namespace);
            return {
              image: container?.image,
              containerPorts: container?.ports?.map((port) => port.containerPort),
              servicePorts: service.spec?.ports?.map((port) => [port.name, port.port]),
            };
          }, poll)
          .toEqual({ image, containerPorts: [8443], servicePorts: [['https', 8443]] });
        // The new pods roll out: Available again, at the new generation.
        await expect
          .poll(async () => {
            const demoApplication = await server().get(DemoApplicationKind, name(), namespace);
            const available = findCondition(demoApplication.status?.conditions, AVAILABLE);
            return (
              available?.status === 'True' &&
              demoApplication.status?.observedGeneration === demoApplication.metadata?.generation
            );
          }, poll)
          .toBe(true);
      });
    });

    it('deletes: the finalizer is done and the Deployment, ReplicaSets, pods and Service are collected', async () => {
      await step('deleted -> finalizer done, everything garbage-collected', async () => {
        await mgr!.client.delete(DemoApplicationKind, name(), namespace);
        const gone = async (read: () => Promise<unknown>) =>
          read().then(
            () => false,
            (err: unknown) => isNotFound(err),
          );
        await expect
          .poll(() => gone(() => server().get(DemoApplicationKind, name(), namespace)), poll)
          .toBe(true);
        await expect
          .poll(
            async () => ({
              deployment: await gone(() => server().get(DeploymentKind, name(), namespace)),
              service: await gone(() => server().get(ServiceKind, name(), namespace)),
              replicaSets: (await server().list(ReplicaSetKind, { namespace, labelSelector: selector() }))
                .length,
              pods: (await server().list(PodKind, { namespace, labelSelector: selector() })).length,
            }),
            poll,
          )
          .toEqual({ deployment: true, service: true, replicaSets: 0, pods: 0 });
      });
    });
  },
);
