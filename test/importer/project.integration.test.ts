/**
 * Issue 25's "done when" for a project: it imports a CRD (controller-gen's, from our own Go types in
 * test/fixtures/import/go/api/tls), scaffolds a controller and webhooks for the imported kind, and runs
 * its tests: the unit tests on FakeClient and the integration tests on envtest, which installs the CRD's
 * copy from config/crd/external: the controller (cached client, watch) reconciles a Certificate created on
 * the API server, and the API server calls the webhooks. Beside them, the project's own use of the kind
 * (test/fixtures/external-project): a controller that creates Certificates and owns() them. The generated project typechecks and its manifests are up to date. It resolves its
 * dependencies from this repository's node_modules (the built runtime); the envtest binaries are
 * ~/.cache/kubesmith/envtest's.
 */
import { copyFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTemp, run, tempDir } from '../helpers/run.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const CERTIFICATES = path.join(REPO, 'test/fixtures/import/controller-gen/tls.example.com_certificates.yaml');
let dir: string;

beforeAll(async () => {
  dir = await tempDir('certs');
  expect((await run(dir, 'init', '--domain', 'example.com', '--skip-install')).code).toBe(0);
  await symlink(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
}, 60_000);

afterAll(async () => {
  if (dir) await removeTemp(dir);
});

describe('a project with an imported kind', () => {
  it('imports the CRD, scaffolds a controller for it, and its tests pass on envtest', async () => {
    expect((await run(dir, 'import', 'crd', CERTIFICATES)).code).toBe(0);
    const created = await run(
      dir,
      ...['create', 'api', '--group', 'tls.example.com', '--version', 'v1', '--kind', 'Certificate'],
      ...['--resource=false', '--controller'],
    );
    expect(created.stderr).not.toMatch(/^(error|warning)/m);
    expect(created.code).toBe(0);
    const webhook = await run(
      dir,
      ...['create', 'webhook', '--group', 'tls.example.com', '--version', 'v1', '--kind', 'Certificate'],
      ...['--defaulting', '--programmatic-validation'],
    );
    expect(webhook.stderr).not.toMatch(/^(error|warning)/m);
    expect(webhook.code).toBe(0);
    expect((await run(dir, 'manifests', '--check')).code).toBe(0);
    // The project's own code with the imported kind: a controller that creates Certificates and owns them.
    await copyFile(
      path.join(REPO, 'test/fixtures/external-project/tls.integration.test.ts'),
      path.join(dir, 'test/controllers/tls.integration.test.ts'),
    );

    const node = (script: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
      execa(process.execPath, [path.join(REPO, 'node_modules', script), ...args], {
        cwd: dir,
        reject: false,
        all: true,
        timeout: 240_000,
        env: { ...env },
      });
    const tsc = await node('typescript/bin/tsc', ['--noEmit', '-p', '.']);
    expect(tsc.exitCode, tsc.all).toBe(0);
    // CI=true: missing envtest binaries fail the run instead of skipping the integration test.
    const tests = await node('vitest/vitest.mjs', ['run'], { CI: 'true' });
    expect(tests.exitCode, tests.all).toBe(0);
    const output = stripVTControlCharacters(tests.all);
    expect(output).toMatch(/✓ test\/controllers\/certificate\.controller\.integration\.test\.ts \(1 test\)/);
    expect(output).toMatch(/✓ test\/controllers\/certificate\.controller\.test\.ts \(2 tests\)/);
    // The API server calls the webhooks of config/webhook/manifests.yaml for the imported kind.
    expect(output).toMatch(/✓ test\/webhooks\/certificate\.webhook\.integration\.test\.ts \(4 tests\)/);
    expect(output).toMatch(/✓ test\/controllers\/tls\.integration\.test\.ts \(1 test\)/);
    expect(output).not.toMatch(/skipped/);
  }, 300_000);
});
