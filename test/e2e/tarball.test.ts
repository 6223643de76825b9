/**
 * kubesmith the way the registry will serve it: `npm pack`, then `npx --package <tarball> kubesmith init` in
 * a new directory, with no KUBESMITH_* variable. This version is not on the registry, so the project must
 * carry both packages in .kubesmith/; then its install, tests and the Dockerfile's build steps must work.
 * The project has a deploy-image API (DemoApplication, `create api --image`) and a plain one (Guestbook),
 * whose tests run in envtest's cluster mode: the issue-11 walkthrough from the packed CLI.
 */
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repo, Shell, userEnv } from './readme.js';

const MINUTES = 60_000;

let work: string;
let tarball: string;
let project: string;
let shell: Shell;

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-e2e-tarball-'));
  // `npm test` has just built dist/ (and packed the runtime into dist/vendor): no second build.
  const packed = await execa(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', work, '--loglevel', 'error'],
    { cwd: repo, stdin: 'ignore' },
  );
  const [info] = JSON.parse(packed.stdout) as { filename: string }[];
  tarball = path.join(work, info!.filename);
  project = path.join(work, 'guestbook');
  await mkdir(project);
  shell = new Shell(project, userEnv(path.join(work, 'npm-global')));
}, 2 * MINUTES);

afterAll(async () => {
  if (work && !process.env['KUBESMITH_KEEP_E2E']) await rm(work, { recursive: true, force: true });
});

describe('the packed CLI through npx', () => {
  it(
    'init makes a self-contained project, which installs, builds and passes its tests',
    async () => {
      const init = await shell.run(
        `npx --yes --package ${tarball} kubesmith init --domain example.com`,
        8 * MINUTES,
      );
      expect(init.output).toContain(
        'kubesmith 0.1.0 is not on the npm registry: the project installs kubesmith-runtime-0.1.0.tgz and kubesmith-0.1.0.tgz from .kubesmith/ (commit it with the project)',
      );
      expect((await readdir(path.join(project, '.kubesmith'))).sort()).toEqual([
        'kubesmith-0.1.0.tgz',
        'kubesmith-runtime-0.1.0.tgz',
      ]);
      expect(existsSync(path.join(project, 'node_modules/@kubesmith/runtime/package.json'))).toBe(true);

      // The DemoApplication walkthrough: the deploy-image scaffold, whose tests run in envtest's cluster mode
      // (controllers, scheduler, KWOK); then a plain API beside it.
      await shell.run(
        'npx kubesmith create api --group demo --version v1 --kind DemoApplication --image nginx:1.27 --image-container-port 80',
        2 * MINUTES,
      );
      await shell.run('npx kubesmith create api --group demo --version v1 --kind Guestbook', 2 * MINUTES);
      await shell.run('npm run build && npm run lint', 3 * MINUTES);
      const test = (await shell.run('npm test', 5 * MINUTES)).output;
      // Both integration files ran and passed on the run's one envtest, in cluster mode (vitest names only
      // the slow tests, and a skipped file shows ↓).
      expect(test).toMatch(/✓ test\/controllers\/guestbook\.controller\.integration\.test\.ts \(1 test\)/);
      expect(test).toMatch(
        /✓ test\/controllers\/demoapplication\.controller\.integration\.test\.ts \(4 tests\)/,
      );
      expect(test).not.toMatch(/skipping the envtest tests|skipped/);
      console.log(`packed CLI through npx, seconds per step:\n${shell.timings()}`);
    },
    20 * MINUTES,
  );

  it(
    "the Dockerfile's build stage works on its build context, without the registry having kubesmith",
    async () => {
      expect(existsSync(path.join(project, 'package-lock.json')), 'init ran').toBe(true);
      // No Docker engine here: run the builder stage's COPY and RUN instructions in a fresh directory.
      const dockerfile = await readFile(path.join(project, 'Dockerfile'), 'utf8');
      // The stages, each from its FROM line: the first one is the builder.
      const builder = dockerfile.split(/^(?=FROM )/m).find((stage) => stage.startsWith('FROM '))!;
      expect(builder).toMatch(/ AS builder\n/);
      const context = path.join(work, 'image');
      await mkdir(context);
      const steps: string[] = [];
      for (const [, instruction, argument] of builder.matchAll(/^(COPY|RUN) (.+)$/gm)) {
        if (instruction === 'COPY') {
          const parts = argument!.split(/\s+/);
          const target = parts.pop()!;
          for (const source of parts) {
            const into = target.endsWith('/') && !source.endsWith('/') ? path.join(target, source) : target;
            await cp(path.join(project, source), path.join(context, into), { recursive: true });
          }
        } else {
          steps.push(argument!);
          const result = await execa('bash', ['-eo', 'pipefail', '-c', argument!], {
            cwd: context,
            env: userEnv(path.join(work, 'npm-global')),
            extendEnv: false,
            all: true,
            reject: false,
            stdin: 'ignore',
          });
          expect(result.exitCode, `RUN ${argument}\n${String(result.all)}`).toBe(0);
        }
      }
      expect(steps).toEqual([
        'npm ci --no-audit --no-fund',
        'npm run build && npm prune --omit=dev --omit=optional',
      ]);
      expect(existsSync(path.join(context, 'dist/main.js'))).toBe(true);
      expect(existsSync(path.join(context, 'node_modules/@kubesmith/runtime/dist/index.js'))).toBe(true);
      // The CLI is a dev dependency: not in the image.
      expect(existsSync(path.join(context, 'node_modules/kubesmith'))).toBe(false);
      // Nor client-node (~75 MiB with its own): the built code imports its types only, the runtime its
      // values only for legacy auth providers (an optional peer).
      expect(existsSync(path.join(context, 'node_modules/@kubernetes/client-node'))).toBe(false);
    },
    5 * MINUTES,
  );
});
