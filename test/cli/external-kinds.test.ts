/**
 * Kinds of other APIs in a project (docs/external-apis.md): `import crd` keeps a copy of each CRD in
 * config/crd/external, tracked as the types are; `create api --resource=false` on an imported kind
 * scaffolds a controller typed with the imported type, RBAC for the external group, and tests that install
 * the copy into envtest; `manifests` owns none of it. The project's own tests on envtest:
 * test/importer/project.integration.test.ts.
 */
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { expectRefused, read, removeTemp, run, snapshot, tempDir } from '../helpers/run.js';

const CERTIFICATES = path.resolve(
  import.meta.dirname,
  '../fixtures/import/controller-gen/tls.example.com_certificates.yaml',
);
const COPY = 'config/crd/external/tls.example.com_certificates.yaml';
const certificate = [
  'create',
  'api',
  '--group',
  'tls.example.com',
  '--version',
  'v1',
  '--kind',
  'Certificate',
  '--resource=false',
  '--controller',
];

let dir: string;
beforeEach(async () => {
  dir = await tempDir('shop');
  expect((await run(dir, 'init', '--domain', 'example.com', '--skip-install')).code).toBe(0);
});
afterEach(async () => {
  await removeTemp(dir);
});

async function importCertificates(...flags: string[]) {
  const result = await run(dir, 'import', 'crd', CERTIFICATES, ...flags);
  expect(result.stderr).not.toMatch(/^(error|warning)/m);
  expect(result.code).toBe(0);
  return result;
}

describe('import crd in a project', () => {
  it('keeps a copy of the CRD in config/crd/external, tracked: a re-import changes nothing, an edited copy stops it', async () => {
    const result = await importCertificates();
    expect(result.stderr).toContain(`created   ${COPY}`);
    const copy = parse((await read(dir, COPY)).replace(/^#.*\n/, '')) as {
      metadata: { name: string; annotations?: unknown };
      spec: { group: string; versions: { name: string; storage: boolean }[]; conversion?: unknown };
    };
    expect(copy.metadata).toEqual({ name: 'certificates.tls.example.com' });
    expect(copy.spec.group).toBe('tls.example.com');
    expect(copy.spec.versions.map((v) => [v.name, v.storage])).toEqual([['v1', true]]);
    expect(await read(dir, 'config/crd/external/.kubesmith-files')).toMatch(
      /^[0-9a-f]{64} {2}tls\.example\.com_certificates\.yaml$/m,
    );

    const before = await snapshot(dir);
    expect((await importCertificates()).stderr).toContain(`unchanged ${COPY}`);
    expect(await snapshot(dir)).toEqual(before);

    await writeFile(path.join(dir, COPY), `${await read(dir, COPY)}# mine\n`);
    await expectRefused(
      dir,
      ['import', 'crd', CERTIFICATES],
      1,
      /^error: .*tls\.example\.com_certificates\.yaml was edited since kubesmith import crd wrote it/,
    );
    expect((await run(dir, 'import', 'crd', CERTIFICATES, '--force')).code).toBe(0);
    expect(await read(dir, COPY)).not.toContain('# mine');
  });

  it("records nothing in PROJECT and drops the CRD's conversion webhook from the copy", async () => {
    // kubebuilder records an external API in PROJECT when it scaffolds a controller or webhook for it,
    // not before; and envtest runs no conversion webhook of the CRD's owner.
    const crd = parse(await readFile(CERTIFICATES, 'utf8')) as { spec: Record<string, unknown> };
    crd.spec['conversion'] = {
      strategy: 'Webhook',
      webhook: {
        clientConfig: { service: { name: 'webhook', namespace: 'tls-system', path: '/convert' } },
        conversionReviewVersions: ['v1'],
      },
    };
    const input = path.join(dir, '..', 'with-conversion.yaml');
    await writeFile(input, stringify(crd));
    const project = await read(dir, 'PROJECT');
    const result = await run(dir, 'import', 'crd', input);
    expect(result.stderr).not.toMatch(/^(error|warning)/m);
    expect(result.code).toBe(0);
    expect(await read(dir, 'PROJECT')).toBe(project);
    const copy = parse((await read(dir, COPY)).replace(/^#.*\n/, '')) as { spec: Record<string, unknown> };
    expect(copy.spec).not.toHaveProperty('conversion');
    expect(copy.spec['group']).toBe('tls.example.com');
  });

  it('writes no copy when the types go outside the project', async () => {
    const result = await run(dir, 'import', 'crd', CERTIFICATES, '--out', path.join(dir, '..', 'elsewhere'));
    expect(result.code).toBe(0);
    expect(existsSync(path.join(dir, 'config/crd/external'))).toBe(false);
  });
});

describe('create api on an imported kind', () => {
  it('scaffolds a typed controller, RBAC for the external group, tests on the CRD copy; manifests owns no CRD', async () => {
    await importCertificates();
    const result = await run(dir, ...certificate);
    expect(result.stderr).not.toMatch(/^(error|warning)/m);
    expect(result.code).toBe(0);

    const project = parse(await read(dir, 'PROJECT')) as { resources: unknown[] };
    expect(project.resources).toEqual([
      {
        controller: true,
        external: true,
        group: 'tls.example.com',
        kind: 'Certificate',
        path: 'src/external/tls.example.com/v1/certificate.types.ts',
        version: 'v1',
      },
    ]);
    const controller = await read(dir, 'src/controllers/certificate.controller.ts');
    expect(controller).toContain(
      "import { CertificateKind, type Certificate } from '../external/tls.example.com/v1/certificate.types.js';",
    );
    expect(controller).toMatch(/controllerManagedBy\(mgr\)\.for\(CertificateKind\)/);

    const role = parse((await read(dir, 'config/rbac/role.yaml')).replace(/^#.*\n---\n/, '')) as {
      rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    };
    expect(
      role.rules.map((r) => `${r.apiGroups.join()}/${r.resources.join()}: ${r.verbs.join(',')}`),
    ).toEqual([
      'tls.example.com/certificates: create,delete,get,list,patch,update,watch',
      'tls.example.com/certificates/status: get',
    ]);

    // The tests' object holds what the CRD requires: the enum's first value, a string.
    const unit = await read(dir, 'test/controllers/certificate.controller.test.ts');
    expect(unit).toContain("spec: { issuer: 'SelfSigned', secretName: 'example' },");
    const integration = await read(dir, 'test/controllers/certificate.controller.integration.test.ts');
    expect(integration).toMatch(/\n {2}it\('reconciles a Certificate created on the API server'/);
    expect(await read(dir, 'test/envtest.setup.ts')).toContain("'../config/crd/external'");

    // No CRD of the project's own, no kustomization entry, no sample: the owner ships the CRD.
    expect(existsSync(path.join(dir, 'config/crd/bases'))).toBe(false);
    expect(existsSync(path.join(dir, 'config/samples/tls.example.com_v1_certificate.yaml'))).toBe(false);
    const check = await run(dir, 'manifests', '--check');
    expect(check.stderr).not.toMatch(/^(error|warning)/m);
    expect(check.code).toBe(0);
  });

  it('scaffolds the integration test skipped, with a TODO, when the CRD asks what it cannot fill in', async () => {
    const crd = (await read(path.dirname(CERTIFICATES), path.basename(CERTIFICATES))).replace(
      'minLength: 1',
      'pattern: ^[a-z]+$',
    );
    await writeFile(path.join(dir, '..', 'certificates.yaml'), crd);
    expect((await run(dir, 'import', 'crd', path.join(dir, '..', 'certificates.yaml'))).code).toBe(0);
    expect((await run(dir, ...certificate)).code).toBe(0);
    const integration = await read(dir, 'test/controllers/certificate.controller.integration.test.ts');
    expect(integration).toContain(
      '// TODO(user): the CRD asks more of ".spec.secretName" than kubesmith fills in',
    );
    expect(integration).toMatch(/\n {2}it\.skip\('reconciles a Certificate created on the API server'/);
  });

  it('refuses an imported kind whose CRD copy is gone, naming the fix; nothing written', async () => {
    await importCertificates();
    await rm(path.join(dir, COPY));
    await expectRefused(
      dir,
      certificate,
      1,
      /^error: src\/external\/tls\.example\.com\/v1\/certificate\.types\.ts is an imported kind, but config\/crd\/external has no copy of its CRD \(Certificate\.tls\.example\.com\)$/,
    );
  });

  it("refuses a group that is neither built in, the project's, nor imported", async () => {
    await expectRefused(
      dir,
      certificate,
      1,
      /^error: tls\.example\.com is neither a built-in API group, nor the group of an API in this project, nor of a kind imported into src\/external$/,
    );
  });
});

describe('create webhook on an imported kind', () => {
  const webhook = [
    'create',
    'webhook',
    '--group',
    'tls.example.com',
    '--version',
    'v1',
    '--kind',
    'Certificate',
  ];

  it('writes the webhooks to src/webhooks, typed with the imported type, for the external group', async () => {
    await importCertificates();
    const result = await run(dir, ...webhook, '--defaulting', '--programmatic-validation');
    expect(result.stderr).not.toMatch(/^(error|warning)/m);
    expect(result.code).toBe(0);
    const file = await read(dir, 'src/webhooks/certificate.webhook.ts');
    expect(file).toContain(
      "import { CertificateKind } from '../external/tls.example.com/v1/certificate.types.js';",
    );
    expect(file).toContain('groups=tls.example.com,resources=certificates,');
    const manifests = await read(dir, 'config/webhook/manifests.yaml');
    expect(manifests).toMatch(/apiGroups:\n {4}- tls\.example\.com\n/);
    const integration = await read(dir, 'test/webhooks/certificate.webhook.integration.test.ts');
    expect(integration).toContain("spec: { issuer: 'SelfSigned', secretName: 'example' },");
    // PROJECT records the kind as external, so that alpha generate imports it again first.
    const project = parse(await read(dir, 'PROJECT')) as { resources: unknown[] };
    expect(project.resources).toEqual([
      {
        external: true,
        group: 'tls.example.com',
        kind: 'Certificate',
        path: 'src/external/tls.example.com/v1/certificate.types.ts',
        version: 'v1',
        webhooks: { defaulting: true, validation: true, webhookVersion: 'v1' },
      },
    ]);
    expect((await run(dir, 'manifests', '--check')).code).toBe(0);
  });

  it("refuses a conversion webhook: converting is the owner's", async () => {
    await importCertificates();
    await expectRefused(
      dir,
      [...webhook, '--conversion', '--spoke', 'v2'],
      1,
      /^error: conversion webhooks convert between the versions of the project's own kinds; Certificate \(tls\.example\.com\/v1\) is not one$/,
    );
  });
});

describe('imported kinds are hostile input too', () => {
  it('a record line naming anything but a CRD copy stops the import before anything is read through it', async () => {
    await importCertificates();
    const record = path.join(dir, 'config/crd/external/.kubesmith-files');
    await writeFile(record, `${'0'.repeat(64)}  ../../PROJECT\n`);
    await expectRefused(
      dir,
      ['import', 'crd', CERTIFICATES],
      1,
      /^error: \.kubesmith-files:1: "0{64} {2}\.\.\/\.\.\/PROJECT" is not a line kubesmith import crd writes$/,
    );
  });

  it('a copy whose plural is not its file name is refused, naming the file', async () => {
    await importCertificates();
    const copy = path.join(dir, COPY);
    await writeFile(copy, (await read(dir, COPY)).replace('plural: certificates', 'plural: secrets'));
    await expectRefused(
      dir,
      certificate,
      1,
      /^error: config\/crd\/external\/tls\.example\.com_certificates\.yaml: \.spec\.names\.plural: not the plural its file is named after$/,
    );
  });

  it("required fields' names and values reach the tests as string literals: the file parses, nothing escapes", async () => {
    const crd = (await read(path.dirname(CERTIFICATES), path.basename(CERTIFICATES)))
      .replace('- SelfSigned', `- "x'*/\\n}); process.exit(1); //"`)
      .replace(
        /\n {12}required:\n {12}- issuer\n {12}- secretName\n/,
        '\n            required: ["issuer", "secretName", "a\'b"]\n',
      )
      .replace(
        '              secretName:',
        '              "a\'b":\n                type: boolean\n              secretName:',
      );
    await writeFile(path.join(dir, '..', 'certificates.yaml'), crd);
    const imported = await run(dir, 'import', 'crd', path.join(dir, '..', 'certificates.yaml'));
    expect(imported.stderr).not.toMatch(/^error/m);
    expect((await run(dir, ...certificate)).code).toBe(0);
    const { default: ts } = await import('typescript');
    for (const file of [
      'test/controllers/certificate.controller.test.ts',
      'test/controllers/certificate.controller.integration.test.ts',
    ]) {
      const text = await read(dir, file);
      expect(text).toContain(`"a'b": false`);
      expect(text).not.toMatch(/^\}\); process\.exit/m);
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
      const diagnostics = (source as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics;
      expect(diagnostics, file).toEqual([]);
      // The enum value is one string literal: no statement of the test but those the template writes.
      expect(text.match(/process\.exit/g)).toHaveLength(1);
    }
  }, 60_000);
});

describe('validate with an imported kind', () => {
  it("checks a sample of the imported kind against the CRD's copy, as npm test does", async () => {
    await importCertificates();
    const sample = (issuer: string) =>
      `apiVersion: tls.example.com/v1\nkind: Certificate\nmetadata:\n  name: web\nspec:\n  secretName: web-tls\n  issuer: ${issuer}\n`;
    await writeFile(path.join(dir, 'config/samples/certificate.yaml'), sample('CA'));
    const valid = await run(dir, 'validate', 'config/samples');
    expect(valid.stderr).not.toMatch(/^error/m);
    expect(valid.code).toBe(0);
    await writeFile(path.join(dir, 'config/samples/certificate.yaml'), sample('Vault'));
    const invalid = await run(dir, 'validate', 'config/samples');
    expect(invalid.code).toBe(1);
    expect(`${invalid.stdout}${invalid.stderr}`).toMatch(
      /certificate\.yaml:7: spec\.issuer: Unsupported value: "Vault"/,
    );
  });
});

describe('create api refuses what an imported kind cannot be', () => {
  it('an API of the project for an imported kind, and a plural its CRD does not have', async () => {
    await importCertificates();
    await expectRefused(
      dir,
      certificate.filter((flag) => flag !== '--resource=false'),
      1,
      /^error: Certificate \(tls\.example\.com\/v1\) is imported into src\/external: its owner ships its CRD, the project cannot own it too$/,
    );
    await expectRefused(
      dir,
      [...certificate, '--plural', 'certs'],
      1,
      /^error: --plural certs: Certificate is imported, and its CRD names it certificates$/,
    );
  });
});
