import { existsSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { kubesmithVersion } from '../../src/version.js';
import { read, removeTemp, run, runWithEnv, snapshot, tempDir } from '../helpers/run.js';

let dir: string;
afterEach(async () => {
  if (dir) await removeTemp(dir);
});

/** The layout of DESIGN §2 that `init` must write. */
const LAYOUT = [
  'PROJECT',
  'package.json',
  'tsconfig.json',
  'Dockerfile',
  '.dockerignore',
  '.gitignore',
  'README.md',
  'LICENSE',
  'hack/boilerplate.ts.txt',
  'src/main.ts',
  'config/default/kustomization.yaml',
  'config/manager/manager.yaml',
  'config/rbac/role.yaml',
  'config/rbac/role_binding.yaml',
  'config/rbac/service_account.yaml',
  'config/rbac/leader_election_role.yaml',
  'config/rbac/kustomization.yaml',
  'config/prometheus/monitor.yaml',
  'config/network-policy/allow-metrics-traffic.yaml',
  // Where `create api` adds samples, which `npm test` validates (kubesmith validate config/samples).
  'config/samples/kustomization.yaml',
  '.github/workflows/test.yml',
  '.github/workflows/lint.yml',
  // The one envtest of a test run: vitest's global setup, and what the integration tests import of it.
  'vitest.config.ts',
  'test/envtest.setup.ts',
  'test/envtest.ts',
];

describe('kubesmith init', () => {
  it('writes the whole project layout and a PROJECT file', async () => {
    dir = await tempDir('guestbook');
    const result = await run(dir, 'init', '--domain', 'example.com', '--skip-install');
    expect(result.stderr).not.toMatch(/error/);
    expect(result.code).toBe(0);
    for (const file of LAYOUT) expect(existsSync(path.join(dir, file)), file).toBe(true);
    const project = parse(await read(dir, 'PROJECT')) as Record<string, unknown>;
    expect(project).toMatchObject({ domain: 'example.com', projectName: 'guestbook', version: '3' });
    expect(project['layout']).toEqual(['typescript.kubesmith.dev/v1']);
    const pkg = JSON.parse(await read(dir, 'package.json')) as {
      name: string;
      scripts: Record<string, string>;
    };
    expect(pkg.name).toBe('guestbook');
    expect(pkg.scripts['test']).toBe('kubesmith envtest && kubesmith validate config/samples && vitest run');
    for (const script of [
      'build',
      'test',
      'lint',
      'manifests',
      'run',
      'docker-build',
      'install-crds',
      'uninstall-crds',
      'deploy',
      'undeploy',
    ]) {
      expect(pkg.scripts[script], script).toBeTruthy();
    }
    expect(await read(dir, 'src/main.ts')).toMatch(/\+kubesmith:scaffold:builder/);
    expect(await read(dir, 'hack/boilerplate.ts.txt')).toMatch(/Licensed under the Apache License/);
  });

  it('every YAML file it writes parses', async () => {
    dir = await tempDir('guestbook');
    await run(dir, 'init', '--skip-install');
    const files = await snapshot(dir);
    const yamlFiles = Object.keys(files).filter((f) => /\.ya?ml$/.test(f));
    expect(yamlFiles.length).toBeGreaterThan(10);
    for (const file of yamlFiles) {
      const documents = parseAllDocuments(files[file] ?? '', { strict: true });
      const errors = (Array.isArray(documents) ? documents : [documents]).flatMap((doc) => doc.errors);
      expect(errors, file).toEqual([]);
    }
  });

  it('--namespaced makes the manager role a Role and sets WATCH_NAMESPACE', async () => {
    dir = await tempDir('scoped');
    expect((await run(dir, 'init', '--namespaced', '--skip-install')).code).toBe(0);
    expect(await read(dir, 'config/rbac/role.yaml')).toMatch(/kind: Role\n/);
    expect(await read(dir, 'config/manager/manager.yaml')).toMatch(/WATCH_NAMESPACE/);
    expect(parse(await read(dir, 'PROJECT'))).toMatchObject({ namespaced: true });
  });

  it('--license none writes no LICENSE and no header', async () => {
    dir = await tempDir('nolicense');
    expect((await run(dir, 'init', '--license', 'none', '--skip-install')).code).toBe(0);
    expect(existsSync(path.join(dir, 'LICENSE'))).toBe(false);
    expect(await read(dir, 'src/main.ts')).not.toMatch(/Copyright/);
  });

  it('--owner goes into the license header', async () => {
    dir = await tempDir('owned');
    expect((await run(dir, 'init', '--owner', 'The Guestbook Authors', '--skip-install')).code).toBe(0);
    expect(await read(dir, 'hack/boilerplate.ts.txt')).toMatch(/Copyright \d{4} The Guestbook Authors\./);
  });

  it('--dry-run prints the plan and writes nothing', async () => {
    dir = await tempDir('guestbook');
    const result = await run(dir, 'init', '--domain', 'example.com', '--dry-run');
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^create\s+PROJECT$/m);
    expect(result.stderr).toMatch(/^create\s+src\/main\.ts$/m);
    expect(await snapshot(dir)).toEqual({});
  });

  it('--json prints the plan as JSON on stdout', async () => {
    dir = await tempDir('guestbook');
    const result = await run(dir, 'init', '--dry-run', '--json');
    const json = JSON.parse(result.stdout) as { command: string; files: { action: string; path: string }[] };
    expect(json.command).toBe('init');
    expect(json.files).toContainEqual({ action: 'create', path: 'PROJECT' });
  });

  it('refuses an initialised directory and changes nothing', async () => {
    dir = await tempDir('guestbook');
    await run(dir, 'init', '--skip-install');
    await writeFile(path.join(dir, 'src/main.ts'), '// my edits\n');
    const before = await snapshot(dir);
    const again = await run(dir, 'init', '--skip-install');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: .*PROJECT exists: this directory is already a kubesmith project$/m);
    expect(again.stderr).toMatch(/^hint: .*--force/m);
    expect(await snapshot(dir)).toEqual(before);
  });

  it('--force scaffolds again over the files', async () => {
    dir = await tempDir('guestbook');
    await run(dir, 'init', '--skip-install');
    await writeFile(path.join(dir, 'src/main.ts'), '// my edits\n');
    expect((await run(dir, 'init', '--skip-install', '--force')).code).toBe(0);
    expect(await read(dir, 'src/main.ts')).toMatch(/\+kubesmith:scaffold:builder/);
  });

  it('does not overwrite unrelated files that are in the way, without --force', async () => {
    dir = await tempDir('guestbook');
    await writeFile(path.join(dir, 'README.md'), '# mine\n');
    const result = await run(dir, 'init', '--skip-install');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: README\.md already exists$/m);
    expect(await snapshot(dir)).toEqual({ 'README.md': '# mine\n' });
  });

  it.each([
    [['--domain', '-bad.com'], /^error: domain \(-bad\.com\) is invalid: a DNS-1123 subdomain/m, 2],
    [['--project-name', 'Bad_Name'], /^error: project name \(Bad_Name\) is invalid: a DNS-1123 label/m, 2],
    [['--license', 'mit'], /error: option '--license <license>' argument 'mit' is invalid/, 2],
    [['--domain'], /error: option '--domain <domain>' argument missing/, 2],
    [['--frobnicate'], /error: unknown option '--frobnicate'/, 2],
  ])('rejects %j with a clear error, exit %i, and writes nothing', async (args, message, code) => {
    dir = await tempDir('guestbook');
    const result = await run(dir, 'init', '--skip-install', ...args);
    expect(result.stderr).toMatch(message);
    expect(result.code).toBe(code);
    expect(await snapshot(dir)).toEqual({});
  });

  // Root writes through any permission bits, so this can only be observed as an ordinary user.
  it.skipIf(process.getuid?.() === 0)('says an unwritable directory is one, and writes nothing', async () => {
    dir = await tempDir('locked');
    await chmod(dir, 0o555);
    try {
      const result = await run(dir, 'init', '--skip-install');
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^error: cannot write .*: permission denied$/m);
      expect(await snapshot(dir)).toEqual({});
    } finally {
      await chmod(dir, 0o755);
    }
  });

  it('rejects a directory name that is not a valid project name, naming the flag to use', async () => {
    dir = await tempDir('My_Project');
    const result = await run(dir, 'init', '--skip-install');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/project name \(My_Project\) is invalid/);
    expect(result.stderr).toMatch(/hint: pass --project-name/);
  });
});

it('takes the copyright year from SOURCE_DATE_EPOCH, so that a project made again later is the same', async () => {
  dir = await tempDir('reproducible');
  const env = {
    ...process.env,
    KUBESMITH_RUNTIME_SPEC: `^${kubesmithVersion}`,
    KUBESMITH_CLI_SPEC: `^${kubesmithVersion}`,
    SOURCE_DATE_EPOCH: '1000000000', // 2001-09-09
  };
  expect((await runWithEnv(env, dir, 'init', '--domain', 'example.com', '--skip-install')).code).toBe(0);
  expect(await read(dir, 'hack/boilerplate.ts.txt')).toMatch(/^Copyright 2001\.$/m);
});
