import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { relativeWithin } from './within.js';

describe('relativeWithin', () => {
  const dir = path.resolve('/p/project');
  it('gives the path below the directory, and "" for the directory itself', () => {
    expect(relativeWithin(dir, path.join(dir, 'src', 'a.ts'))).toBe(path.join('src', 'a.ts'));
    expect(relativeWithin(dir, dir)).toBe('');
  });
  it('takes a name starting with two dots for a file, not a climb', () => {
    expect(relativeWithin(dir, path.join(dir, '..x.ts'))).toBe('..x.ts');
    expect(relativeWithin(dir, path.join(dir, '..', 'x'))).toBeUndefined();
  });
  it('refuses what lies beside or above it', () => {
    expect(relativeWithin(dir, path.resolve('/p'))).toBeUndefined();
    expect(relativeWithin(dir, path.resolve('/p/project-other/a'))).toBeUndefined();
    expect(relativeWithin(dir, path.resolve('/elsewhere'))).toBeUndefined();
  });
});
