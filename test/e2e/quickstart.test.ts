/**
 * The newcomer's path: README.md's quick start, verbatim, read from the README itself. Its first block runs
 * in this clone (`npm link`), the second in a new directory, with no KUBESMITH_* variable and no kubesmith on
 * the npm registry. Then more of the CLI on the same project (a second version, webhooks, conversion, a Pod
 * webhook), and the generated project's build, lint and tests again. It installs the generated project's
 * other dependencies from the npm registry and takes a few minutes.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readmeBlocks, repo, Shell, userEnv } from './readme.js';

const MINUTES = 60_000;

let work: string;
let env: NodeJS.ProcessEnv;
let project: string;
let shell: Shell;

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-e2e-quickstart-'));
  env = userEnv(path.join(work, 'npm-global'));
  await mkdir(path.join(work, 'elsewhere'));
  shell = new Shell(repo, env);
});

afterAll(async () => {
  if (process.env['KUBESMITH_KEEP_E2E']) return;
  // The link npm made in the tests' own global prefix goes with it.
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the README quick start, verbatim', () => {
  it(
    'links the clone, scaffolds a project, and its build, lint and tests pass with the integration tests running',
    async () => {
      const [setup, quickstart, ...rest] = await readmeBlocks('Quick start');
      expect(rest).toEqual([]);
      expect(setup).toEqual(['npm link --ignore-scripts']);
      for (const line of setup!) await shell.run(line, 2 * MINUTES);

      shell.cwd = path.join(work, 'elsewhere');
      const outputs: Record<string, string> = {};
      for (const line of quickstart!) outputs[line] = (await shell.run(line, 8 * MINUTES)).output;
      project = path.join(work, 'elsewhere', 'guestbook');
      expect(shell.cwd).toBe(project);
      console.log(`README quick start, seconds per step:\n${shell.timings()}`);

      const init = outputs['npx kubesmith init --domain example.com']!;
      // One line says where kubesmith's packages come from, and npm install is announced and timed.
      expect(init).toContain(
        `kubesmith runs from a checkout (${repo.replace(/[\\/]$/, '')}): the project installs kubesmith-runtime-0.1.0.tgz and kubesmith-0.1.0.tgz from .kubesmith/ (commit it with the project)`,
      );
      expect(init).toMatch(/^installing dependencies \(npm install\) \.\.\.$/m);
      expect(init).toMatch(/^installed dependencies in \d+\.\d s$/m);
      expect(init).toMatch(/^Next: npx kubesmith create api /m);
      expect(init).not.toMatch(/install-scripts/);
      const pkg = JSON.parse(await readFile(path.join(project, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      };
      expect(pkg.dependencies['@kubesmith/runtime']).toBe('file:.kubesmith/kubesmith-runtime-0.1.0.tgz');

      const test = outputs['npm run build && npm run lint && npm test']!;
      expect(existsSync(path.join(project, 'dist/main.js'))).toBe(true);
      // The unit tests, and the integration test on a real kube-apiserver: run, not skipped.
      expect(test).toMatch(/guestbook\.controller\.test\.ts/);
      expect(test).toMatch(/pod\.controller\.test\.ts/);
      // The file passed (a skipped one shows ↓); vitest names a test only when it is slow, which on the
      // run's shared envtest it seldom is.
      expect(test).toMatch(/✓ test\/controllers\/guestbook\.controller\.integration\.test\.ts \(1 test\)/);
      expect(test).not.toMatch(/skipping the envtest tests|skipped/);
    },
    20 * MINUTES,
  );

  it(
    'create api adds a second version, create webhook the webhooks, conversion and a Pod webhook; all tests pass',
    async () => {
      expect(project, 'the quick start ran').toBeDefined();
      shell.cwd = project;
      const guestbook = '--group webapp --kind Guestbook';
      for (const line of [
        `npx kubesmith create api ${guestbook} --version v2 --controller=false`,
        `npx kubesmith create webhook ${guestbook} --version v1 --defaulting --programmatic-validation --conversion --spoke v2`,
        'npx kubesmith create webhook --group core --version v1 --kind Pod --programmatic-validation',
      ]) {
        await shell.run(line, 2 * MINUTES);
      }
      const main = await readFile(path.join(project, 'src/main.ts'), 'utf8');
      expect(main).toMatch(/setupGuestbookWebhookWithManager\(mgr\)/);
      expect(main).toMatch(/setupPodWebhookWithManager\(mgr\)/);

      await shell.run('npm run build', 2 * MINUTES);
      await shell.run('npm run lint', 2 * MINUTES);
      const test = (await shell.run('npm test', 5 * MINUTES)).output;
      expect(test).toMatch(/guestbook\.webhook\.test\.ts/);
      expect(test).toMatch(/guestbook\.conversion\.test\.ts/);
      // The webhooks, called by kube-apiserver: defaulting, validation, conversion, and a Pod webhook.
      expect(test).toMatch(/guestbook\.webhook\.integration\.test\.ts \(5 tests\)/);
      expect(test).toMatch(/pod\.webhook\.integration\.test\.ts \(3 tests\)/);
      expect(test).toMatch(/Tests +\d+ passed \(\d+\)/);
      expect(test).not.toMatch(/skipping the envtest tests|skipped/);
      // create api and create webhook regenerated the manifests: the generated CI's check passes.
      await shell.run('npx kubesmith manifests --check', MINUTES);
    },
    10 * MINUTES,
  );

  it(
    'without envtest binaries the integration tests are skipped with one line, and under CI=true they fail',
    async () => {
      expect(project, 'the quick start ran').toBeDefined();
      const empty = path.join(work, 'no-binaries');
      await mkdir(empty, { recursive: true });
      const noBinaries = { ...env, KUBEBUILDER_ASSETS: empty, XDG_CACHE_HOME: empty };
      // vitest alone: `npm test` would first provide the binaries.
      const local = await shell.exec('npx', ['vitest', 'run'], {
        cwd: project,
        env: { ...noBinaries, CI: '', KUBESMITH_REQUIRE_ENVTEST: '' },
      });
      expect(local.exitCode, String(local.all)).toBe(0);
      expect(String(local.all)).toMatch(/skipping the envtest tests: no etcd and kube-apiserver found/);
      // The controller's and the two webhooks' integration tests.
      expect(String(local.all)).toMatch(/Test Files +\d+ passed \| 3 skipped/);

      const ci = await shell.exec('npx', ['vitest', 'run'], {
        cwd: project,
        env: { ...noBinaries, CI: 'true' },
      });
      expect(ci.exitCode).not.toBe(0);
      expect(String(ci.all)).toMatch(
        /The envtest tests must run here \(CI or KUBESMITH_REQUIRE_ENVTEST is set\)/,
      );
      expect(String(ci.all)).toMatch(/Test Files +3 failed/);
    },
    3 * MINUTES,
  );

  it(
    'a second create api for the same kind fails with a clear error',
    async () => {
      expect(project, 'the quick start ran').toBeDefined();
      const again = await shell.exec(
        'npx',
        ['kubesmith', 'create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook'],
        { cwd: project },
      );
      expect(again.exitCode).toBe(1);
      expect(again.stderr).toMatch(/^error: API resource already exists$/m);
    },
    MINUTES,
  );
});
