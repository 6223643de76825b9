/**
 * Cluster mode on the real binaries (`npx kubesmith envtest --with-controllers`): kube-controller-manager,
 * kube-scheduler and kwok with fake nodes make workloads behave as in a cluster. Skipped with one line when
 * the extra binaries are missing, except under CI=true, where that is a failure.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import {
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  type V1DaemonSet,
  type V1Deployment,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBinaryAssets, startEnvtest, type Envtest } from '../../src/envtest/index.js';
import { compileEnvtest, isGone, isRunning, waitFor } from './helpers.js';

const assets = clusterAssets();

/** The directory with the cluster-mode binaries, or undefined (and one line saying so) to skip. */
function clusterAssets(): string | undefined {
  try {
    return findBinaryAssets(undefined, { controllers: true });
  } catch (error) {
    if (process.env['CI'] === 'true') throw error;
    console.warn(
      'cluster-mode tests skipped: kube-controller-manager, kube-scheduler or kwok not found; ' +
        'run `npx kubesmith envtest --with-controllers` (under CI=true this fails instead)',
    );
    return undefined;
  }
}

/** Polls an async condition every 50 ms; resolves with the time it took. */
async function eventually(
  condition: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Date.now() - started;
}

/** Resident memory of a process, in MiB, from /proc. */
function rssMiB(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb ?? 0) / 1024;
}

function deployment(name: string, replicas: number): V1Deployment {
  const labels = { app: name };
  return {
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
      },
    },
  };
}

const POOL = 'pool.envtest.kubesmith.dev/name';

describe.skipIf(!assets)('cluster mode', () => {
  let env: Envtest;
  let apps: AppsV1Api;
  let core: CoreV1Api;
  let startMs: number;

  beforeAll(async () => {
    const started = Date.now();
    env = await startEnvtest({
      binaryAssetsDirectory: assets!,
      controllers: true,
      nodes: [
        { labels: { [POOL]: 'main' } },
        { labels: { [POOL]: 'main' } },
        { name: 'odd-one', labels: { [POOL]: 'other' } },
      ],
    });
    startMs = Date.now() - started;
    apps = env.kubeConfig.makeApiClient(AppsV1Api);
    core = env.kubeConfig.makeApiClient(CoreV1Api);
  }, 120_000);
  afterAll(async () => {
    await env?.stop();
  }, 60_000);

  it('starts with every fake node Ready and schedulable, within a minute', async () => {
    console.info(`cluster mode started in ${startMs} ms`);
    expect(startMs).toBeLessThan(60_000);
    expect(env.nodes).toEqual(['node-1', 'node-2', 'odd-one']);
    const nodes = (await core.listNode()).items;
    expect(nodes.map((n) => n.metadata?.name).sort()).toEqual(['node-1', 'node-2', 'odd-one']);
    for (const node of nodes) {
      expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
      expect(node.spec?.taints ?? []).toEqual([]);
      expect(node.metadata?.labels?.['kubernetes.io/hostname']).toBe(node.metadata?.name);
    }
    expect(nodes.find((n) => n.metadata?.name === 'odd-one')?.metadata?.labels?.[POOL]).toBe('other');
    for (const pid of [env.pids.controllerManager, env.pids.scheduler, env.pids.kwok]) {
      expect(pid !== undefined && isRunning(pid)).toBe(true);
    }
  });

  it('runs a 2-replica Deployment to 2 ready replicas, its pods Running on the fake nodes', async () => {
    const created = Date.now();
    await apps.createNamespacedDeployment({ namespace: 'default', body: deployment('web', 2) });
    const readyMs = await eventually(
      async () =>
        (await apps.readNamespacedDeployment({ name: 'web', namespace: 'default' })).status?.readyReplicas ===
        2,
      30_000,
      'the Deployment to have 2 ready replicas',
    );
    const pods = (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' })).items;
    expect(pods).toHaveLength(2);
    for (const pod of pods) {
      expect(pod.status?.phase).toBe('Running');
      expect(pod.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
      expect(env.nodes).toContain(pod.spec?.nodeName);
      expect(pod.status?.podIP).toMatch(/^10\.244\./);
      // The ServiceAccount admission plugin is on: pods get the default account's token volume.
      expect(pod.spec?.serviceAccountName).toBe('default');
      expect(pod.spec?.volumes?.some((v) => v.name.startsWith('kube-api-access-'))).toBe(true);
    }
    const pids = [
      env.pids.etcd,
      env.pids.apiServer,
      env.pids.controllerManager!,
      env.pids.scheduler!,
      env.pids.kwok!,
    ];
    const rss = pids.map(rssMiB);
    console.info(
      `2 ready replicas ${readyMs} ms after the create (${Date.now() - created} ms with the create); RSS ` +
        `etcd ${rss[0]!.toFixed(0)}, kube-apiserver ${rss[1]!.toFixed(0)}, kube-controller-manager ` +
        `${rss[2]!.toFixed(0)}, kube-scheduler ${rss[3]!.toFixed(0)}, kwok ${rss[4]!.toFixed(0)}: ` +
        `${rss.reduce((a, b) => a + b, 0).toFixed(0)} MiB in all`,
    );
  }, 60_000);

  it('runs a Job to completion', async () => {
    const batch = env.kubeConfig.makeApiClient(BatchV1Api);
    await batch.createNamespacedJob({
      namespace: 'default',
      body: {
        metadata: { name: 'once' },
        spec: {
          template: {
            spec: { restartPolicy: 'Never', containers: [{ name: 'job', image: 'registry.example/job:1' }] },
          },
        },
      },
    });
    const doneMs = await eventually(
      async () =>
        (await batch.readNamespacedJob({ name: 'once', namespace: 'default' })).status?.succeeded === 1,
      30_000,
      'the Job to succeed',
    );
    const job = await batch.readNamespacedJob({ name: 'once', namespace: 'default' });
    expect(job.status?.conditions?.find((c) => c.type === 'Complete')?.status).toBe('True');
    console.info(`Job complete after ${doneMs} ms`);
  }, 60_000);

  it('garbage-collects the dependents of a deleted owner: the ReplicaSet and pods of a Deployment', async () => {
    await apps.createNamespacedDeployment({ namespace: 'default', body: deployment('doomed', 1) });
    await eventually(
      async () =>
        (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=doomed' })).items.length ===
        1,
      30_000,
      'the pod of the Deployment',
    );
    await apps.deleteNamespacedDeployment({ name: 'doomed', namespace: 'default' });
    const goneMs = await eventually(
      async () =>
        (await apps.listNamespacedReplicaSet({ namespace: 'default', labelSelector: 'app=doomed' })).items
          .length === 0 &&
        (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=doomed' })).items.length ===
          0,
      30_000,
      'the ReplicaSet and the pod to be garbage-collected',
    );
    console.info(`owner deleted: ReplicaSet and pod gone after ${goneMs} ms`);
  }, 60_000);

  it('finishes deleting a namespace that holds a workload', async () => {
    await core.createNamespace({ body: { metadata: { name: 'short-lived' } } });
    await apps.createNamespacedDeployment({ namespace: 'short-lived', body: deployment('tenant', 1) });
    await eventually(
      async () =>
        (await apps.readNamespacedDeployment({ name: 'tenant', namespace: 'short-lived' })).status
          ?.readyReplicas === 1,
      30_000,
      'the Deployment in the namespace to be ready',
    );
    await core.deleteNamespace({ name: 'short-lived' });
    const goneMs = await eventually(
      async () => (await core.listNamespace()).items.every((ns) => ns.metadata?.name !== 'short-lived'),
      60_000,
      'the namespace to be deleted',
    );
    console.info(`namespace deleted after ${goneMs} ms`);
  }, 90_000);

  describe('a DaemonSet selecting the nodes of one pool', () => {
    const daemonSet: V1DaemonSet = {
      metadata: { name: 'agent' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: {
          metadata: { labels: { app: 'agent' } },
          spec: {
            nodeSelector: { [POOL]: 'main' },
            containers: [{ name: 'agent', image: 'registry.example/agent:1' }],
          },
        },
      },
    };
    const nodesOfPods = async (): Promise<string[]> =>
      (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=agent' })).items
        .filter((pod: V1Pod) => pod.status?.phase === 'Running')
        .map((pod) => pod.spec?.nodeName ?? '')
        .sort();

    it('puts one ready pod on each matching node and none on the node labelled away', async () => {
      await apps.createNamespacedDaemonSet({ namespace: 'default', body: daemonSet });
      await eventually(
        async () => {
          const status = (await apps.readNamespacedDaemonSet({ name: 'agent', namespace: 'default' })).status;
          return status?.desiredNumberScheduled === 2 && status.numberReady === 2;
        },
        30_000,
        'the DaemonSet to have 2 ready pods',
      );
      expect(await nodesOfPods()).toEqual(['node-1', 'node-2']);
    }, 60_000);

    it('puts a pod on a node added at run time, and loses it with the node', async () => {
      const added = Date.now();
      const name = await env.addNode({ labels: { [POOL]: 'main' } });
      const nodeReadyMs = Date.now() - added;
      expect(name).toBe('node-3');
      expect(env.nodes).toEqual(['node-1', 'node-2', 'odd-one', 'node-3']);
      const podMs = await eventually(
        async () => (await nodesOfPods()).includes('node-3'),
        30_000,
        "the DaemonSet's pod on node-3",
      );
      console.info(`addNode: node Ready in ${nodeReadyMs} ms, the DaemonSet's pod Running ${podMs} ms later`);
      expect(await nodesOfPods()).toEqual(['node-1', 'node-2', 'node-3']);

      await env.removeNode('node-3');
      expect(env.nodes).toEqual(['node-1', 'node-2', 'odd-one']);
      expect((await core.listNode()).items.map((n) => n.metadata?.name)).not.toContain('node-3');
      // Its pod went with it, at once.
      expect((await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=node-3' })).items).toEqual(
        [],
      );
      expect(await nodesOfPods()).toEqual(['node-1', 'node-2']);
      await expect(env.removeNode('node-3')).rejects.toThrow(/node-3 is not one of its fake nodes/);
    }, 90_000);
  });

  it('stop() leaves no process and no directory', async () => {
    const { pids, directory } = env;
    const started = Date.now();
    await env.stop();
    console.info(`cluster mode stopped in ${Date.now() - started} ms`);
    for (const pid of Object.values(pids)) if (pid !== pids.guard) expect(isGone(pid)).toBe(true);
    expect(existsSync(directory)).toBe(false);
    await waitFor(() => isGone(pids.guard), 5_000, 'the guard to exit');
  }, 60_000);
});

describe.skipIf(!assets)('cluster mode in a test process killed with SIGKILL', () => {
  let compiled: Awaited<ReturnType<typeof compileEnvtest>> | undefined;
  afterAll(async () => {
    await compiled?.remove();
  });

  it('leaves no controller, scheduler, kwok, apiserver or etcd, and no directory', async () => {
    compiled = await compileEnvtest();
    const script = path.join(compiled.dir, 'start-cluster-and-wait.js');
    await writeFile(
      script,
      [
        "import { startEnvtest } from './envtest/index.js';",
        'const env = await startEnvtest({ binaryAssetsDirectory: process.argv[2], controllers: true });',
        'process.stdout.write(JSON.stringify({ pids: env.pids, directory: env.directory }) + "\\n");',
        'setInterval(() => {}, 60_000);',
      ].join('\n'),
    );
    const child = spawn(process.execPath, [script, assets!], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', () => reject(new Error(`the child exited before starting envtest:\n${stderr}`)));
    });
    const started = JSON.parse(line) as Pick<Envtest, 'pids' | 'directory'>;
    const pids = Object.entries(started.pids).filter(([name]) => name !== 'guard');
    expect(pids.map(([name]) => name).sort()).toEqual([
      'apiServer',
      'controllerManager',
      'etcd',
      'kwok',
      'scheduler',
    ]);
    for (const [, pid] of pids) expect(isRunning(pid!)).toBe(true);

    child.kill('SIGKILL');
    await waitFor(() => pids.every(([, pid]) => !isRunning(pid!)), 5_000, 'every process to die');
    await waitFor(() => !existsSync(started.directory), 5_000, `${started.directory} to be removed`);
  }, 120_000);
});
