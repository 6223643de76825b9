/**
 * `--cert-provider self` (init, edit): a project whose manager provides its own webhook serving certificate
 * has no cert-manager piece in config/, the provider's module and its RBAC by name, and PROJECT records it
 * (so `alpha generate` makes it again). `edit --cert-provider` turns a project into what `init
 * --cert-provider` and the same commands make, both ways, byte for byte. cert-manager stays the default
 * (the golden project, scripts/golden.mjs --check, is unchanged).
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findKubectl } from '../../src/shipping/kubectl.js';
import { read, removeTemp, run, snapshot, tempDir } from '../helpers/run.js';

let dir: string;
let other: string;
beforeEach(async () => {
  dir = await tempDir('fleet');
  other = path.join(path.dirname(dir), 'other', 'fleet');
  await mkdir(other, { recursive: true });
});
afterEach(async () => {
  await removeTemp(dir);
  await removeTemp(path.dirname(other));
});

const commands = [
  ['create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook'],
  ['create', 'api', '--group', 'webapp', '--version', 'v2', '--kind', 'Guestbook', '--controller=false'],
  [
    'create',
    'webhook',
    ...['--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook'],
    ...['--defaulting', '--programmatic-validation', '--conversion', '--spoke', 'v2'],
  ],
];

async function make(target: string, init: string[]): Promise<void> {
  const made = await run(target, 'init', '--domain', 'example.com', '--skip-install', ...init);
  expect(made.code, made.stderr).toBe(0);
  for (const command of commands) {
    const result = await run(target, ...command);
    expect(result.code, result.stderr).toBe(0);
  }
}

describe('--cert-provider self', () => {
  it('scaffolds the manager as the provider: no cert-manager piece, RBAC by name, PROJECT records it', async () => {
    await make(dir, ['--cert-provider', 'self']);
    expect(await read(dir, 'PROJECT')).toMatch(/^certProvider: self$/m);
    expect(existsSync(path.join(dir, 'config/certmanager'))).toBe(false);
    const files = await snapshot(dir);
    const config = Object.entries(files).filter(([file]) => file.startsWith('config/'));
    expect(config.filter(([, text]) => /cert-manager\.io|certmanager/.test(text)).map(([f]) => f)).toEqual(
      [],
    );
    expect(await read(dir, 'config/default/kustomization.yaml')).toMatch(/^- \.\.\/webhook\n# \+kubesmith/m);
    const patch = await read(dir, 'config/default/manager_webhook_patch.yaml');
    expect(patch).toContain('emptyDir:');
    expect(patch).toContain('fieldPath: metadata.namespace');
    expect(patch).not.toContain('secretName');

    // The RBAC: the Secret by name (create cannot be restricted by name), each caBundle target by name.
    const role = await read(dir, 'config/rbac/webhook_certificates_role.yaml');
    expect(role).toContain(
      '- apiGroups:\n  - ""\n  resourceNames:\n  - "fleet-webhook-server-cert"\n  resources:\n  - secrets\n  verbs:\n  - get\n  - update\n',
    );
    expect(role).toContain(
      '  resourceNames:\n  - "fleet-mutating-webhook-configuration"\n  resources:\n  - mutatingwebhookconfigurations\n  verbs:\n  - get\n  - patch\n',
    );
    expect(role).toContain(
      '  resourceNames:\n  - "fleet-validating-webhook-configuration"\n  resources:\n  - validatingwebhookconfigurations\n  verbs:\n  - get\n  - patch\n',
    );
    expect(role).toContain(
      '  resourceNames:\n  - "guestbooks.webapp.example.com"\n  resources:\n  - customresourcedefinitions\n  verbs:\n  - get\n  - patch\n',
    );
    expect(role).not.toMatch(/verbs:\n( {2}- \w+\n)* {2}- (list|watch|delete|\*)\n/);
    expect(await read(dir, 'config/rbac/kustomization.yaml')).toContain('- webhook_certificates_role.yaml\n');

    const main = await read(dir, 'src/main.ts');
    expect(main).toContain('client: { disableCacheFor: SELF_SIGNED_CERTIFICATE_KINDS },');
    expect(main).toContain(
      "if (process.env['ENABLE_WEBHOOKS'] !== 'false') await provideWebhookCertificates(mgr, settings);\n// +kubesmith:scaffold:builder",
    );
    const provider = await read(dir, 'src/webhook-certificates.ts');
    expect(provider).toContain("secretName: name('WEBHOOK_CERT_SECRET', 'fleet-webhook-server-cert'),");
    expect(provider).toContain("serviceName: name('WEBHOOK_SERVICE', 'fleet-webhook-service'),");
    expect(patch).toContain('- name: WEBHOOK_CERT_SECRET\n          value: fleet-webhook-server-cert\n');
    expect(provider).toContain("conversionCrds: ['guestbooks.webapp.example.com'],");

    // The Helm chart: no cert-manager template; the names the manager is given follow the release's.
    if (await findKubectl(process.env).catch(() => undefined)) {
      const chart = await run(dir, 'helm-chart', '--img', 'registry.example.com/fleet:v1');
      expect(chart.code, chart.stderr).toBe(0);
      const templates = Object.entries(await snapshot(path.join(dir, 'dist/chart')));
      expect(templates.filter(([, text]) => /cert-manager/.test(text)).map(([f]) => f)).toEqual([]);
      expect(await read(dir, 'dist/chart/templates/manager/manager.yaml')).toContain(
        '- name: WEBHOOK_SERVICE\n              value: "{{ include "fleet.fullname" . }}-webhook-service"\n',
      );
      expect(await read(dir, 'dist/chart/templates/rbac/webhook-certificates-cabundle-role.yaml')).toContain(
        '- "{{ include "fleet.fullname" . }}-mutating-webhook-configuration"\n',
      );
    }
  }, 240_000);

  it('edit --cert-provider self, then cert-manager: each time the project init and the same commands make', async () => {
    await make(dir, []);
    await make(other, ['--cert-provider', 'self']);
    const withCertManager = await snapshot(dir);
    const selfProvided = await snapshot(other);

    const dryRun = await run(dir, 'edit', '--cert-provider', 'self', '--dry-run');
    expect(dryRun.code, dryRun.stderr).toBe(0);
    expect(await snapshot(dir)).toEqual(withCertManager);

    const toSelf = await run(dir, 'edit', '--cert-provider', 'self');
    expect(toSelf.stderr).not.toMatch(/error:|warning:/);
    expect(toSelf.code).toBe(0);
    expect(toSelf.stderr).toMatch(/^remove +config\/certmanager\/certificate\.yaml$/m);
    expect(await snapshot(dir)).toEqual(selfProvided);
    expect((await run(dir, 'edit', '--cert-provider', 'self')).stderr).toMatch(/self already: nothing to do/);

    const back = await run(dir, 'edit', '--cert-provider', 'cert-manager');
    expect(back.stderr).not.toMatch(/error:|warning:/);
    expect(back.code).toBe(0);
    expect(await snapshot(dir)).toEqual(withCertManager);
  }, 300_000);

  it('a project without webhooks records the provider; its first webhook is then self-provided', async () => {
    expect((await run(dir, 'init', '--domain', 'example.com', '--skip-install')).code).toBe(0);
    const edited = await run(dir, 'edit', '--cert-provider', 'self');
    expect(edited.code, edited.stderr).toBe(0);
    expect(await read(dir, 'PROJECT')).toMatch(/^certProvider: self$/m);
    // The manager reads the provider's kinds from the API server: what init --cert-provider self writes.
    const self = await run(
      other,
      'init',
      '--domain',
      'example.com',
      '--skip-install',
      '--cert-provider',
      'self',
    );
    expect(self.code, self.stderr).toBe(0);
    expect(await read(dir, 'src/main.ts')).toBe(await read(other, 'src/main.ts'));
    expect(await read(dir, 'PROJECT')).toBe(await read(other, 'PROJECT'));
    for (const command of commands) expect((await run(dir, ...command)).code).toBe(0);
    expect(existsSync(path.join(dir, 'config/certmanager'))).toBe(false);
    expect(await read(dir, 'src/webhook-certificates.ts')).toContain('provideWebhookCertificates');
  }, 120_000);

  it('refuses an unknown provider, on the command line and in PROJECT, and writes nothing', async () => {
    const bad = await run(
      dir,
      'init',
      '--domain',
      'example.com',
      '--skip-install',
      '--cert-provider',
      'vault',
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--cert-provider <provider>' argument 'vault' is invalid/);
    expect(existsSync(path.join(dir, 'PROJECT'))).toBe(false);

    expect((await run(dir, 'init', '--domain', 'example.com', '--skip-install')).code).toBe(0);
    const project = path.join(dir, 'PROJECT');
    await writeFile(project, `${await read(dir, 'PROJECT')}certProvider: vault\n`);
    const before = await snapshot(dir);
    const refused = await run(dir, ...commands[0]!);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^error: \S+\/PROJECT:\d+:\d+: certProvider: "vault" is not one of cert-manager, self\nhint: give the value of `init --cert-provider`: cert-manager or self\n$/,
    );
    expect(await snapshot(dir)).toEqual(before);
  }, 60_000);
});
