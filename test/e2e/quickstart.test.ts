/**
 * The quick start of README.md, the way a user gets it: the CLI and the runtime packed as npm tarballs,
 * `npx kubesmith` in a new directory, then the generated project's own build, lint and tests.
 * It needs the npm registry for the generated project's dependencies and takes a few minutes.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type Options } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const MINUTES = 60_000;

let work: string;
let project: string;
let env: NodeJS.ProcessEnv;

async function sh(cwd: string, command: string, args: string[], options: Options = {}) {
  return execa(command, args, { cwd, env, reject: false, all: true, stdin: 'ignore', ...options });
}

/** `npm pack` a workspace into `work`, returning the tarball's path. */
async function pack(workspace?: string): Promise<string> {
  const args = [
    'pack',
    '--json',
    '--pack-destination',
    work,
    ...(workspace ? ['--workspace', workspace] : []),
  ];
  const result = await execa('npm', args, { cwd: repo, stdin: 'ignore' });
  const [info] = JSON.parse(result.stdout) as { filename: string }[];
  if (!info) throw new Error(`npm pack printed no file: ${result.stdout}`);
  return path.join(work, info.filename);
}

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-e2e-'));
  const cli = await pack();
  const runtime = await pack('@kubesmith/runtime');
  // The generated project takes both packages from the tarballs instead of the registry.
  env = {
    ...process.env,
    KUBESMITH_CLI_SPEC: `file:${cli}`,
    KUBESMITH_RUNTIME_SPEC: `file:${runtime}`,
    npm_config_yes: 'true',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    NO_COLOR: '1',
  };
  project = path.join(work, 'guestbook');
  await mkdir(project);
  // npx runs the packed CLI exactly as `npx kubesmith` runs a published one.
  const init = await sh(project, 'npx', [
    '--yes',
    '--package',
    cli,
    'kubesmith',
    'init',
    '--domain',
    'example.com',
  ]);
  expect(init.exitCode, String(init.all)).toBe(0);
}, 10 * MINUTES);

afterAll(async () => {
  if (work && !process.env['KUBESMITH_KEEP_E2E']) await rm(work, { recursive: true, force: true });
});

describe('quick start through npx', () => {
  it('init installed the project with the packed runtime and CLI', async () => {
    expect(existsSync(path.join(project, 'node_modules/@kubesmith/runtime/package.json'))).toBe(true);
    expect(existsSync(path.join(project, 'node_modules/.bin/kubesmith'))).toBe(true);
  });

  it(
    'create api adds a custom resource in two versions and a Pod controller, create webhook their webhooks',
    async () => {
      const kubesmith = async (...args: string[]) => {
        const result = await sh(project, 'npx', ['kubesmith', ...args]);
        expect(result.exitCode, `kubesmith ${args.join(' ')}\n${String(result.all)}`).toBe(0);
      };
      const guestbook = ['--group', 'webapp', '--kind', 'Guestbook'];
      await kubesmith('create', 'api', ...guestbook, '--version', 'v1');
      await kubesmith('create', 'api', ...guestbook, '--version', 'v2', '--controller=false');
      await kubesmith(
        ...['create', 'api', '--group', 'core', '--version', 'v1', '--kind', 'Pod'],
        ...['--resource=false', '--controller'],
      );
      await kubesmith(
        ...['create', 'webhook', ...guestbook, '--version', 'v1'],
        ...['--defaulting', '--programmatic-validation', '--conversion', '--spoke', 'v2'],
      );
      await kubesmith(
        ...['create', 'webhook', '--group', 'core', '--version', 'v1', '--kind', 'Pod'],
        '--programmatic-validation',
      );
      const main = await readFile(path.join(project, 'src/main.ts'), 'utf8');
      expect(main).toMatch(/GuestbookReconciler/);
      expect(main).toMatch(/PodReconciler/);
      expect(main).toMatch(/setupGuestbookWebhookWithManager\(mgr\)/);
      expect(main).toMatch(/setupPodWebhookWithManager\(mgr\)/);
    },
    2 * MINUTES,
  );

  it(
    'the generated project builds, lints and passes its own tests',
    async () => {
      const output: Record<string, string> = {};
      for (const script of ['build', 'lint', 'test']) {
        const result = await sh(project, 'npm', ['run', script]);
        output[script] = String(result.all);
        expect(result.exitCode, `npm run ${script}\n${output[script]}`).toBe(0);
      }
      expect(existsSync(path.join(project, 'dist/main.js'))).toBe(true);
      // The scaffolded controller tests ran, against the packed runtime's FakeClient, and the integration
      // test against a real kube-apiserver (npm test provisions the envtest binaries before this test).
      expect(output['test']).toMatch(/guestbook\.controller\.test\.ts/);
      expect(output['test']).toMatch(/pod\.controller\.test\.ts/);
      expect(output['test']).toMatch(/guestbook\.webhook\.test\.ts/);
      expect(output['test']).toMatch(/guestbook\.conversion\.test\.ts/);
      expect(output['test']).toMatch(/✓ .*reconciles the sample: it becomes Available/);
      // The webhooks, called by kube-apiserver: defaulting, validation, conversion, and a Pod webhook.
      expect(output['test']).toMatch(/guestbook\.webhook\.integration\.test\.ts \(5 tests\)/);
      expect(output['test']).toMatch(/pod\.webhook\.integration\.test\.ts \(3 tests\)/);
      expect(output['test']).toMatch(/Tests +\d+ passed \(\d+\)/);
      expect(output['test']).not.toMatch(/skipping the envtest tests|skipped/);
      // create api generated the manifests, so the CI check of the generated project passes.
      const check = await sh(project, 'npx', ['kubesmith', 'manifests', '--check']);
      expect(check.exitCode, String(check.all)).toBe(0);
      expect(existsSync(path.join(project, 'config/crd/bases/webapp.example.com_guestbooks.yaml'))).toBe(
        true,
      );
    },
    5 * MINUTES,
  );

  it(
    'without envtest binaries, the integration tests are skipped with one clear line',
    async () => {
      const empty = path.join(work, 'no-binaries');
      await mkdir(empty, { recursive: true });
      const result = await sh(project, 'npm', ['test'], {
        env: { ...env, KUBEBUILDER_ASSETS: empty, XDG_CACHE_HOME: empty },
      });
      expect(result.exitCode, String(result.all)).toBe(0);
      expect(String(result.all)).toMatch(/skipping the envtest tests: no etcd and kube-apiserver found/);
      // The controller's and the two webhooks' integration tests.
      expect(String(result.all)).toMatch(/Test Files +\d+ passed \| 3 skipped/);
    },
    2 * MINUTES,
  );

  it(
    'a second create api for the same kind fails with a clear error',
    async () => {
      const again = await sh(project, 'npx', [
        'kubesmith',
        'create',
        'api',
        '--group',
        'webapp',
        '--version',
        'v1',
        '--kind',
        'Guestbook',
      ]);
      expect(again.exitCode).toBe(1);
      expect(again.stderr).toMatch(/^error: API resource already exists$/m);
    },
    MINUTES,
  );
});
