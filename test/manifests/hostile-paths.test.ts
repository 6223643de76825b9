/**
 * `kubesmith manifests` on sources a stranger's pull request edited (the generated lint workflow runs
 * `manifests --check` on every pull request): a name that would put a CRD outside the project is a
 * diagnostic at its marker, and neither the write nor the diff of --check ever touches a file outside it,
 * even through a symbolic link.
 */
import { cp, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTemp, run, tempDir } from '../helpers/run.js';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures');
const SECRET = 'a file outside the project: SECRET-CONTENT\n';
const TYPES = 'src/api/webapp/v1/guestbook.types.ts';
const GROUP_VERSION = 'src/api/webapp/v1/group-version.ts';
const temps: string[] = [];

/** crd-basic in a temporary directory, and `outside/` beside it holding `victim` with SECRET. */
async function projectBeside(victim: string): Promise<{ dir: string; victim: string }> {
  const dir = await tempDir();
  temps.push(dir);
  await cp(path.join(FIXTURES, 'crd-basic', 'PROJECT'), path.join(dir, 'PROJECT'));
  await cp(path.join(FIXTURES, 'crd-basic', 'src'), path.join(dir, 'src'), { recursive: true });
  const outside = path.join(path.dirname(dir), 'outside');
  await mkdir(outside);
  await writeFile(path.join(outside, victim), SECRET);
  return { dir, victim: path.join(outside, victim) };
}

async function edit(dir: string, file: string, from: string, to: string): Promise<void> {
  const text = await readFile(path.join(dir, file), 'utf8');
  expect(text).toContain(from);
  await writeFile(path.join(dir, file), text.replace(from, to));
}

afterEach(async () => {
  for (const dir of temps.splice(0)) await removeTemp(dir);
});

describe('kubesmith manifests never reads or writes outside the project', () => {
  it.each([
    [
      '+kubebuilder:resource:path',
      'victim.yaml',
      TYPES,
      '+kubebuilder:resource:shortName',
      '+kubebuilder:resource:path=a/../../../../../outside/victim,shortName',
      `${TYPES}:124:4: error: invalid path (the plural) "a/../../../../../outside/victim" in +kubebuilder:resource: it must be a DNS-1035 label`,
    ],
    [
      '+groupName',
      'g_guestbooks.yaml',
      GROUP_VERSION,
      '+groupName=webapp.example.com',
      '+groupName=../../../outside/g',
      `${GROUP_VERSION}:3:4: error: invalid +groupName "../../../outside/g": a CRD's group must be a DNS-1123 subdomain`,
    ],
  ])(
    'a %s leading out of the project is an error at the marker',
    async (_name, file, source, from, to, diagnostic) => {
      const { dir, victim } = await projectBeside(file);
      await edit(dir, source, from, to);

      for (const args of [['manifests', '--check'], ['manifests']]) {
        const result = await run(dir, ...args);
        expect(result.code, args.join(' ')).toBe(1);
        expect(result.stderr).toContain(diagnostic);
        expect(result.stderr).toMatch(
          /\nerror: 1 error in the API sources; nothing was written\nhint: .*\n$/,
        );
        expect(result.stdout + result.stderr).not.toContain('SECRET-CONTENT');
        expect(await readFile(victim, 'utf8')).toBe(SECRET);
        expect(await readdir(path.dirname(victim))).toEqual([file]);
      }
    },
  );

  it('config/crd/bases linked to a directory outside: --check shows nothing of it, and nothing is written there', async () => {
    const { dir, victim } = await projectBeside('webapp.example.com_guestbooks.yaml');
    await mkdir(path.join(dir, 'config/crd'), { recursive: true });
    await symlink(path.dirname(victim), path.join(dir, 'config/crd/bases'));

    for (const args of [['manifests', '--check'], ['manifests']]) {
      const result = await run(dir, ...args);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr).toMatch(
        /^error: refusing "config\/crd\/bases\/webapp\.example\.com_guestbooks\.yaml": not a file inside the project \(a symbolic link on the way leads to .*\)\nhint: .*\n$/,
      );
      expect(result.stdout + result.stderr).not.toContain('SECRET-CONTENT');
      expect(await readFile(victim, 'utf8')).toBe(SECRET);
      expect(await readdir(path.dirname(victim))).toEqual([path.basename(victim)]);
    }
  });

  it.each([
    ['a source file', 'src/api/webapp/v1/extra.types.ts', 'victim.ts'],
    ['a source directory', 'src/api/webapp/v2', '.'],
    ['an import', undefined, 'victim.ts'],
  ])(
    '%s leading out of the project is not read: nothing of it is printed',
    async (_what, link, victimName) => {
      const { dir, victim } = await projectBeside('victim.ts');
      // TypeScript whose marker would print the secret in a diagnostic, were it read.
      const secret = 'SECRETCONTENT';
      await writeFile(
        victim,
        `/** +kubebuilder:object:root=true */\nexport interface Victim {\n  apiVersion: 'x';\n  kind: 'Victim';\n` +
          `  /** +kubebuilder:validation:MaxLength=${secret} */\n  spec?: string;\n}\n`,
      );
      const target = path.join(path.dirname(victim), victimName);
      if (link) await symlink(target, path.join(dir, link));
      else {
        // The spec holds the imported type, so its markers would be read for the CRD's schema.
        const climb = path.relative(path.join(dir, path.dirname(TYPES)), victim).replace(/\.ts$/, '.js');
        const spec = 'export interface GuestbookSpec extends Base {';
        await edit(dir, TYPES, spec, `${spec}\n  victim?: Victim;`);
        const types = await readFile(path.join(dir, TYPES), 'utf8');
        await writeFile(path.join(dir, TYPES), `import type { Victim } from '${climb}';\n${types}`);
      }
      for (const args of [['manifests', '--check'], ['manifests']]) {
        const result = await run(dir, ...args);
        expect(result.stdout + result.stderr, args.join(' ')).not.toContain(secret);
        if (link) {
          expect(result.code).toBe(1);
          expect(result.stderr).toContain(`${link}:1:1: error: a symbolic link out of the project`);
        }
      }
    },
  );
});
