/**
 * `kubesmith alpha update` on a project made by an older build of this repository (packed from git
 * history, installed from its tarball): the edits a team makes survive the update with no conflict, every
 * file they did not touch becomes the current scaffold's, and the result builds, lints and passes its tests
 * (integration tests on envtest included); a line both sides changed stops the update before anything runs,
 * leaving every branch as it was. The old project is made once and copied for each test. Each step's wall
 * time is printed.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installOldCli, oldCliTarball, type OldCli } from '../helpers/old-cli.js';
import { runWithEnv, snapshot } from '../helpers/run.js';

const exec = promisify(execFile);

/** A build of 2026-11-25 (the history begins on 2026-11-22): it has the chart, but no `alpha generate`. */
const OLD_COMMIT = 'a77e56369c6420bfd33b5a491478ff4fc386c62a';

/** The environment without the test suite's pinned package specs: projects carry their .kubesmith/ tarballs. */
const env: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !key.startsWith('KUBESMITH_') && key !== 'IMG'),
);
const timings: string[] = [];
async function timed<T>(step: string, work: () => Promise<T>): Promise<T> {
  const start = Date.now();
  try {
    return await work();
  } finally {
    timings.push(`${step}: ${((Date.now() - start) / 1000).toFixed(1)} s`);
  }
}

async function sh(cwd: string, command: string, ...args: string[]): Promise<string> {
  const { stdout } = await exec(command, args, { cwd, env, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}
const git = (cwd: string, ...args: string[]) =>
  sh(cwd, 'git', '-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args);

let old: OldCli;
let temp: string;
/** The project the old build made, committed: copied by each test. */
let pristine: string;

beforeAll(async () => {
  old = await timed('build and pack the old kubesmith (cached after the first run)', () =>
    oldCliTarball(OLD_COMMIT),
  );
  if ('skip' in old) return;
  const tarball = old.tarball;
  temp = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-update-test-'));
  pristine = path.join(temp, 'pristine', 'guestbook');
  await exec('mkdir', ['-p', pristine]);
  const oldBin = await timed('install the old kubesmith (npm install of its tarball)', () =>
    installOldCli(tarball, path.join(temp, 'old-cli')),
  );
  const oldKubesmith = (...args: string[]) => sh(pristine, process.execPath, oldBin, ...args);
  const webapp = ['--group', 'webapp', '--version'];
  await timed('old kubesmith: init, APIs, webhooks, chart', async () => {
    await oldKubesmith(
      'init',
      '--domain',
      'example.com',
      '--owner',
      'The Guestbook Authors',
      '--skip-install',
    );
    await oldKubesmith('create', 'api', ...webapp, 'v1', '--kind', 'Guestbook');
    await oldKubesmith(
      'create',
      'webhook',
      ...webapp,
      'v1',
      '--kind',
      'Guestbook',
      '--defaulting',
      '--programmatic-validation',
    );
    await oldKubesmith('create', 'api', ...webapp, 'v2', '--kind', 'Guestbook', '--controller=false');
    await oldKubesmith(
      'create',
      'webhook',
      ...webapp,
      'v1',
      '--kind',
      'Guestbook',
      '--conversion',
      '--spoke',
      'v2',
    );
    await oldKubesmith(
      'create',
      'api',
      ...webapp,
      'v1',
      '--kind',
      'Memcached',
      '--image',
      'memcached:1.6',
      '--image-container-port',
      '11211',
      '--image-container-command',
      'memcached,-m=64,-v',
      '--run-as-user',
      '1001',
    );
    await oldKubesmith(
      'create',
      'api',
      '--group',
      'core',
      '--version',
      'v1',
      '--kind',
      'Pod',
      '--resource=false',
    );
    await oldKubesmith('helm-chart', '--img', 'registry.example.com/guestbook:v1');
  });
  await git(pristine, 'init', '--quiet', '--initial-branch=main');
  await git(pristine, 'add', '-A');
  await git(pristine, 'commit', '--quiet', '-m', 'scaffold with an older kubesmith');
}, 900_000);

afterAll(async () => {
  console.log(`alpha update test timings:\n  ${timings.join('\n  ')}`);
  if (temp) await rm(temp, { recursive: true, force: true });
});

/** A copy of the old project (its git history included) for one test. */
async function copy(name: string): Promise<string> {
  const dir = path.join(temp, name, 'guestbook');
  await cp(pristine, dir, { recursive: true });
  return dir;
}

async function edit(dir: string, file: string, from: string, to: string): Promise<void> {
  const text = await readFile(path.join(dir, file), 'utf8');
  expect(text, `${file} holds the text the edit replaces`).toContain(from);
  await writeFile(path.join(dir, file), text.replace(from, to));
}

const refs = (dir: string) => git(dir, 'for-each-ref', '--format=%(refname) %(objectname)');

/** The edits a team makes, each as [file, text only the edit writes]. */
async function teamEdits(dir: string): Promise<[string, string][]> {
  const typesFile = 'src/api/webapp/v1/guestbook.types.ts';
  const sizeField =
    '\n  /**\n   * size is the number of guestbook pages to keep.\n   * +kubebuilder:validation:Minimum=1\n   * +kubebuilder:validation:Maximum=100\n   */\n  size?: number;\n';
  await edit(dir, typesFile, '  foo?: string;\n}\n', `  foo?: string;\n${sizeField}}\n`);
  const controllerFile = 'src/controllers/guestbook.controller.ts';
  const reconcileLine = "    context.logger.info('pages to keep', { size: guestbook.spec?.size ?? 1 });\n";
  await edit(
    dir,
    controllerFile,
    '    // Report on the object',
    `${reconcileLine}\n    // Report on the object`,
  );
  const manifest = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  manifest.dependencies['ms'] = '^2.1.3';
  manifest.dependencies = Object.fromEntries(Object.entries(manifest.dependencies).sort());
  await writeFile(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const patch =
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: controller-manager\n  namespace: system\nspec:\n  template:\n    metadata:\n      annotations:\n        team.example.com/owner: guestbook-team\n';
  await writeFile(path.join(dir, 'config/default/manager_team_patch.yaml'), patch);
  await edit(
    dir,
    'config/default/kustomization.yaml',
    '- path: manager_webhook_patch.yaml\n',
    '- path: manager_webhook_patch.yaml\n- path: manager_team_patch.yaml\n',
  );
  await edit(dir, 'dist/chart/values.yaml', '  replicas: 1\n', '  replicas: 2\n');
  const ownFile = 'src/pages.ts';
  await writeFile(
    path.join(dir, ownFile),
    '/** How many pages a guestbook keeps when its spec does not say. */\nexport const DEFAULT_PAGES = 1;\n',
  );
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '--quiet', '-m', 'our operator');
  return [
    [typesFile, sizeField],
    [controllerFile, reconcileLine],
    ['package.json', '"ms": "^2.1.3"'],
    ['config/default/manager_team_patch.yaml', patch],
    ['config/default/kustomization.yaml', '- path: manager_team_patch.yaml\n'],
    ['dist/chart/values.yaml', '  replicas: 2\n'],
    [ownFile, 'export const DEFAULT_PAGES = 1;'],
  ];
}

describe('alpha update from an older build', () => {
  it('keeps every edit, takes every untouched file from the new scaffold, and the result passes its build, lint and tests', async (context) => {
    if ('skip' in old) return context.skip(old.skip);
    const dir = await copy('clean');
    const edits = await teamEdits(dir);
    const before = await refs(dir);

    const result = await timed(
      'alpha update (old and new scaffold, merge, manifests, npm install, build, lint, test)',
      () => runWithEnv(env, dir, 'alpha', 'update', '--json'),
    );
    expect(result.stderr).not.toMatch(/^error:/m);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as {
      outputBranch: string;
      conflicted: string[];
      files: { path: string; outcome: string }[];
      ran: string[];
      oldScaffold: string;
      timings: { step: string; seconds: number }[];
    };
    for (const step of report.timings) timings.push(`  alpha update, ${step.step}: ${step.seconds} s`);
    expect(report.conflicted).toEqual([]);
    expect(report.oldScaffold).toBe('replay');
    expect(report.ran).toEqual([
      'kubesmith manifests',
      'npm install',
      'npm run build',
      'npm run lint',
      'npm test',
    ]);
    const outcome = (file: string) => report.files.find((f) => f.path === file)?.outcome;
    expect(outcome('package.json')).toBe('merged');
    expect(outcome('package-lock.json')).toBe('regenerated');
    expect(outcome('src/pages.ts')).toBe('kept'); // a file of their own

    // The user's branch and work tree are as they were; the new branch holds one commit on top of it.
    expect((await refs(dir)).split('\n').filter((line) => !line.includes(report.outputBranch))).toEqual(
      before.split('\n'),
    );
    expect(await git(dir, 'status', '--porcelain')).toBe('');
    expect((await git(dir, 'rev-list', '--count', `main..${report.outputBranch}`)).trim()).toBe('1');

    // The result, checked out, against the current kubesmith's scaffold of the same PROJECT.
    const merged = path.join(temp, 'clean', 'merged');
    await git(dir, 'worktree', 'add', '--quiet', merged, report.outputBranch);
    const fresh = path.join(temp, 'clean', 'fresh');
    const generated = await timed('alpha generate of the result (the comparison scaffold)', () =>
      runWithEnv(env, merged, 'alpha', 'generate', '--output-dir', fresh),
    );
    expect(generated.code).toBe(0);
    const [ours, theirs] = [await snapshot(merged), await snapshot(fresh)];
    for (const [file, text] of edits) expect(ours[file], file).toContain(text);
    // What the edits change beyond their own files: the CRD of the edited types (and the chart's copy), the
    // chart's manager template (the kustomize patch), the dependency in the lock.
    expect(ours['config/crd/bases/webapp.example.com_guestbooks.yaml']).toContain('size:');
    expect(ours['dist/chart/templates/crd/guestbooks.webapp.example.com.yaml']).toContain('size:');
    expect(ours['dist/chart/templates/manager/manager.yaml']).toContain(
      'team.example.com/owner: guestbook-team',
    );
    expect(ours['package-lock.json']).toContain('"node_modules/ms"');
    const derived = [
      'config/crd/bases/webapp.example.com_guestbooks.yaml',
      'dist/chart/templates/crd/guestbooks.webapp.example.com.yaml',
      'dist/chart/templates/manager/manager.yaml',
      'dist/chart/.kubesmith-files',
    ];
    const edited = edits.map(([file]) => file);
    const untouched = Object.keys(theirs).filter((file) => !edited.includes(file) && !derived.includes(file));
    expect(untouched.length).toBeGreaterThan(80);
    const differing = untouched.filter((file) => ours[file] !== theirs[file]);
    expect(differing).toEqual([]);
    // Nothing left over from the old scaffold: every file is the new scaffold's, the user's, or the lock.
    const extra = Object.keys(ours).filter(
      (file) =>
        !(file in theirs) &&
        !edited.includes(file) &&
        file !== 'package-lock.json' &&
        !file.startsWith('node_modules/') &&
        file !== '.git', // the worktree's link to the repository
    );
    expect(extra).toEqual([]);
    await git(dir, 'worktree', 'remove', '--force', merged);
  }, 1_800_000);

  it('stops at a line both sides changed: exit 1, the conflicted file listed, nothing run, every branch as it was', async (context) => {
    if ('skip' in old) return context.skip(old.skip);
    const dir = await copy('conflict');
    // The new scaffold changes this line of the Dockerfile too (it prunes optional dependencies).
    await edit(
      dir,
      'Dockerfile',
      'RUN npm run build && npm prune --omit=dev\n',
      'RUN npm run build && npm prune --omit=dev --omit=peer\n',
    );
    await git(dir, 'commit', '--quiet', '-am', 'prune peers too');
    const before = await refs(dir);
    const head = await git(dir, 'rev-parse', 'HEAD');

    const result = await timed('alpha update with a conflict', () => runWithEnv(env, dir, 'alpha', 'update'));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^\S*conflict\s+Dockerfile$/m);
    const errors = result.stderr.split('\n').filter((line) => line.startsWith('error:'));
    expect(errors).toEqual([
      expect.stringContaining('1 file conflicts (Dockerfile): nothing was run, no branch was made'),
    ]);
    expect(result.stderr).toMatch(/^hint: .*--force/m);
    expect(await refs(dir)).toBe(before);
    expect(await git(dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(await git(dir, 'status', '--porcelain')).toBe('');
    const worktrees = async () => (await git(dir, 'worktree', 'list', '--porcelain')).match(/^worktree /gm);
    expect(await worktrees()).toHaveLength(1);

    // --force (for CI) commits the markers on the new branch instead, says so, and runs nothing.
    const forced = await timed('alpha update --force with a conflict', () =>
      runWithEnv(env, dir, 'alpha', 'update', '--force', '--output-branch', 'update-with-markers', '--json'),
    );
    expect(forced.code).toBe(0);
    expect(forced.stderr).toMatch(
      /^warning: --force: 1 file with conflict markers committed to update-with-markers/m,
    );
    const report = JSON.parse(forced.stdout) as { conflicted: string[]; ran: string[] };
    expect(report.conflicted).toEqual(['Dockerfile']);
    expect(report.ran).toEqual([]);
    expect(await git(dir, 'show', 'update-with-markers:Dockerfile')).toMatch(
      /^<<<<<<< main\n.*--omit=peer\n\|\|\|\|\|\|\| kubesmith 0\.1\.0\n.*=======\n.*--omit=optional\n>>>>>>> kubesmith 0\.1\.0\+/ms,
    );
    expect(await git(dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(await git(dir, 'status', '--porcelain')).toBe('');
  }, 900_000);
});
