/** The fake nodes of cluster mode: their Node objects, and what makes one usable for pods. */
import type { V1Node, V1Taint } from '@kubernetes/client-node';

/** One fake node, as `startEnvtest({ controllers: true, nodes: [...] })` and `env.addNode()` take it. */
export interface FakeNode {
  /** The Node's name. Default: `node-<n>`, the next free number from 1. */
  name?: string;
  /**
   * Labels added to the defaults (`kubernetes.io/hostname: <name>`, `kubernetes.io/os: linux`,
   * `kubernetes.io/arch: amd64`); a label given here wins. Default: none.
   */
  labels?: Record<string, string>;
  /** Taints of the node (`spec.taints`), which pods must tolerate to be scheduled there. Default: none. */
  taints?: V1Taint[];
  /**
   * Capacity and allocatable resources the scheduler counts (`{ cpu: '4', memory: '8Gi', pods: '110' }`).
   * Default: cpu 1k, memory 1Ti, pods 1M (nothing runs, so nothing is used up but requests).
   */
  capacity?: Record<string, string>;
}

/** The annotation kwok is told to manage nodes by (`--manage-nodes-with-annotation-selector`). */
export const FAKE_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
export const FAKE_NODE_ANNOTATION_VALUE = 'fake';

/** Taints the control plane puts on a node that is not (or no longer) Ready. */
const NOT_READY_TAINTS = new Set(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']);

/** At most this many fake nodes at start: each one is a lease kwok renews and objects the controllers watch. */
const MAX_NODES = 100;

/** The Node object for `node`, named `name`. */
export function nodeObject(name: string, node: FakeNode): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        ...node.labels,
      },
      annotations: {
        [FAKE_NODE_ANNOTATION]: FAKE_NODE_ANNOTATION_VALUE,
        // As kubelet registers: no caching of this node's Secrets and ConfigMaps.
        'node.alpha.kubernetes.io/ttl': '0',
      },
    },
    spec: node.taints ? { taints: node.taints } : {},
    // The apiserver keeps the status of a created Node (kubelet registers that way); kwok keeps capacity.
    ...(node.capacity ? { status: { capacity: node.capacity, allocatable: node.capacity } } : {}),
  };
}

/** Why `node` cannot take pods yet, or undefined once it is Ready and the not-ready taints are gone. */
export function notReadyReason(node: V1Node): string | undefined {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status !== 'True') return `its Ready condition is ${ready?.status ?? 'not set'}`;
  const taint = node.spec?.taints?.find((t) => NOT_READY_TAINTS.has(t.key));
  if (taint) return `it still has the taint ${taint.key}:${taint.effect}`;
  return undefined;
}

/**
 * The names of `nodes` (a count or a list): given names as they are, the others `node-1`, `node-2`...,
 * skipping names already taken. Throws on a bad count, more than MAX_NODES, or a duplicate name.
 */
export function planNodes(nodes: number | readonly FakeNode[]): { name: string; node: FakeNode }[] {
  const list: readonly FakeNode[] =
    typeof nodes === 'number' ? Array.from({ length: checkCount(nodes) }, () => ({})) : nodes;
  if (list.length > MAX_NODES) {
    throw new Error(`envtest: nodes lists ${list.length} nodes, more than the ${MAX_NODES} it supports`);
  }
  const taken = new Set<string>();
  for (const node of list) {
    if (node.name === undefined) continue;
    if (taken.has(node.name))
      throw new Error(`envtest: the node name "${node.name}" is given twice in nodes`);
    taken.add(node.name);
  }
  return list.map((node) => {
    const name = node.name ?? nextNodeName(taken);
    taken.add(name);
    return { name, node };
  });
}

/** `node-<n>` for the smallest n from 1 not in `taken`. */
export function nextNodeName(taken: ReadonlySet<string>): string {
  for (let n = 1; ; n++) if (!taken.has(`node-${n}`)) return `node-${n}`;
}

function checkCount(count: number): number {
  if (!Number.isInteger(count) || count < 0 || count > MAX_NODES) {
    throw new Error(`envtest: nodes must be a whole number from 0 to ${MAX_NODES}, or a list; got ${count}`);
  }
  return count;
}
