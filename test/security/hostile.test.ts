/**
 * Property tests of the threat model in docs/security.md: an attacker's pull request writes any file of a
 * project, and the project's CI runs kubesmith on it. Generated hostile names, markers, PROJECT files and
 * links go through the CLI in a sandbox; whatever kubesmith answers, nothing outside the project changes,
 * no file outside it is printed, and every error is one clean line (test/security/hostile.ts).
 * KUBESMITH_PROPERTY_RUNS sets how many cases each property tries.
 */
import { readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { parseDocument } from 'yaml';
import { hostileText, logRuns, makeSandbox, propertyRuns, runContained, type Sandbox } from './hostile.js';

const TYPES = 'src/api/webapp/v1/guestbook.types.ts';
const GROUP_VERSION = 'src/api/webapp/v1/group-version.ts';
const ROOT_MARKER = ' * +kubebuilder:object:root=true';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await makeSandbox();
}, 60_000);
afterAll(async () => {
  if (sandbox) await rm(sandbox.root, { recursive: true, force: true });
});

/** Replaces `search` in a project file (it must be there: a missed edit would test nothing). */
async function edit(dir: string, file: string, search: string, replacement: string): Promise<void> {
  const full = path.join(dir, file);
  const text = await readFile(full, 'utf8');
  if (!text.includes(search)) throw new Error(`${file} has no ${JSON.stringify(search)}`);
  await writeFile(
    full,
    text.replace(search, () => replacement),
  );
}

/** Markers whose values become paths, object names, YAML or patterns, with `%s` for the hostile text. */
const KIND_MARKERS = [
  '+kubebuilder:resource:path=%s',
  '+kubebuilder:resource:path=a/%s',
  '+kubebuilder:resource:singular=%s',
  '+kubebuilder:resource:shortName=%s',
  '+kubebuilder:resource:categories=%s',
  '+kubebuilder:printcolumn:name=%s,type=string,JSONPath=.spec.foo',
  '+kubebuilder:printcolumn:name=x,type=string,JSONPath=%s',
  '+kubebuilder:rbac:groups=%s,resources=guestbooks,verbs=get',
  '+kubebuilder:rbac:groups=apps,resources=%s,verbs=get',
  '+kubebuilder:metadata:annotations=%s',
  '+kubebuilder:metadata:labels=%s',
];
const FIELD_MARKERS = [
  '+kubebuilder:validation:Pattern=%s',
  '+kubebuilder:validation:Pattern=`%s`',
  '+kubebuilder:default=%s',
  '+kubebuilder:validation:Enum=%s',
  '+kubebuilder:example=%s',
  '+kubebuilder:validation:XValidation:rule=%s',
  '+kubebuilder:validation:XValidation:rule="self.size() > 0",message=%s',
];

describe('hostile input never leaves the project', () => {
  it('markers: kind, field, group and version markers with hostile values, through manifests and --check', async () => {
    const runs = propertyRuns(30);
    const marker = fc.oneof(
      fc.record({ where: fc.constant('kind' as const), template: fc.constantFrom(...KIND_MARKERS) }),
      fc.record({ where: fc.constant('field' as const), template: fc.constantFrom(...FIELD_MARKERS) }),
      fc.record({
        where: fc.constant('package' as const),
        template: fc.constantFrom('+groupName=%s', '+versionName=%s'),
      }),
    );
    await fc.assert(
      fc.asyncProperty(marker, hostileText(sandbox), async ({ where, template }, value) => {
        const line = template.replace('%s', () => value);
        const prepare = async (dir: string) => {
          if (where === 'kind') await edit(dir, TYPES, ROOT_MARKER, ` * ${line}\n${ROOT_MARKER}`);
          if (where === 'field') {
            await edit(dir, TYPES, '   * +kubebuilder:validation:MaxLength=253', `   * ${line}`);
          }
          if (where === 'package') {
            if (line.startsWith('+groupName')) {
              await edit(dir, GROUP_VERSION, '+groupName=webapp.example.com', line);
            } else await edit(dir, GROUP_VERSION, ' * +groupName', ` * ${line}\n * +groupName`);
          }
        };
        await runContained(sandbox, prepare, ['manifests'], line);
        await runContained(sandbox, prepare, ['manifests', '--check'], line);
      }),
      { numRuns: runs },
    );
    logRuns('markers', runs * 2);
  }, 300_000);

  it('flags: create api with hostile group, version, kind and plural', async () => {
    const runs = propertyRuns(30);
    const hostile = hostileText(sandbox);
    const maybe = (fallback: string) => fc.oneof(fc.constant(fallback), hostile);
    await fc.assert(
      fc.asyncProperty(
        maybe('batch'),
        maybe('v2'),
        maybe('CronJob'),
        fc.option(hostile, { nil: undefined }),
        async (group, version, kind, plural) => {
          const args = ['create', 'api', '--group', group, '--version', version, '--kind', kind];
          if (plural !== undefined) args.push('--plural', plural);
          await runContained(sandbox, async () => {}, args, 'create api');
        },
      ),
      { numRuns: runs },
    );
    logRuns('create api flags', runs);
  }, 300_000);

  it('PROJECT: hostile values in any field, then manifests and create api', async () => {
    const runs = propertyRuns(30);
    const field = fc.constantFrom(
      ['projectName'],
      ['domain'],
      ['layout', 0],
      ['resources', 0, 'group'],
      ['resources', 0, 'version'],
      ['resources', 0, 'kind'],
      ['resources', 0, 'domain'],
      ['resources', 0, 'path'],
      ['resources', 0, 'plural'],
      ['resources', 0, 'api', 'namespaced'],
      // Values `alpha generate` replays as flags.
      ['owner'],
      ['license'],
      ['cliVersion'],
      ['plugins', 'helm.kubesmith.dev/v1-alpha', 'output'],
      ['plugins', 'helm.kubesmith.dev/v1-alpha', 'image'],
    );
    const command = fc.constantFrom(
      ['manifests'],
      ['alpha', 'generate', '--output-dir', 'regenerated'],
      ['create', 'api', '--group', 'batch', '--version', 'v1', '--kind', 'CronJob'],
      ['create', 'webhook', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook', '--defaulting'],
    );
    await fc.assert(
      fc.asyncProperty(field, hostileText(sandbox), command, async (at, value, args) => {
        const prepare = async (dir: string) => {
          const file = path.join(dir, 'PROJECT');
          const document = parseDocument(await readFile(file, 'utf8'));
          document.setIn(at, value);
          await writeFile(file, document.toString());
        };
        await runContained(sandbox, prepare, args, `PROJECT ${at.join('.')}=${JSON.stringify(value)}`);
      }),
      { numRuns: runs },
    );
    logRuns('PROJECT fields', runs);
  }, 300_000);

  it('links: a source or output directory or file of the project is a link out of it', async () => {
    const runs = propertyRuns(20);
    const link = fc.constantFrom(
      'config/crd/bases',
      'config/crd',
      'config/rbac',
      'config/rbac/role.yaml',
      'config/crd/bases/webapp.example.com_guestbooks.yaml',
      'config/samples',
      'src/controllers',
      'src/api/webapp/v1/guestbook.types.ts',
      'src/api/webapp/v1/extra.types.ts',
      'src/api/webapp/v1',
    );
    const target = fc.constantFrom('outside', 'outside/victim.yaml', 'outside/victim.ts', 'victim.yaml', '.');
    const command = fc.constantFrom(
      ['manifests'],
      ['manifests', '--check'],
      ['create', 'api', '--group', 'batch', '--version', 'v1', '--kind', 'CronJob'],
      ['create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook', '--force'],
    );
    await fc.assert(
      fc.asyncProperty(link, target, command, async (at, to, args) => {
        const prepare = async (dir: string) => {
          const full = path.join(dir, at);
          await rm(full, { recursive: true, force: true });
          await symlink(path.join(sandbox.root, to), full);
        };
        await runContained(sandbox, prepare, args, `${at} -> ${to}`);
      }),
      { numRuns: runs },
    );
    logRuns('links', runs);
  }, 300_000);
});
