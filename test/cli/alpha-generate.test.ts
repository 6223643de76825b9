/**
 * `kubesmith alpha generate`: a project made again from its PROJECT is the project, byte for byte; a
 * PROJECT written before it recorded the owner and licence still works; a PROJECT a stranger edited is
 * refused with one line and nothing written; in place needs a clean git work tree and deletes nothing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findKubectl } from '../../src/shipping/kubectl.js';
import { removeTemp, run, snapshot, tempDir } from '../helpers/run.js';

const TIMEOUT = 240_000;
let dir: string;
let output: string;

beforeEach(async () => {
  dir = await tempDir('guestbook');
  output = path.join(path.dirname(dir), 'regenerated');
});
afterEach(async () => {
  await removeTemp(dir);
});

async function kubesmith(...args: string[]): Promise<void> {
  const result = await run(dir, ...args);
  expect(result.stderr.split('\n').find((line) => line.startsWith('error:'))).toBeUndefined();
  expect(result.code).toBe(0);
}

const webapp = ['--group', 'webapp', '--version'];

/** init, a CRD API, a deploy-image API, webhooks (defaulting, validation, a conversion spoke), a Pod controller. */
async function scaffold(init: string[] = ['--owner', 'The Guestbook Authors']): Promise<void> {
  await kubesmith('init', '--domain', 'example.com', '--skip-install', ...init);
  await kubesmith('create', 'api', ...webapp, 'v1', '--kind', 'Guestbook');
  await kubesmith(
    'create',
    'webhook',
    ...webapp,
    'v1',
    '--kind',
    'Guestbook',
    '--defaulting',
    '--programmatic-validation',
  );
  await kubesmith('create', 'api', ...webapp, 'v2', '--kind', 'Guestbook', '--controller=false');
  await kubesmith(
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
  await kubesmith(
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
    '--plural',
    'memcacheds',
  );
  await kubesmith('create', 'api', '--group', 'core', '--version', 'v1', '--kind', 'Pod', '--resource=false');
}

describe('alpha generate --output-dir', () => {
  it(
    'makes every file of the project again, byte for byte, the Helm chart and the autoupdate workflow included',
    async () => {
      await scaffold(['--owner', 'The Guestbook Authors', '--plugins', 'autoupdate']);
      const kubectl = await findKubectl(process.env).catch(() => undefined);
      if (kubectl) await kubesmith('helm-chart', '--img', 'registry.example.com/guestbook:v1');
      const project = await readFile(path.join(dir, 'PROJECT'), 'utf8');
      expect(project).toContain('owner: The Guestbook Authors\n');
      expect(project).toContain('license: apache2\n');
      expect(project).toContain('  autoupdate.kubesmith.dev/v1-alpha: {}\n');
      if (kubectl)
        expect(project).toContain(
          'helm.kubesmith.dev/v1-alpha:\n    image: registry.example.com/guestbook:v1\n',
        );

      const result = await run(dir, 'alpha', 'generate', '--output-dir', output, '--json');
      expect(result.stderr).not.toMatch(/error:/);
      expect(result.code).toBe(0);
      const steps = (JSON.parse(result.stdout) as { steps: string[] }).steps;
      expect(steps.map((step) => step.split(' --')[0])).toEqual([
        'kubesmith init',
        'kubesmith edit',
        'kubesmith create api',
        'kubesmith create webhook',
        'kubesmith create api',
        'kubesmith create webhook',
        'kubesmith create api',
        'kubesmith create api',
        ...(kubectl ? ['kubesmith helm-chart'] : []),
        'kubesmith manifests',
      ]);
      expect(steps[1]).toBe('kubesmith edit --plugins autoupdate');
      // No file may differ: not even the chart's record of its files, nor PROJECT.
      expect(await snapshot(output)).toEqual(await snapshot(dir));
    },
    TIMEOUT,
  );

  it(
    'replays --cert-provider self: the self-provided certificate, its RBAC and wiring, byte for byte',
    async () => {
      await scaffold(['--owner', 'The Guestbook Authors', '--cert-provider', 'self']);
      expect(await readFile(path.join(dir, 'PROJECT'), 'utf8')).toContain('certProvider: self\n');
      const result = await run(dir, 'alpha', 'generate', '--output-dir', output, '--json');
      expect(result.stderr).not.toMatch(/error:/);
      expect(result.code).toBe(0);
      const steps = (JSON.parse(result.stdout) as { steps: string[] }).steps;
      expect(steps[0]).toContain(' --cert-provider self');
      const made = await snapshot(output);
      expect(made['src/webhook-certificates.ts']).toContain(
        "conversionCrds: ['guestbooks.webapp.example.com'],",
      );
      expect(made).toEqual(await snapshot(dir));
    },
    TIMEOUT,
  );

  it(
    "reads a PROJECT of today's main (no owner, no licence, no plugin record) and makes the project again",
    async () => {
      await kubesmith('init', '--domain', 'example.com', '--skip-install');
      await kubesmith('create', 'api', ...webapp, 'v1', '--kind', 'Guestbook');
      await kubesmith(
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
      const file = path.join(dir, 'PROJECT');
      const today = (await readFile(file, 'utf8')).replace('license: apache2\n', '');
      await writeFile(file, today);

      expect((await run(dir, 'alpha', 'generate', '--output-dir', output)).code).toBe(0);
      const made = await snapshot(output);
      const before = await snapshot(dir);
      // The licence is read from the license header, and recorded from now on: PROJECT's one new line.
      expect(made['PROJECT']).toBe(
        today.replace('layout:\n  - typescript.kubesmith.dev/v1\n', '$&license: apache2\n'),
      );
      expect({ ...made, PROJECT: '' }).toEqual({ ...before, PROJECT: '' });
    },
    TIMEOUT,
  );
});

describe('alpha generate with an imported kind', () => {
  it(
    'imports the CRD again from the copy the project keeps, then its controller and webhooks: byte for byte',
    async () => {
      const crd = path.resolve(
        import.meta.dirname,
        '../fixtures/import/controller-gen/tls.example.com_certificates.yaml',
      );
      const certificate = ['--group', 'tls.example.com', '--version', 'v1', '--kind', 'Certificate'];
      await kubesmith('init', '--domain', 'example.com', '--skip-install');
      await kubesmith('import', 'crd', crd);
      await kubesmith('create', 'api', ...certificate, '--resource=false', '--controller');
      await kubesmith('create', 'webhook', ...certificate, '--programmatic-validation');

      const result = await run(dir, 'alpha', 'generate', '--output-dir', output, '--json');
      expect(result.stderr).not.toMatch(/error:/);
      expect(result.code).toBe(0);
      expect((JSON.parse(result.stdout) as { steps: string[] }).steps).toEqual([
        expect.stringMatching(/^kubesmith init /),
        'kubesmith import crd config/crd/external/tls.example.com_certificates.yaml --version v1',
        expect.stringMatching(/^kubesmith create api --group tls\.example\.com .*--controller$/),
        expect.stringMatching(/^kubesmith create webhook --group tls\.example\.com .*--validation$/),
        'kubesmith manifests',
      ]);
      expect(await snapshot(output)).toEqual(await snapshot(dir));
    },
    TIMEOUT,
  );
});

/** Runs alpha generate and expects a refusal: exit 1, one error line, a hint, nothing written anywhere. */
async function expectRefused(args: string[], message: RegExp): Promise<void> {
  const before = await snapshot(dir);
  const result = await run(dir, 'alpha', 'generate', ...args);
  const lines = result.stderr.trim().split('\n');
  expect(lines[0]).toMatch(message);
  expect(lines).toHaveLength(2);
  expect(lines[1]).toMatch(/^hint: /);
  expect(result.code).toBe(1);
  expect(await snapshot(dir)).toEqual(before);
}

describe('alpha generate refuses', () => {
  it(
    'a directory that is not a project, and an output directory that is not empty',
    async () => {
      await expectRefused(['--input-dir', '.', '--output-dir', output], /^error: not a kubesmith project/);
      expect(existsSync(output)).toBe(false);
      await kubesmith('init', '--domain', 'example.com', '--skip-install');
      await mkdir(output);
      await writeFile(path.join(output, 'keep.txt'), 'mine');
      await expectRefused(['--output-dir', output], /^error: --output-dir .* is not empty$/);
      expect(await snapshot(output)).toEqual({ 'keep.txt': 'mine' });
    },
    TIMEOUT,
  );

  const edits: [string, (project: string) => string, RegExp][] = [
    ['a PROJECT that does not parse', (p) => `${p}\n  : [`, /PROJECT is not valid YAML/],
    [
      'an unknown plugin',
      (p) => `${p}plugins:\n  go.kubebuilder.io/v4: {}\n`,
      /the plugin "go.kubebuilder.io\/v4"/,
    ],
    ['an unknown key', (p) => `${p}repo: github.com/x/y\n`, /the key "repo"/],
    [
      'an unknown resource key',
      (p) => p.replace('    kind: Guestbook\n', '$&    generatedBy: someone\n'),
      /the key "generatedBy" in resource 1/,
    ],
    [
      // kubebuilder's `external: true` is an imported kind's: the project owns no API for it.
      'a resource both external and an API of the project',
      (p) => p.replace('    kind: Guestbook\n', '$&    external: true\n'),
      /resource 1 \(webapp\/v1 "Guestbook"\): api: an external kind has no API of the project/,
    ],
    [
      'an owner with a line break',
      (p) => `${p}owner: "a\\n/* +kubebuilder:rbac */"\n`,
      /owner: .*line break/,
    ],
    [
      'a licence no flag gives',
      (p) => p.replace('license: apache2', 'license: gpl3'),
      /license "gpl3" is not one of/,
    ],
    [
      'a cliVersion that is no version',
      (p) => p.replace('cliVersion: 0.1.0', 'cliVersion: "0.1.0 && rm -rf ~"'),
      /is not a semver version/,
    ],
    [
      'a deploy-image option the flag refuses',
      (p) =>
        `${p}plugins:\n  deploy-image.kubesmith.dev/v1-alpha:\n    resources:\n      - {group: webapp, version: v1, kind: Guestbook, domain: example.com, options: {image: "nginx:1\\n{{ .Values }}", serviceType: ClusterIP}}\n`,
      /plugins\.deploy-image\.kubesmith\.dev\/v1-alpha\.resources\.0: --image .* is not a valid image reference/,
    ],
    [
      'a deploy-image port out of range',
      (p) =>
        `${p}plugins:\n  deploy-image.kubesmith.dev/v1-alpha:\n    resources:\n      - {group: webapp, version: v1, kind: Guestbook, domain: example.com, options: {image: nginx, containerPort: "70000"}}\n`,
      /--image-container-port "70000" is not a port/,
    ],
    [
      'a chart directory outside the project',
      (p) => `${p}plugins:\n  helm.kubesmith.dev/v1-alpha: {output: ../../outside}\n`,
      /output "..\/..\/outside" is not a directory below the project/,
    ],
    [
      'an autoupdate record with options',
      (p) => `${p}plugins:\n  autoupdate.kubesmith.dev/v1-alpha: {cron: "* * * * *"}\n`,
      /plugins\.autoupdate\.kubesmith\.dev\/v1-alpha: takes no options/,
    ],
    [
      'a chart image with template syntax',
      (p) => `${p}plugins:\n  helm.kubesmith.dev/v1-alpha: {image: "{{ .Release.Name }}"}\n`,
      /image "\{\{ .Release.Name \}\}" is not a valid image reference/,
    ],
    [
      'a conversion spoke PROJECT does not have (refused by the step, everything written rolled back)',
      (p) =>
        p.replace(
          '    version: v1\n',
          '    version: v1\n    webhooks:\n      conversion: true\n      spoke: [v9]\n      webhookVersion: v1\n',
        ),
      /^error: kubesmith create webhook .*: .*v9.*nothing was written$/,
    ],
  ];
  it.each(edits)(
    '%s: one line, a hint, nothing written',
    async (_name, edit, message) => {
      await kubesmith('init', '--domain', 'example.com', '--skip-install');
      await kubesmith('create', 'api', ...webapp, 'v1', '--kind', 'Guestbook');
      const file = path.join(dir, 'PROJECT');
      await writeFile(file, edit(await readFile(file, 'utf8')));
      // Below a directory that does not exist either: neither is left behind.
      const nested = path.join(path.dirname(dir), 'new', 'regenerated');
      await expectRefused(['--output-dir', nested], message);
      expect(existsSync(path.dirname(nested))).toBe(false);
    },
    TIMEOUT,
  );
});

describe('alpha generate in place (no --output-dir)', () => {
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
      cwd: dir,
      stdio: 'pipe',
      encoding: 'utf8',
    });

  it(
    'is refused outside git and in a dirty work tree; in a clean one it overwrites scaffolded files and deletes none',
    async () => {
      await kubesmith('init', '--domain', 'example.com', '--skip-install');
      await kubesmith('create', 'api', ...webapp, 'v1', '--kind', 'Guestbook');
      await expectRefused([], /is not in a git work tree/);

      git('init', '-q');
      git('add', '-A');
      git('commit', '-qm', 'scaffold');
      const controller = path.join(dir, 'src/controllers/guestbook.controller.ts');
      const scaffolded = await readFile(controller, 'utf8');
      await writeFile(controller, `${scaffolded}// my reconcile logic\n`);
      await expectRefused([], /uncommitted change.*guestbook\.controller\.ts.*overwrites files/);

      await writeFile(path.join(dir, 'NOTES.md'), 'my own file\n');
      git('add', '-A');
      git('commit', '-qm', 'my work');
      const result = await run(dir, 'alpha', 'generate');
      expect(result.code).toBe(0);
      expect(await readFile(controller, 'utf8')).toBe(scaffolded);
      expect(await readFile(path.join(dir, 'NOTES.md'), 'utf8')).toBe('my own file\n');
      expect(git('status', '--porcelain').trim()).toBe('M src/controllers/guestbook.controller.ts');
    },
    TIMEOUT,
  );
});
