import { describe, expect, it } from 'vitest';
import {
  addFinalizer,
  containsFinalizer,
  findCondition,
  removeFinalizer,
  setCondition,
  setControllerReference,
} from '../src/helpers.js';
import type { Condition, KubernetesObject } from '../src/types.js';

const owner: KubernetesObject = {
  apiVersion: 'webapp.example.com/v1',
  kind: 'Guestbook',
  metadata: { name: 'shop', namespace: 'default', uid: 'uid-1' },
};

describe('setControllerReference', () => {
  it('adds a controller owner reference that blocks owner deletion', () => {
    const child: KubernetesObject = { metadata: { name: 'shop-web', namespace: 'default' } };
    setControllerReference(owner, child);
    expect(child.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'webapp.example.com/v1',
        kind: 'Guestbook',
        name: 'shop',
        uid: 'uid-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    setControllerReference(owner, child);
    expect(child.metadata?.ownerReferences).toHaveLength(1);
  });

  it('refuses an object another owner controls, and an owner in another namespace', () => {
    const child: KubernetesObject = {
      metadata: {
        name: 'x',
        namespace: 'default',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Other', name: 'o', uid: 'uid-2', controller: true }],
      },
    };
    expect(() => setControllerReference(owner, child)).toThrow(/already controlled by Other o/);
    expect(() => setControllerReference(owner, { metadata: { name: 'y', namespace: 'prod' } })).toThrow(
      /must share a namespace/,
    );
  });
});

describe('finalizers', () => {
  it('are added and removed once, saying whether the object changed', () => {
    const object: KubernetesObject = { metadata: { name: 'a' } };
    expect(addFinalizer(object, 'example.com/cleanup')).toBe(true);
    expect(addFinalizer(object, 'example.com/cleanup')).toBe(false);
    expect(containsFinalizer(object, 'example.com/cleanup')).toBe(true);
    expect(removeFinalizer(object, 'example.com/cleanup')).toBe(true);
    expect(removeFinalizer(object, 'example.com/cleanup')).toBe(false);
    expect(object.metadata?.finalizers).toEqual([]);
  });
});

describe('setCondition', () => {
  const t0 = new Date('2026-11-23T08:00:00.123Z');
  const t1 = new Date('2026-11-23T09:30:00Z');

  it('adds a new condition with the current time, at second precision', () => {
    const conditions = setCondition(
      [],
      { type: 'Ready', status: 'False', reason: 'Creating', message: 'm' },
      t0,
    );
    expect(conditions).toEqual([
      {
        type: 'Ready',
        status: 'False',
        reason: 'Creating',
        message: 'm',
        lastTransitionTime: '2026-11-23T08:00:00Z',
      },
    ]);
  });

  it('moves lastTransitionTime only when the status changes', () => {
    const first = setCondition([], { type: 'Ready', status: 'False', reason: 'Creating', message: 'a' }, t0);
    const same = setCondition(first, { type: 'Ready', status: 'False', reason: 'Waiting', message: 'b' }, t1);
    expect(findCondition(same, 'Ready')).toMatchObject({
      reason: 'Waiting',
      lastTransitionTime: '2026-11-23T08:00:00Z',
    });
    const changed = setCondition(same, { type: 'Ready', status: 'True', reason: 'Done', message: 'c' }, t1);
    expect(findCondition(changed, 'Ready')?.lastTransitionTime).toBe('2026-11-23T09:30:00Z');
    expect(first[0]?.reason).toBe('Creating'); // the input is not modified
  });

  it('keeps the other conditions and their order', () => {
    const start: Condition[] = [
      { type: 'A', status: 'True', reason: 'r', message: '', lastTransitionTime: 'x' },
      { type: 'B', status: 'True', reason: 'r', message: '', lastTransitionTime: 'y' },
    ];
    const next = setCondition(
      start,
      { type: 'A', status: 'False', reason: 's', message: '', observedGeneration: 3 },
      t1,
    );
    expect(next.map((c) => c.type)).toEqual(['A', 'B']);
    expect(next[0]).toMatchObject({ status: 'False', observedGeneration: 3 });
    expect(next[1]).toBe(start[1]);
  });
});
