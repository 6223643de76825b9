import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubesmithError } from '../errors.js';
import { StagedWrite, writeAtomically } from './write.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-write-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Every file below `dir`, relative to it, sorted. */
async function filesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

describe('StagedWrite', () => {
  it('puts nothing in place before commit(), and every file at commit()', async () => {
    await mkdir(path.join(root, 'config/rbac'), { recursive: true });
    await writeFile(path.join(root, 'config/rbac/role.yaml'), 'old role\n');
    const write = new StagedWrite(root);
    write.stage({ path: 'config/crd/bases/a.yaml', content: 'a\n', previous: undefined });
    write.stage({ path: 'config/rbac/role.yaml', content: 'new role\n', previous: 'old role\n' });
    await new Promise(setImmediate);
    expect(existsSync(path.join(root, 'config/crd/bases/a.yaml'))).toBe(false);
    expect(await readFile(path.join(root, 'config/rbac/role.yaml'), 'utf8')).toBe('old role\n');
    await write.commit();
    expect(await filesBelow(root)).toEqual(['config/crd/bases/a.yaml', 'config/rbac/role.yaml']);
    expect(await readFile(path.join(root, 'config/rbac/role.yaml'), 'utf8')).toBe('new role\n');
  });

  it('discard() leaves the directory as it was: no file, no temporary, no directory it made', async () => {
    await writeFile(path.join(root, 'PROJECT'), 'domain: example.com\n');
    const write = new StagedWrite(root);
    write.stage({ path: 'config/crd/bases/a.yaml', content: 'a\n', previous: undefined });
    write.stage({ path: 'PROJECT', content: 'changed\n', previous: 'domain: example.com\n' });
    write.stage({ path: 'config/crd/bases/b.yaml', content: 'b\n', previous: undefined });
    await write.discard();
    expect(await readdir(root)).toEqual(['PROJECT']);
    expect(await readFile(path.join(root, 'PROJECT'), 'utf8')).toBe('domain: example.com\n');
  });

  it('a file that cannot be written fails commit() with its name, and nothing changes', async () => {
    await writeFile(path.join(root, 'PROJECT'), 'domain: example.com\n');
    // A file stands where the directory config/rbac must go.
    await mkdir(path.join(root, 'config'));
    await writeFile(path.join(root, 'config/rbac'), 'not a directory\n');
    const write = new StagedWrite(root);
    write.stage({ path: 'config/crd/bases/a.yaml', content: 'a\n', previous: undefined });
    write.stage({ path: 'PROJECT', content: 'changed\n', previous: 'domain: example.com\n' });
    write.stage({ path: 'config/rbac/role.yaml', content: 'role\n', previous: undefined });
    write.stage({ path: 'config/crd/bases/b.yaml', content: 'b\n', previous: undefined });
    const failure = await write.commit().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(KubesmithError);
    expect((failure as Error).message).toBe(
      'cannot write config/rbac: a file stands where a directory is needed',
    );
    expect(await filesBelow(root)).toEqual(['PROJECT', 'config/rbac']);
    expect(await readFile(path.join(root, 'PROJECT'), 'utf8')).toBe('domain: example.com\n');
  });

  it('Ctrl-C while files are staged removes them and the directories it made', async () => {
    const module = path.resolve(import.meta.dirname, '../../dist/project/write.js');
    expect(existsSync(module), `${module} is missing: run \`npm run build\` first`).toBe(true);
    const script = `
      import { StagedWrite } from ${JSON.stringify(module)};
      const write = new StagedWrite(${JSON.stringify(root)});
      for (let i = 0; i < 20; i++) write.stage({ path: 'config/crd/bases/' + i + '.yaml', content: 'x', previous: undefined });
      setTimeout(() => console.log('staged'), 100);
      setTimeout(() => {}, 30_000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
      child.on('exit', (code, signal) => resolve(signal ?? code)),
    );
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    expect((await filesBelow(root)).length).toBe(20);
    child.kill('SIGINT');
    expect(await exited).toBe('SIGINT');
    expect(await readdir(root)).toEqual([]);
  });
});

describe('writeAtomically', () => {
  it('removes files with the same write, and puts them back when another file fails', async () => {
    await mkdir(path.join(root, 'chart/templates'), { recursive: true });
    await writeFile(path.join(root, 'chart/templates/old.yaml'), 'old\n');
    await writeFile(path.join(root, 'chart/values.yaml'), 'values\n');
    const remove = { path: 'chart/templates/old.yaml', content: '', previous: 'old\n', remove: true };
    // A file stands where the directory of the second write must go: nothing may change.
    await writeFile(path.join(root, 'blocked'), 'a file\n');
    expect(() =>
      writeAtomically(root, [
        remove,
        { path: 'chart/values.yaml', content: 'new values\n', previous: 'values\n' },
        { path: 'blocked/new.yaml', content: 'new\n', previous: undefined },
      ]),
    ).toThrow('cannot write blocked: a file stands where a directory is needed');
    expect(await filesBelow(root)).toEqual(['blocked', 'chart/templates/old.yaml', 'chart/values.yaml']);
    expect(await readFile(path.join(root, 'chart/values.yaml'), 'utf8')).toBe('values\n');

    writeAtomically(root, [
      remove,
      { path: 'chart/values.yaml', content: 'new values\n', previous: 'values\n' },
    ]);
    expect(await filesBelow(root)).toEqual(['blocked', 'chart/values.yaml']);
    expect(await readFile(path.join(root, 'chart/values.yaml'), 'utf8')).toBe('new values\n');
  });

  it('puts a removed file back when a later rename fails', async () => {
    await mkdir(path.join(root, 'chart/templates'), { recursive: true });
    await writeFile(path.join(root, 'chart/templates/old.yaml'), 'old\n');
    // A directory stands where a file goes: its rename, after the removal's, fails.
    await mkdir(path.join(root, 'chart/values.yaml'));
    expect(() =>
      writeAtomically(root, [
        { path: 'chart/templates/old.yaml', content: '', previous: 'old\n', remove: true },
        { path: 'chart/values.yaml', content: 'values\n', previous: undefined },
      ]),
    ).toThrow(/^cannot write chart\/values.yaml: /);
    expect(await filesBelow(root)).toEqual(['chart/templates/old.yaml']);
    expect(await readFile(path.join(root, 'chart/templates/old.yaml'), 'utf8')).toBe('old\n');
  });
});

describe('files outside the project', () => {
  let outside: string;
  beforeEach(async () => {
    outside = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-outside-'));
    await writeFile(path.join(outside, 'victim.txt'), 'not yours\n');
  });
  afterEach(async () => {
    await rm(outside, { recursive: true, force: true });
  });
  const victim = () => readFile(path.join(outside, 'victim.txt'), 'utf8');

  it('writeAtomically refuses the whole write when one path leads out, and writes nothing', async () => {
    const escape = path.relative(root, path.join(outside, 'victim.txt')).split(path.sep).join('/');
    for (const file of [
      { path: escape, content: 'overwritten\n', previous: undefined },
      { path: escape, content: '', previous: 'not yours\n', remove: true },
    ]) {
      expect(() =>
        writeAtomically(root, [
          { path: 'chart/values.yaml', content: 'values\n', previous: undefined },
          file,
        ]),
      ).toThrow(`refusing ${JSON.stringify(escape)}: not a file inside the project (a .. segment)`);
      expect(await victim()).toBe('not yours\n');
      expect(await readdir(root)).toEqual([]);
    }
  });

  it('writeAtomically refuses a path through a symlinked directory that points outside', async () => {
    await symlink(outside, path.join(root, 'chart'));
    expect(() =>
      writeAtomically(root, [
        { path: 'chart/victim.txt', content: 'overwritten\n', previous: undefined },
        { path: 'chart/new.yaml', content: 'new\n', previous: undefined },
      ]),
    ).toThrow(
      /^refusing "chart\/victim.txt": not a file inside the project \(a symbolic link on the way leads to /,
    );
    expect(await victim()).toBe('not yours\n');
    expect((await readdir(outside)).sort()).toEqual(['victim.txt']);
    expect(() =>
      writeAtomically(root, [{ path: 'chart/victim.txt', content: '', previous: 'x', remove: true }]),
    ).toThrow(KubesmithError);
    expect(await victim()).toBe('not yours\n');
  });

  it('StagedWrite refuses to stage through a symlinked directory that points outside', async () => {
    await mkdir(path.join(root, 'config/crd'), { recursive: true });
    await symlink(outside, path.join(root, 'config/crd/bases'));
    const write = new StagedWrite(root);
    write.stage({ path: 'config/rbac/role.yaml', content: 'role\n', previous: undefined });
    expect(() =>
      write.stage({ path: 'config/crd/bases/victim.txt', content: 'overwritten\n', previous: undefined }),
    ).toThrow(/^refusing "config\/crd\/bases\/victim.txt": not a file inside the project/);
    await write.discard();
    expect(await victim()).toBe('not yours\n');
    expect((await readdir(outside)).sort()).toEqual(['victim.txt']);
    expect(await filesBelow(root)).toEqual([]);
  });
});
