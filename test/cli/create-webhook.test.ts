import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { read, removeTemp, run, snapshot, tempDir } from '../helpers/run.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir('guestbook');
  expect((await run(dir, 'init', '--domain', 'example.com', '--skip-install')).code).toBe(0);
  expect(
    (await run(dir, 'create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook')).code,
  ).toBe(0);
});
afterEach(async () => {
  await removeTemp(dir);
});

const guestbook = ['create', 'webhook', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook'];
const WEBHOOK = 'src/api/webapp/v1/guestbook.webhook.ts';

function count(text: string, fragment: string): number {
  return text.split(fragment).length - 1;
}

async function webhookConfigurations(): Promise<Record<string, unknown>[]> {
  return parseAllDocuments(await read(dir, 'config/webhook/manifests.yaml')).map(
    (doc) => doc.toJS() as Record<string, unknown>,
  );
}

describe('kubesmith create webhook', () => {
  it('adds defaulting and validation webhooks with their markers, wiring and PROJECT entry', async () => {
    const result = await run(dir, ...guestbook, '--defaulting', '--programmatic-validation');
    expect(result.stderr).not.toMatch(/^(error|warning)/m);
    expect(result.code).toBe(0);
    const webhook = await read(dir, WEBHOOK);
    expect(webhook).toMatch(
      /\+kubebuilder:webhook:path=\/mutate-webapp-example-com-v1-guestbook,mutating=true,.*sideEffects=None,groups=webapp\.example\.com,resources=guestbooks,.*name=mguestbook-v1\.kb\.io/,
    );
    expect(webhook).toMatch(
      /\+kubebuilder:webhook:path=\/validate-webapp-example-com-v1-guestbook,mutating=false,/,
    );
    expect(webhook).toMatch(/export function defaultGuestbook\(guestbook: Guestbook\): void/);
    expect(webhook).toMatch(/export const guestbookValidator = \{/);
    expect(existsSync(path.join(dir, 'test/api/webapp/v1/guestbook.webhook.test.ts'))).toBe(true);
    const main = await read(dir, 'src/main.ts');
    expect(main).toMatch(
      /import \{ setupGuestbookWebhookWithManager \} from '\.\/api\/webapp\/v1\/guestbook\.webhook\.js';/,
    );
    expect(main).toMatch(
      /if \(process\.env\['ENABLE_WEBHOOKS'\] !== 'false'\) setupGuestbookWebhookWithManager\(mgr\);/,
    );
    const kustomization = parse(await read(dir, 'config/default/kustomization.yaml')) as {
      resources: string[];
      patches: { path: string }[];
    };
    expect(kustomization.resources).toEqual(expect.arrayContaining(['../webhook', '../certmanager']));
    expect(kustomization.patches).toEqual([{ path: 'manager_webhook_patch.yaml' }]);
    for (const file of ['config/webhook/service.yaml', 'config/certmanager/certificate.yaml']) {
      expect(existsSync(path.join(dir, file)), file).toBe(true);
    }
    expect(parse(await read(dir, 'PROJECT'))).toMatchObject({
      resources: [
        { kind: 'Guestbook', webhooks: { defaulting: true, validation: true, webhookVersion: 'v1' } },
      ],
    });
    // The manifests are generated at once from the markers.
    const configurations = await webhookConfigurations();
    expect(configurations.map((c) => c['kind'])).toEqual([
      'MutatingWebhookConfiguration',
      'ValidatingWebhookConfiguration',
    ]);
  });

  it('adds a second webhook type to the existing file without repeating anything', async () => {
    expect((await run(dir, ...guestbook, '--defaulting')).code).toBe(0);
    const validation = await run(dir, ...guestbook, '--programmatic-validation');
    expect(validation.code).toBe(0);
    const webhook = await read(dir, WEBHOOK);
    expect(count(webhook, 'export function defaultGuestbook')).toBe(1);
    expect(count(webhook, 'export const guestbookValidator')).toBe(1);
    expect(count(webhook, 'mgr.webhookServer.register(')).toBe(2);
    expect(count(webhook, 'import * as runtime')).toBe(1);
    expect(count(await read(dir, 'src/main.ts'), 'setupGuestbookWebhookWithManager(mgr)')).toBe(1);
    expect(count(await read(dir, 'config/default/kustomization.yaml'), '- ../webhook')).toBe(1);
    expect(parse(await read(dir, 'PROJECT'))).toMatchObject({
      resources: [{ webhooks: { defaulting: true, validation: true } }],
    });
  });

  it('scaffolds a webhook for a built-in kind, with the core group written ""', async () => {
    const result = await run(
      dir,
      'create',
      'webhook',
      '--group',
      'core',
      '--version',
      'v1',
      '--kind',
      'Pod',
      '--programmatic-validation',
    );
    expect(result.code).toBe(0);
    const webhook = await read(dir, 'src/webhooks/pod.webhook.ts');
    expect(webhook).toMatch(/import type \{ V1Pod \} from '@kubernetes\/client-node';/);
    expect(webhook).toMatch(/path=\/validate--v1-pod,mutating=false,.*groups="",resources=pods/);
    const [validating] = await webhookConfigurations();
    expect(validating).toMatchObject({
      kind: 'ValidatingWebhookConfiguration',
      webhooks: [{ name: 'vpod-v1.kb.io', rules: [{ apiGroups: [''], resources: ['pods'] }] }],
    });
  });

  // A webhook of no type, or spokes without a conversion, is a usage error (exit 2), as the README says.
  it.each([
    [
      [],
      /^error: kubesmith create webhook requires at least one of --defaulting, --programmatic-validation and --conversion\nhint: add --defaulting/m,
    ],
    [
      ['--defaulting', '--spoke', 'v2'],
      /^error: --spoke names the versions of a conversion webhook\nhint: /m,
    ],
  ])('refuses %j as a usage error (exit 2) and writes nothing', async (flags, message) => {
    const before = await snapshot(dir);
    const result = await run(dir, ...guestbook, ...flags);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(2);
    expect(await snapshot(dir)).toEqual(before);
  });

  it.each([
    [['--conversion'], /^error: --conversion needs --spoke: the versions that convert to and from v1$/m],
    [
      ['--conversion', '--spoke', 'v2'],
      /^error: invalid spoke version "v2": Guestbook has no version v2 in PROJECT\nhint: create it first: kubesmith create api --group webapp --version v2 --kind Guestbook --controller=false$/m,
    ],
    [['--conversion', '--spoke', 'v1'], /^error: invalid spoke version "v1": v1 is the hub$/m],
  ])('refuses %j and writes nothing', async (flags, message) => {
    const before = await snapshot(dir);
    const result = await run(dir, ...guestbook, ...flags);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(await snapshot(dir)).toEqual(before);
  });

  it('refuses an unknown kind and a webhook type that exists, and writes nothing', async () => {
    const unknown = await run(
      dir,
      'create',
      'webhook',
      '--group',
      'webapp',
      '--version',
      'v1',
      '--kind',
      'Nope',
      '--defaulting',
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error: API resource Nope \(webapp\/v1\) does not exist in PROJECT$/m);
    expect(unknown.stderr).toMatch(/^hint: create it first with `kubesmith create api`/m);
    expect((await run(dir, ...guestbook, '--defaulting')).code).toBe(0);
    const before = await snapshot(dir);
    const again = await run(dir, ...guestbook, '--defaulting');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: defaulting webhook for Guestbook \(webapp\/v1\) already exists$/m);
    expect(again.stderr).toMatch(/^hint: .*--force/m);
    expect(await snapshot(dir)).toEqual(before);
  });

  it("uses the plural recorded by create api --plural in the webhook's rules", async () => {
    const api = ['--group', 'webapp', '--version', 'v1', '--kind', 'Octopus'];
    expect((await run(dir, 'create', 'api', ...api, '--plural', 'octopodes')).code).toBe(0);
    expect((await run(dir, 'create', 'webhook', ...api, '--programmatic-validation')).code).toBe(0);
    expect(await read(dir, 'src/api/webapp/v1/octopus.webhook.ts')).toMatch(/resources=octopodes,/);
  });

  it('--dry-run prints the plan and writes nothing', async () => {
    const before = await snapshot(dir);
    const result = await run(dir, ...guestbook, '--defaulting', '--dry-run');
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^create\s+src\/api\/webapp\/v1\/guestbook\.webhook\.ts$/m);
    expect(result.stderr).toMatch(/^update\s+src\/main\.ts$/m);
    expect(await snapshot(dir)).toEqual(before);
  });

  describe('--conversion', () => {
    const v2 = ['create', 'api', '--group', 'webapp', '--version', 'v2', '--kind', 'Guestbook'];

    beforeEach(async () => {
      expect((await run(dir, ...v2, '--controller=false')).code).toBe(0);
    });

    it('makes v1 the hub: storage version, a conversion per spoke, registration, CRD patch, tests', async () => {
      const result = await run(dir, ...guestbook, '--conversion', '--spoke', 'v2');
      expect(result.stderr).not.toMatch(/^(error|warning)/m);
      expect(result.code).toBe(0);
      expect(await read(dir, 'src/api/webapp/v1/guestbook.types.ts')).toMatch(
        /\* \+kubebuilder:subresource:status\n \* \+kubebuilder:storageversion\n \*\/\nexport interface Guestbook \{/,
      );
      expect(await read(dir, 'src/api/webapp/v2/guestbook.types.ts')).not.toMatch(/storageversion/);
      const conversion = await read(dir, 'src/api/webapp/v2/guestbook.conversion.ts');
      expect(conversion).toMatch(/export function convertTo\(src: Guestbook\): GuestbookHub \{/);
      expect(conversion).toMatch(/export function convertFrom\(hub: GuestbookHub\): Guestbook \{/);
      expect(conversion).toMatch(
        /import type \{ Guestbook as GuestbookHub \} from '\.\.\/v1\/guestbook\.types\.js';/,
      );
      const webhook = await read(dir, WEBHOOK);
      expect(webhook).toMatch(
        /import \{ guestbookV2Conversion \} from '\.\.\/v2\/guestbook\.conversion\.js';/,
      );
      expect(webhook).toMatch(/^import \{ registerConversion \} from '@kubesmith\/runtime';$/m);
      expect(webhook).toMatch(
        /registerConversion\(mgr\.webhookServer, GuestbookKind, \[guestbookV2Conversion\]\);/,
      );
      expect(existsSync(path.join(dir, 'test/api/webapp/v2/guestbook.conversion.test.ts'))).toBe(true);
      const integration = await read(dir, 'test/api/webapp/v1/guestbook.webhook.integration.test.ts');
      expect(integration).toMatch(/conversionCrdNames: \[\s*'guestbooks\.webapp\.example\.com',/);
      expect(integration).toMatch(/converts Guestbook v2 through the webhook/);
      const crdKustomization = parse(await read(dir, 'config/crd/kustomization.yaml')) as Record<
        string,
        unknown
      >;
      expect(crdKustomization['patches']).toEqual([{ path: 'patches/webhook_in_guestbooks.yaml' }]);
      expect(crdKustomization['configurations']).toEqual(['kustomizeconfig.yaml']);
      expect(parse(await read(dir, 'config/crd/patches/webhook_in_guestbooks.yaml'))).toMatchObject({
        metadata: { name: 'guestbooks.webapp.example.com' },
        spec: {
          conversion: { strategy: 'Webhook', webhook: { clientConfig: { service: { path: '/convert' } } } },
        },
      });
      expect(parse(await read(dir, 'PROJECT'))).toMatchObject({
        resources: [{ version: 'v1', webhooks: { conversion: true, spoke: ['v2'] } }, { version: 'v2' }],
      });
      // With a storage version, the two versions make one CRD again.
      const crd = parse(await read(dir, 'config/crd/bases/webapp.example.com_guestbooks.yaml')) as {
        spec: { versions: { name: string; storage: boolean }[] };
      };
      expect(crd.spec.versions.map((v) => [v.name, v.storage])).toEqual([
        ['v1', true],
        ['v2', false],
      ]);
    });

    it('adds admission webhooks next to the conversion, and refuses the conversion twice', async () => {
      expect((await run(dir, ...guestbook, '--conversion', '--spoke', 'v2')).code).toBe(0);
      expect((await run(dir, ...guestbook, '--defaulting')).code).toBe(0);
      const webhook = await read(dir, WEBHOOK);
      expect(count(webhook, 'registerConversion(')).toBe(1);
      expect(webhook).toMatch(/export function defaultGuestbook/);
      const before = await snapshot(dir);
      const again = await run(dir, ...guestbook, '--conversion', '--spoke', 'v2');
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(
        /^error: conversion webhook for Guestbook \(webapp\/v1\) already exists$/m,
      );
      expect(await snapshot(dir)).toEqual(before);
      // --force scaffolds it again without a second registration or storage version.
      expect((await run(dir, ...guestbook, '--conversion', '--spoke', 'v2', '--force')).code).toBe(0);
      expect(count(await read(dir, WEBHOOK), 'registerConversion(')).toBe(1);
      expect(count(await read(dir, 'src/api/webapp/v1/guestbook.types.ts'), 'storageversion')).toBe(1);
    });

    it('a conversion alone adds neither admission imports nor a unit test of admission webhooks', async () => {
      expect((await run(dir, ...guestbook, '--conversion', '--spoke', 'v2')).code).toBe(0);
      const webhook = await read(dir, WEBHOOK);
      expect(webhook).not.toMatch(/import \* as runtime/);
      expect(webhook).toMatch(/import type \{ Manager \} from '@kubesmith\/runtime';/);
      expect(existsSync(path.join(dir, 'test/api/webapp/v1/guestbook.webhook.test.ts'))).toBe(false);
      // Adding an admission webhook later brings them.
      expect((await run(dir, ...guestbook, '--programmatic-validation')).code).toBe(0);
      expect(await read(dir, WEBHOOK)).toMatch(/import \* as runtime from '@kubesmith\/runtime';/);
      expect(existsSync(path.join(dir, 'test/api/webapp/v1/guestbook.webhook.test.ts'))).toBe(true);
    });

    it('leaves a storage version the user chose', async () => {
      const v2Types = 'src/api/webapp/v2/guestbook.types.ts';
      const marked = (await read(dir, v2Types)).replace(
        ' * +kubebuilder:subresource:status\n',
        ' * +kubebuilder:subresource:status\n * +kubebuilder:storageversion\n',
      );
      await writeFile(path.join(dir, v2Types), marked);
      expect((await run(dir, ...guestbook, '--conversion', '--spoke', 'v2')).code).toBe(0);
      expect(await read(dir, 'src/api/webapp/v1/guestbook.types.ts')).not.toMatch(/storageversion/);
    });

    it('refuses a conversion webhook for a built-in kind', async () => {
      const result = await run(
        dir,
        ...['create', 'webhook', '--group', 'core', '--version', 'v1', '--kind', 'Pod'],
        ...['--conversion', '--spoke', 'v2'],
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^error: conversion webhooks convert between the versions of the project's own kinds; Pod \(core\/v1\) is not one$/m,
      );
    });
  });
});
