import { describe, expect, it } from 'vitest';
import { supervisedInformer, type ListWatchLike, type ObjectHandler } from '../src/cache.js';
import { ManualInformer } from '../src/testing/informer.js';
import { createLogger } from '../src/logger.js';
import {
  and,
  annotationChangedPredicate,
  generationChangedPredicate,
  labelChangedPredicate,
  or,
  passes,
} from '../src/predicate.js';
import type { KubernetesObject } from '../src/types.js';

function object(generation: number, labels: Record<string, string> = {}, annotations = {}): KubernetesObject {
  return { metadata: { name: 'a', namespace: 'ns', generation, labels, annotations } };
}

describe('predicates', () => {
  it('generationChanged passes updates that change the generation, and every create and delete', () => {
    const p = [generationChangedPredicate];
    expect(passes(p, 'update', object(2), object(1))).toBe(true);
    expect(passes(p, 'update', object(1, { a: 'b' }), object(1))).toBe(false);
    expect(passes(p, 'update', object(1), undefined)).toBe(true);
    expect(passes(p, 'create', object(1))).toBe(true);
    expect(passes(p, 'delete', object(1))).toBe(true);
  });

  it('labelChanged and annotationChanged compare the maps, not their order', () => {
    expect(
      passes([labelChangedPredicate], 'update', object(1, { a: '1', b: '2' }), object(1, { b: '2', a: '1' })),
    ).toBe(false);
    expect(passes([labelChangedPredicate], 'update', object(1, { a: '1' }), object(1, { a: '2' }))).toBe(
      true,
    );
    expect(passes([labelChangedPredicate], 'update', object(1, { a: '1' }), object(1, {}))).toBe(true);
    expect(passes([annotationChangedPredicate], 'update', object(1, {}, { x: 'y' }), object(1))).toBe(true);
  });

  it('or and and combine predicates', () => {
    const either = or(generationChangedPredicate, labelChangedPredicate);
    const both = and(generationChangedPredicate, labelChangedPredicate);
    const labelsOnly = [object(1, { a: '1' }), object(1)] as const;
    expect(passes([either], 'update', ...labelsOnly)).toBe(true);
    expect(passes([both], 'update', ...labelsOnly)).toBe(false);
    expect(passes([both], 'update', object(2, { a: '1' }), object(1))).toBe(true);
  });
});

describe('informers give update handlers the old object', () => {
  it('ManualInformer', async () => {
    const informer = new ManualInformer([object(1)]);
    const seen: [number | undefined, number | undefined][] = [];
    informer.on('update', (o, old) => seen.push([old?.metadata?.generation, o.metadata?.generation]));
    await informer.start();
    informer.apply(object(2));
    expect(seen).toEqual([[1, 2]]);
  });

  it('supervisedInformer passes on the replaced object its Reflector reports', async () => {
    const handlers: Record<string, ObjectHandler[]> = { add: [], update: [], delete: [] };
    const listWatch: ListWatchLike = {
      on: (event: string, handler: ObjectHandler) => handlers[event]?.push(handler),
      start: async () => {},
      stop: async () => {},
      get: () => undefined,
      list: () => [],
    } as ListWatchLike;
    const informer = supervisedInformer(listWatch, () => true, createLogger({ write: () => {} }));
    const seen: [number | undefined, number | undefined][] = [];
    informer.on('update', (o, old) => seen.push([old?.metadata?.generation, o.metadata?.generation]));
    handlers['update']!.forEach((h) => h(object(2), object(1)));
    expect(seen).toEqual([[1, 2]]);
  });
});
