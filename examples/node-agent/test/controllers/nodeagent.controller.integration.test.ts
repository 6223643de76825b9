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
 * The NodeAgent controller on a cluster whose controllers run: envtest's cluster mode starts etcd,
 * kube-apiserver, kube-controller-manager, kube-scheduler and three fake nodes (KWOK), installs the CRDs
 * from config/crd/bases, and the manager runs in this process. The DaemonSet controller puts a pod on
 * every matching node, KWOK reports it Running and Ready (no container runs), and owner references are
 * garbage-collected. `npm test` provides the binaries (`kubesmith envtest --with-controllers`); without
 * them these tests are skipped with one line, and in CI (`CI=true`) they fail.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadYaml, type V1Pod } from '@kubernetes/client-node';
import {
  createLogger,
  findCondition,
  isNotFound,
  Manager,
  resourceKind,
  type Reader,
} from '@kubesmith/runtime';
import { binaryAssetsOrSkip, startEnvtest, type Envtest } from '@kubesmith/runtime/envtest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeAgentKind, type NodeAgent } from '../../src/api/agents/v1/nodeagent.types.js';
import { AVAILABLE, DaemonSetKind, NodeAgentReconciler } from '../../src/controllers/nodeagent.controller.js';

const root = new URL('../../', import.meta.url);
const namespace = 'default';
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
/** The sample's node selector, and a second one only node-3 matches. */
const AGENT = { 'example.com/agent': 'enabled' };
const EDGE = { 'example.com/tier': 'edge' };

// Skipped, with one line, when the binaries are missing; under CI=true that fails the run instead.
const binaries = binaryAssetsOrSkip({ controllers: true });

describe.skipIf(binaries === undefined)(
  'NodeAgentReconciler on a cluster (envtest cluster mode)',
  STEP_TIMEOUT,
  () => {
    let env: Envtest | undefined;
    let mgr: Manager | undefined;
    let running: Promise<void> | undefined;
    let sample: NodeAgent;
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
    /** The nodes running a Running, Ready agent pod, sorted. */
    async function coveredNodes(): Promise<string[]> {
      const pods = await server().list(PodKind, {
        namespace,
        labelSelector: `app.kubernetes.io/instance=${name()}`,
      });
      return pods
        .filter(
          (pod) =>
            pod.status?.phase === 'Running' &&
            pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') &&
            !pod.metadata?.deletionTimestamp,
        )
        .map((pod) => pod.spec?.nodeName ?? '')
        .sort();
    }
    /** The NodeAgent's node counts and Available condition, as its status reports them. */
    async function reported(): Promise<{ desired?: number; ready?: number; available?: string }> {
      const status = (await server().get(NodeAgentKind, name(), namespace)).status;
      return {
        desired: status?.desiredNodes,
        ready: status?.readyNodes,
        available: findCondition(status?.conditions, AVAILABLE)?.status,
      };
    }

    beforeAll(async () => {
      const started = performance.now();
      env = await startEnvtest({
        crdDirectoryPaths: [fileURLToPath(new URL('config/crd/bases', root))],
        controllers: true,
        nodes: [
          { name: 'node-1', labels: AGENT },
          { name: 'node-2', labels: AGENT },
          // Labelled away from the sample's selector.
          { name: 'node-3', labels: { 'example.com/agent': 'disabled', ...EDGE } },
        ],
        ...(binaries ? { binaryAssetsDirectory: binaries } : {}),
      });
      mgr = Manager.create({
        kubeConfig: env.kubeConfig,
        metrics: { bindAddress: '0' },
        healthProbeBindAddress: '0',
        handleSignals: false,
        logger: createLogger({ level: 'warn' }),
      });
      new NodeAgentReconciler(mgr.client).setupWithManager(mgr);
      running = mgr.start();
      await mgr.ready();
      timings.push(`cluster (3 nodes) and manager started: ${Math.round(performance.now() - started)} ms`);
      sample = loadYaml<NodeAgent>(
        readFileSync(new URL('config/samples/agents_v1_nodeagent.yaml', root), 'utf8'),
      );
      sample.metadata = { ...sample.metadata, namespace };
    }, 120_000);

    afterAll(async () => {
      if (timings.length > 0) console.info(`NodeAgent proof timings: ${timings.join('; ')}`);
      await mgr?.stop();
      await running;
      await env?.stop();
    }, 30_000);

    it('runs an agent on the 2 of 3 nodes that match, and reports them Available', async () => {
      await step('sample created -> 2 of 3 nodes covered, reported Available', async () => {
        await mgr!.client.create(NodeAgentKind, sample);
        await expect.poll(coveredNodes, poll).toEqual(['node-1', 'node-2']);
        await expect.poll(reported, poll).toEqual({ desired: 2, ready: 2, available: 'True' });
      });
    });

    it('covers a matching node that joins, and counts down when one leaves', async () => {
      await step('node-4 joins -> covered (3 nodes)', async () => {
        await env!.addNode({ name: 'node-4', labels: AGENT });
        await expect.poll(coveredNodes, poll).toEqual(['node-1', 'node-2', 'node-4']);
        await expect.poll(reported, poll).toEqual({ desired: 3, ready: 3, available: 'True' });
      });
      await step('node-2 leaves -> 2 nodes', async () => {
        await env!.removeNode('node-2');
        await expect.poll(coveredNodes, poll).toEqual(['node-1', 'node-4']);
        await expect.poll(reported, poll).toEqual({ desired: 2, ready: 2, available: 'True' });
      });
    });

    it('puts back a DaemonSet changed by hand', async () => {
      await step('DaemonSet image changed by hand -> restored', async () => {
        const daemonSet = await server().get(DaemonSetKind, name(), namespace);
        const container = daemonSet.spec!.template.spec!.containers[0]!;
        const patched = await mgr!.client.patch(
          DaemonSetKind,
          name(),
          namespace,
          {
            spec: { template: { spec: { containers: [{ name: container.name, image: 'busybox:1.36' }] } } },
          },
          'strategic',
        );
        expect(patched.spec?.template.spec?.containers[0]?.image).toBe('busybox:1.36');
        await expect
          .poll(
            async () =>
              (await server().get(DaemonSetKind, name(), namespace)).spec?.template.spec?.containers[0]
                ?.image,
            poll,
          )
          .toBe(sample.spec.image);
      });
    });

    it('follows a new node selector: the agents move to the nodes it picks', async () => {
      await step('selector changed -> agents move to node-3', async () => {
        // A JSON merge patch: null removes the old key.
        await mgr!.client.patch(NodeAgentKind, name(), namespace, {
          spec: { nodeSelector: { 'example.com/agent': null, ...EDGE } },
        });
        await expect.poll(coveredNodes, poll).toEqual(['node-3']);
        await expect.poll(reported, poll).toEqual({ desired: 1, ready: 1, available: 'True' });
      });
    });

    it('deletes: the DaemonSet and its pods are garbage-collected', async () => {
      await step('deleted -> DaemonSet and pods garbage-collected', async () => {
        await mgr!.client.delete(NodeAgentKind, name(), namespace);
        const gone = async (read: () => Promise<unknown>) =>
          read().then(
            () => false,
            (err: unknown) => isNotFound(err),
          );
        await expect
          .poll(
            async () => ({
              daemonSet: await gone(() => server().get(DaemonSetKind, name(), namespace)),
              pods: (
                await server().list(PodKind, {
                  namespace,
                  labelSelector: `app.kubernetes.io/instance=${name()}`,
                })
              ).length,
            }),
            poll,
          )
          .toEqual({ daemonSet: true, pods: 0 });
      });
    });
  },
);
