/**
 * scripts/versions.mjs: one version for kubesmith and @kubesmith/runtime, set everywhere by `bump` and
 * checked by `check` (here on the repository, and in the release workflow against the tag).
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const script = path.join(repo, 'scripts/versions.mjs');
/** Every file the script reads or writes. */
const FILES = [
  'package.json',
  'package-lock.json',
  'runtime/package.json',
  'examples/pod-labeler/package.json',
  'CHANGELOG.md',
];

async function versions(
  cwd: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [script, ...args], { cwd, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

let temps: string[] = [];
/** A copy of the files the script looks at, in a temporary directory. */
async function copy(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-versions-'));
  temps.push(dir);
  for (const file of FILES) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await cp(path.join(repo, file), path.join(dir, file));
  }
  return dir;
}
afterEach(async () => {
  await Promise.all(temps.map((d) => rm(d, { recursive: true, force: true })));
  temps = [];
});

interface Manifest {
  version?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  packages?: Record<string, { version?: string }>;
  [field: string]: unknown;
}

async function json(dir: string, file: string): Promise<Manifest> {
  return JSON.parse(await readFile(path.join(dir, file), 'utf8')) as Manifest;
}

async function snapshot(dir: string): Promise<string[]> {
  return Promise.all(FILES.map((f) => readFile(path.join(dir, f), 'utf8')));
}

it('this repository has one version in every place', async () => {
  const result = await versions(repo, 'check');
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
});

describe('bump', () => {
  it('sets the version of both packages, the lockfile and the examples, changing nothing else', async () => {
    const dir = await copy();
    const before = await snapshot(dir);
    const result = await versions(dir, 'bump', '0.2.0');
    expect(result.code, result.stderr).toBe(0);

    expect((await json(dir, 'package.json')).version).toBe('0.2.0');
    expect((await json(dir, 'runtime/package.json')).version).toBe('0.2.0');
    const lock = await json(dir, 'package-lock.json');
    expect([lock.version, lock.packages?.['']?.version, lock.packages?.['runtime']?.version]).toEqual([
      '0.2.0',
      '0.2.0',
      '0.2.0',
    ]);
    const example = await json(dir, 'examples/pod-labeler/package.json');
    expect(example.dependencies?.['@kubesmith/runtime']).toBe('^0.2.0');
    expect(example.devDependencies?.['kubesmith']).toBe('^0.2.0');
    expect((await versions(dir, 'check')).code).toBe(0);

    // Only version lines changed: the files keep npm's formatting.
    const after = await snapshot(dir);
    FILES.forEach((file, i) => {
      const changed = after[i]!.split('\n').filter((line, n) => line !== before[i]!.split('\n')[n]);
      for (const line of changed)
        expect(line, file).toMatch(/"(version|kubesmith|@kubesmith\/runtime)": "\^?0\.2\.0"/);
    });
  });

  it('refuses what is not a version, and writes nothing', async () => {
    const dir = await copy();
    const before = await snapshot(dir);
    for (const bad of ['0.2', 'latest', '01.2.3', `1.2.3-${'x'.repeat(80)}`]) {
      const result = await versions(dir, 'bump', bad);
      expect(result.code, bad).toBe(2);
      expect(result.stderr).toMatch(/^error: .* is not a version\nhint: /);
    }
    expect(await snapshot(dir)).toEqual(before);
  });
});

describe('check', () => {
  it('names the file whose version differs', async () => {
    const dir = await copy();
    const runtime = await json(dir, 'runtime/package.json');
    await writeFile(path.join(dir, 'runtime/package.json'), JSON.stringify({ ...runtime, version: '9.9.9' }));
    const result = await versions(dir, 'check');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'error: runtime/package.json version is "9.9.9", but package.json\'s version is',
    );
    expect(result.stderr).toContain('hint: run `npm run version:bump -- <version>`');
  });

  it('with --tag: wants v<version> and a released CHANGELOG heading', async () => {
    const dir = await copy();
    await versions(dir, 'bump', '0.2.0');
    const changelog = path.join(dir, 'CHANGELOG.md');
    await writeFile(changelog, '# Changelog\n\n## 0.2.0 (unreleased)\n\n- a change\n');

    const wrongTag = await versions(dir, 'check', '--tag', 'v0.3.0');
    expect(wrongTag.code).toBe(1);
    expect(wrongTag.stderr).toContain('error: the tag is "v0.3.0" but the packages are 0.2.0');
    expect(wrongTag.stderr).toContain('error: CHANGELOG.md still says "## 0.2.0 (unreleased)"');

    await writeFile(changelog, '# Changelog\n\n## 0.2.0 (2026-11-24)\n\n- a change\n');
    const released = await versions(dir, 'check', '--tag', 'v0.2.0');
    expect(released.code, released.stderr).toBe(0);
  });

  it('with --repository: wants both packages to name it, as npm provenance does', async () => {
    const dir = await copy();
    const url = 'https://github.com/example/kubesmith';
    const missing = await versions(dir, 'check', '--repository', url);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      `error: package.json repository.url is missing; npm's provenance check wants ${url}`,
    );

    for (const [file, directory] of [
      ['package.json', undefined],
      ['runtime/package.json', 'runtime'],
    ] as const) {
      const manifest = await json(dir, file);
      manifest['repository'] = { type: 'git', url: `git+${url}.git`, ...(directory ? { directory } : {}) };
      await writeFile(path.join(dir, file), JSON.stringify(manifest, null, 2));
    }
    const ok = await versions(dir, 'check', '--repository', url);
    expect(ok.code, ok.stderr).toBe(0);
    expect((await versions(dir, 'check', '--repository', 'https://github.com/fork/kubesmith')).code).toBe(1);
  });
});
