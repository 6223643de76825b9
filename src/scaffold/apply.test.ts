import { mkdtemp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyPlan } from './apply.js';
import { Tree } from './tree.js';

/** Every file below `dir` with its content, to compare a directory before and after. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name);
    result[path.relative(dir, full) + (entry.isDirectory() ? '/' : '')] = entry.isDirectory()
      ? ''
      : await readFile(full, 'utf8');
  }
  return result;
}

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-apply-'));
  await writeFile(path.join(root, 'keep.txt'), 'user content\n');
  await mkdir(path.join(root, 'src'));
  await writeFile(path.join(root, 'src', 'main.ts'), 'original\n');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('Tree and applyPlan', () => {
  it('writes creates and updates, and reports them in path order', async () => {
    const tree = new Tree(root);
    await tree.create('z/new.txt', 'new\n');
    await tree.write('src/main.ts', 'changed\n');
    await tree.create('keep.txt', 'user content\n');
    const plan = await tree.plan();
    expect(plan.entries.map((e) => [e.action, e.path])).toEqual([
      ['unchanged', 'keep.txt'],
      ['update', 'src/main.ts'],
      ['create', 'z/new.txt'],
    ]);
    await applyPlan(plan);
    expect(await snapshot(root)).toEqual({
      'keep.txt': 'user content\n',
      'src/': '',
      'src/main.ts': 'changed\n',
      'z/': '',
      'z/new.txt': 'new\n',
    });
  });

  it('refuses to overwrite a user file without --force, and writes nothing at all', async () => {
    const before = await snapshot(root);
    const tree = new Tree(root);
    await tree.create('a/first.txt', 'a\n');
    await tree.create('keep.txt', 'kubesmith content\n');
    const plan = await tree.plan();
    expect(plan.entries.find((e) => e.path === 'keep.txt')?.action).toBe('conflict');
    await expect(applyPlan(plan)).rejects.toThrow('keep.txt already exists');
    expect(await snapshot(root)).toEqual(before);
  });

  it('overwrites with --force', async () => {
    const tree = new Tree(root, true);
    await tree.create('keep.txt', 'kubesmith content\n');
    await applyPlan(await tree.plan());
    expect(await readFile(path.join(root, 'keep.txt'), 'utf8')).toBe('kubesmith content\n');
  });

  it('leaves the directory exactly as it was when a write fails half way', async () => {
    // A file where the plan needs a directory: the writes before it succeed, then this one fails.
    await writeFile(path.join(root, 'config'), 'a file, not a directory\n');
    const before = await snapshot(root);
    const tree = new Tree(root);
    await tree.create('a/b/c.txt', 'c\n');
    await tree.write('src/main.ts', 'changed\n');
    await tree.create('config/manager/manager.yaml', 'm\n');
    await tree.create('zz.txt', 'z\n');
    await expect(applyPlan(await tree.plan())).rejects.toThrow(
      'cannot write config/manager: a file stands where a directory is needed',
    );
    expect(await snapshot(root)).toEqual(before);
  });
});
