/**
 * Cluster mode: kube-controller-manager, kube-scheduler and KWOK beside etcd and kube-apiserver, and the
 * fake nodes KWOK keeps Ready (KUBERNETES.md, "A fuller cluster without a container runtime"). Pods get
 * scheduled to the fake nodes and reported Running and Ready, though nothing runs in them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { V1Node } from '@kubernetes/client-node';
import { kwokConfiguration } from './kwok-stages.js';
import {
  FAKE_NODE_ANNOTATION,
  FAKE_NODE_ANNOTATION_VALUE,
  nextNodeName,
  nodeObject,
  notReadyReason,
  type FakeNode,
} from './nodes.js';
import type { ControlPlaneProcess } from './process.js';
import { apiRequest, statusMessage, type ApiAccess } from './rest.js';

/** What cluster mode needs of the control plane it joins. */
export interface ClusterHost {
  /** The temporary directory: state, logs, and the admin `kubeconfig` file. */
  directory: string;
  binaryAssetsDirectory: string;
  access(): ApiAccess;
  /** Starts a program from binaryAssetsDirectory, stopped and cleaned up with the control plane. */
  spawn(name: string, args: string[], env?: NodeJS.ProcessEnv): ControlPlaneProcess;
}

export interface ClusterOptions {
  controllerManagerArgs: string[];
  schedulerArgs: string[];
  kwokArgs: string[];
}

export class Cluster {
  private readonly processes: ControlPlaneProcess[] = [];
  private readonly names = new Set<string>();

  constructor(
    private readonly host: ClusterHost,
    private readonly options: ClusterOptions,
  ) {}

  /** Starts the three programs; returns at once (ready() waits). */
  start(): void {
    const dir = this.host.directory;
    const kubeconfig = path.join(dir, 'kubeconfig');
    // All three use the admin kubeconfig: a test cluster needs no per-component identities.
    this.processes.push(
      this.host.spawn('kube-controller-manager', [
        `--kubeconfig=${kubeconfig}`,
        '--controllers=*',
        '--leader-elect=false',
        // No HTTPS endpoint: the default port (10257) would collide between envtests running side by side.
        '--secure-port=0',
        // Signs the tokens of service accounts with the key kube-apiserver verifies them with.
        `--service-account-private-key-file=${path.join(dir, 'sa.key')}`,
        // Published in each namespace's kube-root-ca.crt ConfigMap.
        `--root-ca-file=${path.join(dir, 'certs', 'apiserver.crt')}`,
        // Otherwise it creates /usr/libexec/kubernetes/kubelet-plugins/volume/exec on the host.
        `--flex-volume-plugin-dir=${path.join(dir, 'flexvolume')}`,
        ...this.options.controllerManagerArgs,
      ]),
    );
    this.processes.push(
      this.host.spawn('kube-scheduler', [
        `--kubeconfig=${kubeconfig}`,
        '--leader-elect=false',
        '--secure-port=0',
        ...this.options.schedulerArgs,
      ]),
    );
    const kwokConfig = path.join(dir, 'kwok.yaml');
    writeFileSync(kwokConfig, kwokConfiguration());
    // kwok also loads ~/.kwok/kwok.yaml when it exists: a HOME of its own keeps the user's out.
    const kwokHome = path.join(dir, 'kwok-home');
    mkdirSync(kwokHome);
    this.processes.push(
      this.host.spawn(
        'kwok',
        [
          `--kubeconfig=${kubeconfig}`,
          `--config=${kwokConfig}`,
          '--manage-all-nodes=false',
          `--manage-nodes-with-annotation-selector=${FAKE_NODE_ANNOTATION}=${FAKE_NODE_ANNOTATION_VALUE}`,
          '--node-ip=127.0.0.1',
          // Pod IPs: apart from the Service range (10.0.0.0/24).
          '--cidr=10.244.0.0/16',
          // Without node leases the node lifecycle controller marks a node Unknown after its grace period,
          // and every pod on it loses its Ready condition for good.
          '--node-lease-duration-seconds=40',
          ...this.options.kwokArgs,
        ],
        { ...process.env, HOME: kwokHome },
      ),
    );
  }

  get pids(): { controllerManager: number; scheduler: number; kwok: number } {
    const [controllerManager, scheduler, kwok] = this.processes.map((p) => p.pid ?? 0);
    return { controllerManager: controllerManager ?? 0, scheduler: scheduler ?? 0, kwok: kwok ?? 0 };
  }

  /** The names of the fake nodes, in the order they were added. */
  get nodeNames(): string[] {
    return [...this.names];
  }

  /** Creates the Node object of a fake node (kwok then makes it Ready); returns its name. */
  async createNode(node: FakeNode = {}): Promise<string> {
    const name = node.name ?? nextNodeName(this.names);
    const response = await apiRequest(this.host.access(), 'POST', '/api/v1/nodes', nodeObject(name, node));
    if (response.status !== 201) {
      throw new Error(`envtest: creating the fake node ${name} failed: ${statusMessage(response)}`);
    }
    this.names.add(name);
    return name;
  }

  /**
   * Deletes a fake node's Node object, waits until it is gone, then deletes the pods bound to it at once
   * (grace period 0: no kubelet is left to finish a graceful deletion). In a cluster the pod garbage
   * collector deletes them, but only 40-75 s later.
   */
  async deleteNode(name: string, deadline: number): Promise<void> {
    if (!this.names.has(name)) {
      throw new Error(
        `envtest: ${name} is not one of its fake nodes (${this.nodeNames.join(', ') || 'none'})`,
      );
    }
    const access = this.host.access();
    const nodePath = `/api/v1/nodes/${encodeURIComponent(name)}`;
    const response = await apiRequest(access, 'DELETE', nodePath);
    if (response.status !== 200 && response.status !== 404) {
      throw new Error(`envtest: deleting the fake node ${name} failed: ${statusMessage(response)}`);
    }
    this.names.delete(name);
    await this.poll(deadline, `the node ${name} to be deleted`, async () => {
      const { status } = await apiRequest(access, 'GET', nodePath);
      return status === 404 ? undefined : `it still exists (HTTP ${status})`;
    });
    // The node is gone first, so that no controller puts a new pod on it meanwhile.
    const selector = encodeURIComponent(`spec.nodeName=${name}`);
    let next = '';
    do {
      const list = await apiRequest(
        access,
        'GET',
        `/api/v1/pods?fieldSelector=${selector}&limit=500${next ? `&continue=${encodeURIComponent(next)}` : ''}`,
      );
      if (list.status !== 200) {
        throw new Error(`envtest: listing the pods of node ${name} failed: ${statusMessage(list)}`);
      }
      const body = list.body as {
        items?: { metadata?: { name?: string; namespace?: string } }[];
        metadata?: { continue?: string };
      };
      for (const pod of body.items ?? []) {
        const { name: podName = '', namespace = '' } = pod.metadata ?? {};
        const deleted = await apiRequest(
          access,
          'DELETE',
          `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(podName)}`,
          { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 },
        );
        if (deleted.status >= 300 && deleted.status !== 404) {
          throw new Error(
            `envtest: deleting pod ${namespace}/${podName} of node ${name} failed: ${statusMessage(deleted)}`,
          );
        }
      }
      next = body.metadata?.continue ?? '';
    } while (next);
  }

  /**
   * Waits until each node in `names` is Ready without the not-ready taint, and the `default` ServiceAccount
   * of the `default` namespace exists (until then the ServiceAccount admission plugin refuses pods there).
   */
  async ready(names: readonly string[], deadline: number): Promise<void> {
    for (const name of names) {
      await this.poll(deadline, `the fake node ${name} to be Ready`, async () => {
        const response = await apiRequest(
          this.host.access(),
          'GET',
          `/api/v1/nodes/${encodeURIComponent(name)}`,
        );
        if (response.status !== 200) return statusMessage(response);
        return notReadyReason(response.body as V1Node);
      });
    }
    await this.poll(deadline, 'the default ServiceAccount', async () => {
      const response = await apiRequest(
        this.host.access(),
        'GET',
        '/api/v1/namespaces/default/serviceaccounts/default',
      );
      return response.status === 200 ? undefined : statusMessage(response);
    });
  }

  /**
   * Calls `check` until it returns undefined (done) or a reason to wait, with a capped jittered backoff;
   * fails at `deadline` with the last reason, or at once with the log of a program that exited.
   */
  private async poll(
    deadline: number,
    what: string,
    check: () => Promise<string | undefined>,
  ): Promise<void> {
    let delay = 50;
    let last = 'not checked yet';
    for (;;) {
      const exited = this.processes.find((p) => p.exitStatus !== undefined);
      if (exited) {
        throw new Error(
          `envtest: ${exited.name} exited (${exited.exitStatus}) while waiting for ${what}; last lines of ` +
            `${exited.logFile}:\n${exited.logTail()}`,
        );
      }
      try {
        const reason = await check();
        if (reason === undefined) return;
        last = reason;
      } catch (error) {
        last = (error as Error).message;
      }
      if (Date.now() > deadline) {
        // startEnvtest removes the directory after a failed start: the logs go into the message.
        const logs = this.processes.map((p) => `last lines of ${p.name}'s log:\n${p.logTail(10)}`);
        throw new Error(`envtest: timed out waiting for ${what} (${last}); ${logs.join('\n')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, delay * (0.75 + Math.random() / 2)));
      delay = Math.min(delay * 2, 500);
    }
  }
}
