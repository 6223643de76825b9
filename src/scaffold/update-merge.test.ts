/** How alpha update decides each file: by its class, package.json key by key. */
import { describe, expect, it } from 'vitest';
import { decide, mergePackageJson } from './update-merge.js';

const b = (text: string) => Buffer.from(text);
const json = (value: unknown) => b(`${JSON.stringify(value, null, 2)}\n`);

describe('decide', () => {
  it('takes the new scaffold where the user did not touch a file, keeps the user where the scaffold did not', () => {
    expect(decide('src/main.ts', { base: b('a'), ours: b('a'), theirs: b('b') })).toEqual({
      outcome: 'taken',
      content: b('b'),
    });
    expect(decide('src/main.ts', { base: b('a'), ours: b('c'), theirs: b('a') })).toEqual({
      outcome: 'kept',
      content: b('c'),
    });
    expect(decide('src/mine.ts', { ours: b('mine') })).toEqual({ outcome: 'kept', content: b('mine') });
    expect(decide('src/new.ts', { theirs: b('new') })).toEqual({ outcome: 'taken', content: b('new') });
    expect(decide('src/main.ts', { base: b('a'), ours: b('c'), theirs: b('d') })).toEqual({
      outcome: 'text-merge',
    });
  });

  it('removes a file the new scaffold no longer makes when the user did not touch it, keeps it otherwise', () => {
    expect(decide('config/old.yaml', { base: b('a'), ours: b('a') })).toEqual({
      outcome: 'taken',
      content: undefined,
    });
    expect(decide('config/old.yaml', { base: b('a'), ours: b('c') }).outcome).toBe('kept');
  });

  it('regenerates generated files and the lock instead of merging them', () => {
    for (const file of [
      'config/crd/bases/webapp.example.com_guestbooks.yaml',
      'config/rbac/role.yaml',
      'config/webhook/manifests.yaml',
      'dist/chart/templates/manager/manager.yaml',
      'dist/chart/.kubesmith-files',
    ])
      expect(decide(file, { base: b('a'), ours: b('c'), theirs: b('d') })).toEqual({
        outcome: 'regenerated',
        content: b('d'),
      });
    expect(decide('package-lock.json', { base: b('a'), ours: b('c'), theirs: b('d') })).toEqual({
      outcome: 'regenerated',
      content: b('c'),
    });
    // A chart elsewhere: its templates, not dist/chart's.
    expect(
      decide('deploy/chart/templates/x.yaml', { base: b('a'), ours: b('c'), theirs: b('d') }, 'deploy/chart')
        .outcome,
    ).toBe('regenerated');
  });

  it("takes kubesmith's own tarballs from the new CLI, and a binary file both changed is a conflict", () => {
    const tgz = (n: number) => Buffer.from([0x1f, 0x8b, 0, n]);
    expect(decide('.kubesmith/kubesmith-0.1.0.tgz', { base: tgz(1), ours: tgz(2), theirs: tgz(3) })).toEqual({
      outcome: 'taken',
      content: tgz(3),
    });
    expect(decide('logo.png', { base: tgz(1), ours: tgz(2), theirs: tgz(3) }).outcome).toBe('conflicted');
  });
});

describe('mergePackageJson', () => {
  const base = {
    name: 'guestbook',
    scripts: { build: 'tsc', test: 'vitest run' },
    dependencies: { '@kubesmith/runtime': 'file:.kubesmith/kubesmith-runtime-0.1.0.tgz', yaml: '^2.8.0' },
    devDependencies: { typescript: '~5.8', vitest: '^4.0.0' },
  };

  it("keeps the user's added and bumped dependencies and takes the scaffold's bumps and additions", () => {
    const ours = {
      ...base,
      dependencies: { ...base.dependencies, ms: '^2.1.3', yaml: '^2.9.0' },
      scripts: { ...base.scripts, start: 'node dist/main.js' },
    };
    const theirs = {
      ...base,
      devDependencies: { typescript: '~5.9', vitest: '^4.1.0', '@types/node': '^20.19.0' },
      scripts: { ...base.scripts, test: 'kubesmith validate config/samples && vitest run' },
    };
    const merged = mergePackageJson(json(base), json(ours), json(theirs));
    expect(JSON.parse(merged!.text)).toEqual({
      name: 'guestbook',
      scripts: {
        build: 'tsc',
        test: 'kubesmith validate config/samples && vitest run',
        start: 'node dist/main.js',
      },
      dependencies: {
        '@kubesmith/runtime': 'file:.kubesmith/kubesmith-runtime-0.1.0.tgz',
        ms: '^2.1.3',
        yaml: '^2.9.0',
      },
      devDependencies: { '@types/node': '^20.19.0', typescript: '~5.9', vitest: '^4.1.0' },
    });
    expect(merged!.note).toBeUndefined();
  });

  it("keeps the user's range of a dependency both sides moved, and says so", () => {
    const ours = { ...base, dependencies: { ...base.dependencies, yaml: '^2.9.1' } };
    const theirs = { ...base, dependencies: { ...base.dependencies, yaml: '^2.9.0' } };
    const merged = mergePackageJson(json(base), json(ours), json(theirs));
    expect((JSON.parse(merged!.text) as typeof base).dependencies.yaml).toBe('^2.9.1');
    expect(merged!.note).toBe('your ranges kept where both changed: dependencies.yaml');
  });

  it('gives up (a text merge shows the conflict) on a script both sides changed, or JSON that does not parse', () => {
    const ours = { ...base, scripts: { ...base.scripts, test: 'vitest run --coverage' } };
    const theirs = { ...base, scripts: { ...base.scripts, test: 'vitest run --bail 1' } };
    expect(mergePackageJson(json(base), json(ours), json(theirs))).toBeUndefined();
    expect(mergePackageJson(json(base), b('{ "name": '), json(theirs))).toBeUndefined();
  });
});
