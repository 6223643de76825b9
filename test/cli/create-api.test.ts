import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { read, removeTemp, run, snapshot, tempDir } from '../helpers/run.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir('guestbook');
  const init = await run(dir, 'init', '--domain', 'example.com', '--skip-install');
  expect(init.code).toBe(0);
});
afterEach(async () => {
  await removeTemp(dir);
});

const guestbook = ['create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook'];
const pod = [
  'create',
  'api',
  '--group',
  'core',
  '--version',
  'v1',
  '--kind',
  'Pod',
  '--resource=false',
  '--controller',
];

/** config/crd/kustomization.yaml lists exactly `bases`, and each is a generated CRD file. */
async function expectKustomizedCrdsExist(root: string, bases: string[]): Promise<void> {
  const kustomization = parse(await read(root, 'config/crd/kustomization.yaml')) as { resources: string[] };
  expect(kustomization.resources).toEqual(bases);
  for (const base of bases) expect(existsSync(path.join(root, 'config/crd', base)), base).toBe(true);
}

function count(text: string, fragment: string): number {
  return text.split(fragment).length - 1;
}

describe('kubesmith create api', () => {
  it('adds the types, controller, sample, roles, registrations and PROJECT entry of a custom resource', async () => {
    const result = await run(dir, ...guestbook);
    expect(result.stderr).not.toMatch(/^error/m);
    expect(result.code).toBe(0);
    for (const file of [
      'src/api/webapp/v1/group-version.ts',
      'src/api/webapp/v1/guestbook.types.ts',
      'src/controllers/guestbook.controller.ts',
      'test/controllers/guestbook.controller.test.ts',
      'test/controllers/guestbook.controller.integration.test.ts',
      'config/samples/webapp_v1_guestbook.yaml',
      'config/rbac/guestbook_admin_role.yaml',
      'config/rbac/guestbook_editor_role.yaml',
      'config/rbac/guestbook_viewer_role.yaml',
      'config/crd/kustomization.yaml',
    ]) {
      expect(existsSync(path.join(dir, file)), file).toBe(true);
    }
    expect(await read(dir, 'src/api/webapp/v1/group-version.ts')).toMatch(/\+groupName=webapp\.example\.com/);
    const types = await read(dir, 'src/api/webapp/v1/guestbook.types.ts');
    expect(types).toMatch(/\+kubebuilder:object:root=true/);
    expect(types).toMatch(/\+kubebuilder:subresource:status/);
    expect(types).toMatch(/\+listType=map/);
    expect(types).toMatch(/\+listMapKey=type/);
    const controller = await read(dir, 'src/controllers/guestbook.controller.ts');
    expect(controller).toMatch(/\+kubebuilder:rbac:groups=webapp\.example\.com,resources=guestbooks,verbs=/);
    expect(controller).toMatch(
      /\+kubebuilder:rbac:groups=webapp\.example\.com,resources=guestbooks\/status,verbs=get;update;patch/,
    );
    expect(controller).toMatch(
      /\+kubebuilder:rbac:groups=webapp\.example\.com,resources=guestbooks\/finalizers,verbs=update/,
    );
    const main = await read(dir, 'src/main.ts');
    expect(main).toMatch(
      /import \{ GuestbookReconciler \} from '\.\/controllers\/guestbook\.controller\.js';/,
    );
    expect(main).toMatch(/new GuestbookReconciler\(mgr\.client\)\.setupWithManager\(mgr\);/);
    expect(parse(await read(dir, 'config/crd/kustomization.yaml'))).toMatchObject({
      resources: ['bases/webapp.example.com_guestbooks.yaml'],
    });
    expect(
      (parse(await read(dir, 'config/default/kustomization.yaml')) as { resources: string[] }).resources,
    ).toContain('../crd');
    expect(
      (parse(await read(dir, 'config/rbac/kustomization.yaml')) as { resources: string[] }).resources,
    ).toEqual(
      expect.arrayContaining([
        'guestbook_admin_role.yaml',
        'guestbook_editor_role.yaml',
        'guestbook_viewer_role.yaml',
      ]),
    );
    expect(parse(await read(dir, 'config/samples/webapp_v1_guestbook.yaml'))).toMatchObject({
      apiVersion: 'webapp.example.com/v1',
      kind: 'Guestbook',
    });
    // Like kubebuilder's `make manifests` after `create api`: the CRD and the role are generated at once.
    expect(parse(await read(dir, 'config/crd/bases/webapp.example.com_guestbooks.yaml'))).toMatchObject({
      kind: 'CustomResourceDefinition',
      spec: { group: 'webapp.example.com', names: { kind: 'Guestbook', plural: 'guestbooks' } },
    });
    expect(await read(dir, 'config/rbac/role.yaml')).toMatch(/^ {2}- guestbooks\/status$/m);
    const project = parse(await read(dir, 'PROJECT')) as { resources: unknown[] };
    expect(project.resources).toEqual([
      {
        api: { crdVersion: 'v1', namespaced: true },
        controller: true,
        domain: 'example.com',
        group: 'webapp',
        kind: 'Guestbook',
        path: 'src/api/webapp/v1/guestbook.types.ts',
        version: 'v1',
      },
    ]);
  });

  it('adds a controller for a built-in kind with the core RBAC group', async () => {
    const result = await run(dir, ...pod);
    expect(result.code).toBe(0);
    const controller = await read(dir, 'src/controllers/pod.controller.ts');
    expect(controller).toMatch(/V1Pod/);
    expect(controller).toMatch(/@kubernetes\/client-node/);
    expect(controller).toMatch(/\+kubebuilder:rbac:groups=core,resources=pods,verbs=/);
    expect(existsSync(path.join(dir, 'src/api/core'))).toBe(false);
    expect(existsSync(path.join(dir, 'config/crd'))).toBe(false);
    expect(await read(dir, 'src/main.ts')).toMatch(
      /new PodReconciler\(mgr\.client\)\.setupWithManager\(mgr\);/,
    );
    const project = parse(await read(dir, 'PROJECT')) as { resources: unknown[] };
    expect(project.resources).toEqual([
      { controller: true, group: 'core', kind: 'Pod', path: '@kubernetes/client-node', version: 'v1' },
    ]);
  });

  it('uses the qualified group of other built-in groups', async () => {
    expect(
      (
        await run(
          dir,
          'create',
          'api',
          '--group',
          'networking',
          '--version',
          'v1',
          '--kind',
          'Ingress',
          '--resource=false',
        )
      ).code,
    ).toBe(0);
    expect(await read(dir, 'src/controllers/ingress.controller.ts')).toMatch(
      /groups=networking\.k8s\.io,resources=ingresses/,
    );
    expect(
      (
        await run(
          dir,
          'create',
          'api',
          '--group',
          'apps',
          '--version',
          'v1',
          '--kind',
          'Deployment',
          '--resource=false',
        )
      ).code,
    ).toBe(0);
    expect(await read(dir, 'src/controllers/deployment.controller.ts')).toMatch(
      /groups=apps,resources=deployments/,
    );
  });

  it('refuses the same API twice, and writes nothing', async () => {
    await run(dir, ...guestbook);
    const before = await snapshot(dir);
    const again = await run(dir, ...guestbook);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: API resource already exists$/m);
    expect(again.stderr).toMatch(/^hint: .*--force/m);
    expect(await snapshot(dir)).toEqual(before);
  });

  it('with --force scaffolds again without duplicating registrations', async () => {
    await run(dir, ...guestbook);
    await run(dir, ...pod);
    const forced = await run(dir, ...guestbook, '--force');
    expect(forced.code).toBe(0);
    const main = await read(dir, 'src/main.ts');
    expect(count(main, 'new GuestbookReconciler(mgr.client)')).toBe(1);
    expect(count(main, 'import { GuestbookReconciler }')).toBe(1);
    expect(
      count(await read(dir, 'config/crd/kustomization.yaml'), 'webapp.example.com_guestbooks.yaml'),
    ).toBe(1);
    expect(count(await read(dir, 'config/default/kustomization.yaml'), '- ../crd')).toBe(1);
    expect(count(await read(dir, 'config/rbac/kustomization.yaml'), 'guestbook_admin_role.yaml')).toBe(1);
    expect((parse(await read(dir, 'PROJECT')) as { resources: unknown[] }).resources).toHaveLength(2);
  });

  it("a second kind of the group-version keeps the user's edits of the files they share", async () => {
    await run(dir, ...guestbook);
    const groupVersion = path.join(dir, 'src/api/webapp/v1/group-version.ts');
    await writeFile(groupVersion, `${await read(dir, 'src/api/webapp/v1/group-version.ts')}// ours\n`);
    const second = await run(
      dir,
      'create',
      'api',
      '--group',
      'webapp',
      '--version',
      'v1',
      '--kind',
      'Visitor',
    );
    expect(second.code).toBe(0);
    expect(await read(dir, 'src/api/webapp/v1/group-version.ts')).toMatch(/\/\/ ours\n$/);
    // The template's if-exists line is a rule, never a line of the file.
    expect(await read(dir, 'src/api/webapp/v1/group-version.ts')).not.toMatch(/if-exists/);
  });

  it('a re-run with --force of an unchanged API changes no file', async () => {
    await run(dir, ...guestbook);
    const before = await snapshot(dir);
    const result = await run(dir, ...guestbook, '--force');
    expect(result.stderr).not.toMatch(/^(create|update|overwrite)\s/m);
    expect(await snapshot(dir)).toEqual(before);
  });

  it('keeps user edits unless --force', async () => {
    await run(dir, ...guestbook);
    await rm(path.join(dir, 'PROJECT'));
    await run(dir, 'init', '--domain', 'example.com', '--skip-install', '--force');
    await writeFile(path.join(dir, 'src/controllers/guestbook.controller.ts'), '// my controller\n');
    const result = await run(dir, ...guestbook);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/src\/controllers\/guestbook\.controller\.ts/);
    expect(await read(dir, 'src/controllers/guestbook.controller.ts')).toBe('// my controller\n');
  });

  it('refuses a second group in a single-group project', async () => {
    await run(dir, ...guestbook);
    const before = await snapshot(dir);
    const result = await run(dir, 'create', 'api', '--group', 'crew', '--version', 'v1', '--kind', 'Captain');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: multiple groups are not allowed by default/m);
    expect(result.stderr).toMatch(/multigroup/);
    expect(await snapshot(dir)).toEqual(before);
  });

  it('allows several groups in a multigroup project, with controllers per group', async () => {
    await rm(path.dirname(dir), { recursive: true, force: true });
    dir = await tempDir('multi');
    await run(dir, 'init', '--domain', 'example.com', '--multigroup', '--skip-install');
    expect((await run(dir, ...guestbook)).code).toBe(0);
    expect(
      (await run(dir, 'create', 'api', '--group', 'crew', '--version', 'v1', '--kind', 'Captain')).code,
    ).toBe(0);
    expect(existsSync(path.join(dir, 'src/controllers/crew/captain.controller.ts'))).toBe(true);
    expect(existsSync(path.join(dir, 'config/rbac/crew_captain_admin_role.yaml'))).toBe(true);
    expect(await read(dir, 'src/main.ts')).toMatch(/from '\.\/controllers\/crew\/captain\.controller\.js'/);
  });

  it('--dry-run prints the plan, including updates of existing files, and writes nothing', async () => {
    const before = await snapshot(dir);
    const result = await run(dir, ...guestbook, '--dry-run');
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^create\s+src\/api\/webapp\/v1\/guestbook\.types\.ts$/m);
    expect(result.stderr).toMatch(/^update\s+src\/main\.ts$/m);
    expect(result.stderr).toMatch(/^update\s+PROJECT$/m);
    expect(await snapshot(dir)).toEqual(before);
  });

  it('--namespaced=false makes a cluster-scoped resource', async () => {
    expect((await run(dir, ...guestbook, '--namespaced=false')).code).toBe(0);
    expect(await read(dir, 'src/api/webapp/v1/guestbook.types.ts')).toMatch(
      /\+kubebuilder:resource:.*scope=Cluster/,
    );
    expect(parse(await read(dir, 'PROJECT'))).toMatchObject({ resources: [{ api: { namespaced: false } }] });
  });

  it('--plural is recorded and used', async () => {
    expect(
      (
        await run(
          dir,
          'create',
          'api',
          '--group',
          'webapp',
          '--version',
          'v1',
          '--kind',
          'Octopus',
          '--plural',
          'octopodes',
        )
      ).code,
    ).toBe(0);
    expect(await read(dir, 'src/controllers/octopus.controller.ts')).toMatch(/resources=octopodes/);
    expect(parse(await read(dir, 'PROJECT'))).toMatchObject({ resources: [{ plural: 'octopodes' }] });
    // The CRD is named with it too, so config/crd/kustomization.yaml refers to a file that exists.
    expect(await read(dir, 'src/api/webapp/v1/octopus.types.ts')).toMatch(
      /^ \* \+kubebuilder:resource:path=octopodes$/m,
    );
    const crd = parse(await read(dir, 'config/crd/bases/webapp.example.com_octopodes.yaml')) as {
      metadata: { name: string };
      spec: { names: { plural: string } };
    };
    expect(crd.metadata.name).toBe('octopodes.webapp.example.com');
    expect(crd.spec.names.plural).toBe('octopodes');
    await expectKustomizedCrdsExist(dir, ['bases/webapp.example.com_octopodes.yaml']);
  });

  it('one plural, given by --plural, names the kind in every file, through every later command', async () => {
    const octopus = ['--group', 'webapp', '--version', 'v1', '--kind', 'Octopus'];
    expect(
      (await run(dir, 'create', 'api', ...octopus, '--plural', 'octopodes', '--controller=false')).code,
    ).toBe(0);
    // Later commands take the plural PROJECT records: a controller for the kind, a webhook, a re-scaffold.
    expect((await run(dir, 'create', 'api', ...octopus, '--resource=false', '--controller')).code).toBe(0);
    expect((await run(dir, 'create', 'webhook', ...octopus, '--defaulting')).code).toBe(0);
    expect((await run(dir, 'create', 'api', ...octopus, '--force')).code).toBe(0);
    const files = await snapshot(dir);
    // kubebuilder's and controller-gen's own plural of Octopus (flect's): in no file.
    expect(Object.entries(files).filter(([, text]) => /octupuses|octopi/.test(text))).toEqual([]);
    expect(parse(files['PROJECT']!)).toMatchObject({ resources: [{ kind: 'Octopus', plural: 'octopodes' }] });
    expect(files['src/controllers/octopus.controller.ts']).toMatch(/resources=octopodes,/);
    expect(files['src/api/webapp/v1/octopus.types.ts']).toMatch(/\+kubebuilder:resource:path=octopodes$/m);
    expect(files['src/api/webapp/v1/octopus.webhook.ts']).toMatch(/resources=octopodes,/);
    expect(files['config/rbac/role.yaml']).toMatch(/- octopodes$/m);
    expect(files['config/rbac/octopus_editor_role.yaml']).toMatch(/- octopodes$/m);
    expect(files['config/webhook/manifests.yaml']).toMatch(/- octopodes$/m);
    await expectKustomizedCrdsExist(dir, ['bases/webapp.example.com_octopodes.yaml']);
  });

  it('an irregular plural (Person: people) names the kind in every file', async () => {
    const person = ['create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Person'];
    expect((await run(dir, ...person)).code).toBe(0);
    const files = await snapshot(dir);
    expect(Object.entries(files).filter(([, text]) => /persons/.test(text))).toEqual([]);
    expect(files['src/controllers/person.controller.ts']).toMatch(/resources=people,/);
    expect(files['config/rbac/role.yaml']).toMatch(/- people$/m);
    expect(files['config/rbac/person_viewer_role.yaml']).toMatch(/- people$/m);
    await expectKustomizedCrdsExist(dir, ['bases/webapp.example.com_people.yaml']);
  });

  it('names the CRD with the recorded plural where kubebuilder and controller-gen default differently', async () => {
    // flect pluralizes `clusterdns` (kubebuilder) as clusterdns but `ClusterDNS` (controller-gen) as clusterdnses.
    const args = ['create', 'api', '--group', 'net', '--version', 'v1', '--kind', 'ClusterDNS'];
    expect((await run(dir, ...args, '--namespaced=false')).code).toBe(0);
    // kubebuilder's default plural: PROJECT leaves it out, the roles use it.
    expect(await read(dir, 'src/controllers/clusterdns.controller.ts')).toMatch(/resources=clusterdns,/);
    expect(await read(dir, 'src/api/net/v1/clusterdns.types.ts')).toMatch(
      /^ \* \+kubebuilder:resource:path=clusterdns,scope=Cluster$/m,
    );
    await expectKustomizedCrdsExist(dir, ['bases/net.example.com_clusterdns.yaml']);
  });

  it('writes no path= when the plural is the default', async () => {
    expect((await run(dir, ...guestbook)).code).toBe(0);
    expect(await read(dir, 'src/api/webapp/v1/guestbook.types.ts')).not.toMatch(/\+kubebuilder:resource/);
  });

  it('leaves the project as it was when a write fails half way', async () => {
    // init made config/samples a directory (with its kustomization.yaml): a file takes its place.
    await rm(path.join(dir, 'config/samples'), { recursive: true });
    await writeFile(path.join(dir, 'config/samples'), 'a file where a directory must go\n');
    const before = await snapshot(dir);
    const result = await run(dir, ...guestbook);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^error: cannot write config\/samples.*: a file stands where a directory is needed$/m,
    );
    expect(await snapshot(dir)).toEqual(before);
    expect(existsSync(path.join(dir, 'src/api'))).toBe(false);
  });

  it.each([
    [['--kind', 'guestbook'], /^error: invalid Kind: guestbook: must start with an uppercase character$/m, 2],
    [['--kind', 'Guest_book'], /^error: invalid Kind: Guest_book: a DNS-1035 label must consist of/m, 2],
    [
      ['--group', 'Web_App'],
      /^error: either Group or Domain is invalid: Web_App\.example\.com: a DNS-1123 subdomain/m,
      2,
    ],
    [['--version', 'V1'], /^error: Version must respect DNS-1123 \(was V1\)$/m, 2],
    [
      ['--kind', 'DNS'],
      /^error: the default plural of DNS is dnsDNSes \(kubebuilder's\), which is not a DNS-1035 label\nhint: pass the plural, e\.g\. --plural dnses$/m,
      2,
    ],
    [['--version', ''], /^error: version cannot be empty$/m, 2],
    [
      ['--resource=maybe'],
      /error: option '--resource \[bool\]' argument 'maybe' is invalid. expected true or false\./,
      2,
    ],
  ])('rejects %j with a clear error and writes nothing', async (override, message, code) => {
    const args = [...guestbook];
    for (let i = 0; i < override.length; i += 1) {
      const flag = override[i] as string;
      const at = args.indexOf(flag);
      if (at >= 0 && override[i + 1] !== undefined && !flag.includes('=')) {
        args[at + 1] = override[i + 1] as string;
        i += 1;
      } else args.push(flag);
    }
    const before = await snapshot(dir);
    const result = await run(dir, ...args);
    expect(result.stderr).toMatch(message);
    expect(result.code).toBe(code);
    expect(await snapshot(dir)).toEqual(before);
  });

  it('rejects a missing flag value', async () => {
    const result = await run(dir, 'create', 'api', '--group', 'webapp', '--version', 'v1', '--kind');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/error: option '--kind <kind>' argument missing/);
  });

  it('outside a project says so', async () => {
    const outside = await tempDir('elsewhere');
    try {
      const result = await run(outside, ...guestbook);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^error: not in a kubesmith project: no PROJECT file in .*elsewhere or its parents$/m,
      );
      expect(await snapshot(outside)).toEqual({});
    } finally {
      await removeTemp(outside);
    }
  });

  it('works from a subdirectory of the project', async () => {
    await mkdir(path.join(dir, 'src', 'deep'), { recursive: true });
    expect((await run(path.join(dir, 'src', 'deep'), ...guestbook)).code).toBe(0);
    expect(existsSync(path.join(dir, 'src/api/webapp/v1/guestbook.types.ts'))).toBe(true);
  });

  it('adds a second version of a kind without a second controller', async () => {
    expect((await run(dir, ...guestbook)).code).toBe(0);
    const v2 = ['create', 'api', '--group', 'webapp', '--version', 'v2', '--kind', 'Guestbook'];
    const before = await snapshot(dir);
    const refused = await run(dir, ...v2);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^error: Guestbook already has a controller, in version v1; one controller reconciles every version of a kind\nhint: add version v2 without one: pass --controller=false$/m,
    );
    expect(await snapshot(dir)).toEqual(before);
    const added = await run(dir, ...v2, '--controller=false');
    expect(added.code).toBe(0);
    expect(existsSync(path.join(dir, 'src/api/webapp/v2/guestbook.types.ts'))).toBe(true);
    // Two versions and no storage version: the manifests wait for one, and say how.
    expect(added.stderr).toMatch(/has no storage versions among v1, v2/);
    expect(added.stderr).toMatch(/mark exactly one version of the kind with \+kubebuilder:storageversion/);
  });

  it("formats what it writes with the project's Prettier settings, whatever the names' lengths", async () => {
    const kind = 'ExtraordinarilyLongNamedApplicationDeployment';
    const group = ['--group', 'infrastructureautomation', '--version', 'v1alpha1', '--kind', kind];
    expect((await run(dir, 'create', 'api', ...group)).code).toBe(0);
    expect(
      (await run(dir, 'create', 'webhook', ...group, '--defaulting', '--programmatic-validation')).code,
    ).toBe(0);
    const prettier = await import('prettier');
    const files = Object.keys(await snapshot(dir)).filter((file) => file.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const filepath = path.join(dir, file);
      const options = await prettier.resolveConfig(filepath);
      expect(await prettier.check(await read(dir, file), { ...options, filepath }), file).toBe(true);
    }
  });

  it('leaves a file the user does not format with Prettier as it was, but for the added lines', async () => {
    expect((await run(dir, ...guestbook)).code).toBe(0);
    const main = await read(dir, 'src/main.ts');
    const unformatted = main.replace('import { Manager', 'import {Manager');
    expect(unformatted).not.toBe(main);
    await writeFile(path.join(dir, 'src/main.ts'), unformatted);
    expect((await run(dir, ...pod)).code).toBe(0);
    const after = await read(dir, 'src/main.ts');
    expect(after).toMatch(/import \{Manager/);
    expect(after).toMatch(/PodReconciler/);
  });
});
