import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Tree } from './tree.js';

let base: string;
let root: string;
beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-tree-'));
  root = path.join(base, 'project');
  await mkdir(root);
  await mkdir(path.join(base, 'outside'));
  await writeFile(path.join(base, 'outside/victim.txt'), 'not yours\n');
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('Tree', () => {
  it('never compares with a file outside the project: a .. path or a link out is refused', async () => {
    await symlink(path.join(base, 'outside'), path.join(root, 'linked'));
    const tree = new Tree(root);
    for (const file of ['../outside/victim.txt', 'linked/victim.txt']) {
      await expect(tree.read(file)).rejects.toThrow(`refusing "${file}": not a file inside the project`);
      await expect(tree.create(file, 'mine\n', 'overwrite')).rejects.toThrow('not a file inside the project');
      await expect(tree.createBinary(file, new Uint8Array([1]))).rejects.toThrow(
        'not a file inside the project',
      );
    }
  });
});
