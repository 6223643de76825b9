import { describe, expect, it } from 'vitest';
import { deepCopy } from '../src/internal/deepcopy.js';

describe('deepCopy', () => {
  it('copies objects, arrays and Dates all the way down, sharing nothing with the original', () => {
    const original = {
      metadata: { name: 'g', labels: { app: 'g' }, created: new Date(0), finalizers: ['a', 'b'] },
      spec: {
        ports: [{ port: 80, names: ['http'] }],
        replicas: 3,
        paused: false,
        note: null,
        gone: undefined,
      },
    };
    const copy = deepCopy(original);
    expect(copy).toEqual(original);
    expect(copy.metadata.created).toBeInstanceOf(Date);
    copy.metadata.labels.app = 'changed';
    copy.metadata.finalizers.push('c');
    copy.spec.ports[0]!.names.push('https');
    copy.metadata.created.setTime(1);
    expect(original.metadata.labels.app).toBe('g');
    expect(original.metadata.finalizers).toEqual(['a', 'b']);
    expect(original.spec.ports[0]!.names).toEqual(['http']);
    expect(original.metadata.created.getTime()).toBe(0);
    expect(deepCopy('text')).toBe('text');
    expect(deepCopy(null)).toBeNull();
  });

  it('copies own properties only', () => {
    const inherited = Object.create({ injected: true }) as Record<string, unknown>;
    inherited['own'] = 1;
    expect(Object.keys(deepCopy(inherited))).toEqual(['own']);
  });
});
