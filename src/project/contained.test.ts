import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubesmithError } from '../errors.js';
import { containedPath } from './contained.js';

/** A temporary directory holding `project/` (the root) and `outside/`, beside it. */
let base: string;
let root: string;
let outside: string;
beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-contained-'));
  root = path.join(base, 'project');
  outside = path.join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

function refusal(relative: string): string {
  try {
    containedPath(root, relative);
  } catch (error) {
    expect(error).toBeInstanceOf(KubesmithError);
    return (error as KubesmithError).message;
  }
  throw new Error(`${relative} was not refused`);
}

describe('containedPath', () => {
  it('gives the path below the root of a file that exists or not', async () => {
    await mkdir(path.join(root, 'config'));
    expect(containedPath(root, 'config/crd/bases/a.yaml')).toBe(path.join(root, 'config/crd/bases/a.yaml'));
    expect(containedPath(root, 'PROJECT')).toBe(path.join(root, 'PROJECT'));
  });

  it.each([
    ['../victim.txt', 'a .. segment'],
    ['dist/chart/../../../victim.txt', 'a .. segment'],
    ['config/crd/bases/webapp.example.com_a/../../../../../outside/victim.yaml', 'a .. segment'],
    ['/etc/passwd', 'an absolute path'],
    ['C:/Windows/win.ini', 'an absolute path'],
    ['config\\..\\..\\victim', 'a backslash'],
    ['config/a\0.yaml', 'a NUL character'],
    ['', 'an empty path'],
  ])('refuses %j: %s', (relative, reason) => {
    expect(refusal(relative)).toBe(
      `refusing ${JSON.stringify(relative)}: not a file inside the project (${reason})`,
    );
  });

  it('refuses a path through a symlinked directory that points outside the root', async () => {
    await mkdir(path.join(root, 'config/crd'), { recursive: true });
    await symlink(outside, path.join(root, 'config/crd/bases'));
    expect(refusal('config/crd/bases/victim.yaml')).toBe(
      `refusing "config/crd/bases/victim.yaml": not a file inside the project (a symbolic link on the way leads to ${path.join(outside, 'victim.yaml')})`,
    );
    // Also where the link leads to a directory that does not exist yet.
    await symlink(path.join(outside, 'later'), path.join(root, 'dist'));
    expect(refusal('dist/chart/values.yaml')).toContain('a symbolic link on the way leads to');
  });

  it('refuses a file that is itself a symlink pointing outside, even a dangling one', async () => {
    await writeFile(path.join(outside, 'secret'), 'secret\n');
    await symlink(path.join(outside, 'secret'), path.join(root, 'role.yaml'));
    await symlink(path.join(outside, 'missing'), path.join(root, 'dangling.yaml'));
    expect(refusal('role.yaml')).toContain('a symbolic link on the way leads to');
    expect(refusal('dangling.yaml')).toContain('a symbolic link on the way leads to');
  });

  it('follows .. after a link from where the link leads, as the kernel does', async () => {
    await mkdir(path.join(outside, 'a/b'), { recursive: true });
    await symlink(path.join(outside, 'a/b'), path.join(root, 'sub'));
    // As a string, sub/../file is project/file; on disk it is outside/a/file.
    await symlink('sub/../file', path.join(root, 'evil.yaml'));
    await symlink('sub/../b', path.join(root, 'evil-dir'));
    expect(refusal('evil.yaml')).toBe(
      `refusing "evil.yaml": not a file inside the project (a symbolic link on the way leads to ${path.join(outside, 'a/file')})`,
    );
    expect(refusal('evil-dir/x.yaml')).toContain(path.join(outside, 'a/b/x.yaml'));
  });

  it('refuses a loop of links', async () => {
    await symlink(path.join(root, 'b'), path.join(root, 'a'));
    await symlink(path.join(root, 'a'), path.join(root, 'b'));
    expect(refusal('a/file.yaml')).toContain('symbolic links on the way loop');
  });

  it('takes links that stay inside the project, and a root reached through a link', async () => {
    await mkdir(path.join(root, 'real'));
    await symlink('real', path.join(root, 'linked'));
    expect(containedPath(root, 'linked/file.yaml')).toBe(path.join(root, 'linked/file.yaml'));
    const viaLink = path.join(base, 'link-to-project');
    await symlink(root, viaLink);
    expect(containedPath(viaLink, 'linked/file.yaml')).toBe(path.join(viaLink, 'linked/file.yaml'));
  });
});
