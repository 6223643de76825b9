import { describe, expect, it } from 'vitest';
import { nodeObject, notReadyReason, planNodes } from '../../src/envtest/internal/nodes.js';

describe('planNodes', () => {
  it('names counted nodes node-1, node-2 ... and keeps given names, skipping taken ones', () => {
    expect(planNodes(2).map((n) => n.name)).toEqual(['node-1', 'node-2']);
    expect(planNodes(0)).toEqual([]);
    expect(planNodes([{}, { name: 'node-1' }, { labels: { a: 'b' } }]).map((n) => n.name)).toEqual([
      'node-2',
      'node-1',
      'node-3',
    ]);
  });

  it('refuses negative, fractional and too large counts, long lists and duplicate names', () => {
    expect(() => planNodes(-1)).toThrow(/whole number from 0 to 100/);
    expect(() => planNodes(101)).toThrow(/whole number from 0 to 100/);
    expect(() => planNodes(Array.from({ length: 101 }, () => ({})))).toThrow(/101 nodes, more than the 100/);
    expect(() => planNodes([{ name: 'x' }, { name: 'x' }])).toThrow(/"x" is given twice/);
  });
});

describe('nodeObject', () => {
  it('carries the annotation kwok manages, default labels that given ones override, taints and capacity', () => {
    const node = nodeObject('gpu-1', {
      labels: { 'kubernetes.io/arch': 'arm64', pool: 'gpu' },
      taints: [{ key: 'gpu', effect: 'NoSchedule' }],
      capacity: { cpu: '4', memory: '8Gi', pods: '10' },
    });
    expect(node.metadata?.annotations).toMatchObject({ 'kwok.x-k8s.io/node': 'fake' });
    expect(node.metadata?.labels).toEqual({
      'kubernetes.io/hostname': 'gpu-1',
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'arm64',
      pool: 'gpu',
    });
    expect(node.spec?.taints).toEqual([{ key: 'gpu', effect: 'NoSchedule' }]);
    expect(node.status).toEqual({
      capacity: { cpu: '4', memory: '8Gi', pods: '10' },
      allocatable: { cpu: '4', memory: '8Gi', pods: '10' },
    });
    expect(nodeObject('n', {}).status).toBeUndefined();
  });
});

describe('notReadyReason', () => {
  const ready = { status: { conditions: [{ type: 'Ready', status: 'True' }] } };
  it('waits for the Ready condition, then for the not-ready taint to be lifted', () => {
    expect(notReadyReason({})).toBe('its Ready condition is not set');
    expect(notReadyReason({ status: { conditions: [{ type: 'Ready', status: 'False' }] } })).toBe(
      'its Ready condition is False',
    );
    expect(
      notReadyReason({
        ...ready,
        spec: { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] },
      }),
    ).toBe('it still has the taint node.kubernetes.io/not-ready:NoSchedule');
    // A user's own taint is not a reason to wait.
    expect(notReadyReason({ ...ready, spec: { taints: [{ key: 'gpu', effect: 'NoSchedule' }] } })).toBe(
      undefined,
    );
  });
});
