/**
 * Where a new project gets @kubesmith/runtime and kubesmith from: the registry for a published version,
 * tarballs under .kubesmith/ for a checkout or an unpublished build, the KUBESMITH_*_SPEC variables over both.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { packageRoot, resolveKubesmithPackages, vendoredRuntimePath } from '../../src/scaffold/packages.js';
import { kubesmithVersion } from '../../src/version.js';
import { read, removeTemp, runWithEnv, tempDir } from '../helpers/run.js';

const plainEnv: NodeJS.ProcessEnv = { ...process.env };
delete plainEnv['KUBESMITH_RUNTIME_SPEC'];
delete plainEnv['KUBESMITH_CLI_SPEC'];

const runtimeTarball = `kubesmith-runtime-${kubesmithVersion}.tgz`;
const cliTarball = `kubesmith-${kubesmithVersion}.tgz`;

function tarList(file: string): string[] {
  return execFileSync('tar', ['tzf', file], { encoding: 'utf8' }).split('\n').filter(Boolean);
}

let dirs: string[] = [];
async function temp(name?: string): Promise<string> {
  const dir = await tempDir(name);
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  await Promise.all(dirs.map(removeTemp));
  dirs = [];
});

describe('init from this checkout, with no KUBESMITH_* variables', () => {
  it('puts both packages into .kubesmith/ and refers to them', async () => {
    const dir = await temp('guestbook');
    const result = await runWithEnv(plainEnv, dir, 'init', '--domain', 'example.com', '--skip-install');
    expect(result.code, result.stderr).toBe(0);
    // One line says why and where.
    expect(result.stderr).toContain(
      `kubesmith runs from a checkout (${packageRoot}): the project installs ${runtimeTarball} and ${cliTarball} from .kubesmith/ (commit it with the project)`,
    );

    const pkg = JSON.parse(await read(dir, 'package.json')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(pkg.dependencies['@kubesmith/runtime']).toBe(`file:.kubesmith/${runtimeTarball}`);
    expect(pkg.devDependencies['kubesmith']).toBe(`file:.kubesmith/${cliTarball}`);
    expect((await readdir(path.join(dir, '.kubesmith'))).sort()).toEqual([cliTarball, runtimeTarball]);
    // The registry's kubesmith of this version is another build: PROJECT names this one's commit.
    const commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], {
      cwd: packageRoot,
      encoding: 'utf8',
    }).trim();
    expect(await read(dir, 'PROJECT')).toContain(`\ncliVersion: ${kubesmithVersion}+${commit}\n`);

    // The runtime is the one this build packed; the CLI is this package, with that runtime inside it, so a
    // project's own kubesmith can make self-contained projects too.
    expect(await readFile(path.join(dir, '.kubesmith', runtimeTarball))).toEqual(
      await readFile(vendoredRuntimePath(packageRoot, kubesmithVersion)),
    );
    const cliFiles = tarList(path.join(dir, '.kubesmith', cliTarball));
    expect(cliFiles).toContain('package/bin/kubesmith.js');
    expect(cliFiles).toContain('package/dist/cli/main.js');
    expect(cliFiles).toContain(`package/dist/vendor/${runtimeTarball}`);
    expect(cliFiles.some((file) => file.startsWith('package/src/'))).toBe(false);
    // Without the checkout's `prepare` (npm warns about it on every install of a tarball dependency), and
    // otherwise the package.json this package has.
    const manifest = JSON.parse(
      execFileSync('tar', ['xzOf', path.join(dir, '.kubesmith', cliTarball), 'package/package.json'], {
        encoding: 'utf8',
      }),
    ) as { scripts: Record<string, string> };
    const own = JSON.parse(await readFile(path.join(packageRoot, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(own.scripts['prepare']).toBeDefined();
    const { prepare: _prepare, ...otherScripts } = own.scripts;
    expect(manifest).toEqual({ ...own, scripts: otherScripts });

    // The image build copies the tarballs before `npm ci`, and the build context keeps them.
    const dockerfile = await read(dir, 'Dockerfile');
    expect(dockerfile.indexOf('COPY .kubesmith/ .kubesmith/')).toBeGreaterThan(-1);
    expect(dockerfile.indexOf('COPY .kubesmith/ .kubesmith/')).toBeLessThan(dockerfile.indexOf('RUN npm ci'));
    const dockerignore = await read(dir, '.dockerignore');
    expect(dockerignore).toMatch(/^!\.kubesmith\/$/m);
    // But not what `kubesmith run` keeps there: its state and the run's serving key.
    expect(dockerignore).toMatch(/^!\.kubesmith\/\n(#.*\n)?\.kubesmith\/run\/$/m);
  });

  it('--dry-run lists the tarballs and writes nothing', async () => {
    const dir = await temp();
    const result = await runWithEnv(plainEnv, dir, 'init', '--dry-run', '--json');
    expect(result.code, result.stderr).toBe(0);
    const json = JSON.parse(result.stdout) as { files: { action: string; path: string }[] };
    expect(json.files).toContainEqual({ action: 'create', path: `.kubesmith/${runtimeTarball}` });
    expect(json.files).toContainEqual({ action: 'create', path: `.kubesmith/${cliTarball}` });
    expect(await readdir(dir)).toEqual([]);
  });

  it('KUBESMITH_RUNTIME_SPEC and KUBESMITH_CLI_SPEC override the tarballs', async () => {
    const dir = await temp();
    const env = {
      ...plainEnv,
      KUBESMITH_RUNTIME_SPEC: '1.2.3',
      KUBESMITH_CLI_SPEC: 'file:/somewhere/cli.tgz',
    };
    const result = await runWithEnv(env, dir, 'init', '--skip-install');
    expect(result.code, result.stderr).toBe(0);
    const pkg = JSON.parse(await read(dir, 'package.json')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(pkg.dependencies['@kubesmith/runtime']).toBe('1.2.3');
    expect(pkg.devDependencies['kubesmith']).toBe('file:/somewhere/cli.tgz');
    expect(existsSync(path.join(dir, '.kubesmith'))).toBe(false);
    expect(await read(dir, 'Dockerfile')).not.toContain('.kubesmith');
  });
});

/** An installed kubesmith package (as npx unpacks a tarball): no runtime/ workspace beside it. */
async function installedPackage(withRuntime: boolean): Promise<string> {
  const root = await temp('kubesmith');
  await writeFile(
    path.join(root, 'package.json'),
    JSON.stringify({ name: 'kubesmith', version: '9.8.7', files: ['dist'] }),
  );
  await mkdir(path.join(root, 'dist', 'vendor'), { recursive: true });
  await writeFile(path.join(root, 'dist', 'cli.js'), '// the CLI\n');
  if (withRuntime) await writeFile(vendoredRuntimePath(root, '9.8.7'), 'runtime tarball bytes');
  return root;
}

describe('resolveKubesmithPackages for an installed kubesmith', () => {
  it('a version the registry has: registry specs, no files', async () => {
    const root = await installedPackage(false);
    const asked: string[] = [];
    const packages = await resolveKubesmithPackages({
      env: plainEnv,
      root,
      version: '9.8.7',
      isPublished: async (name, version) => (asked.push(`${name}@${version}`), true),
    });
    expect(asked).toEqual(['@kubesmith/runtime@9.8.7']);
    expect(packages).toEqual({ runtime: '^9.8.7', cli: '^9.8.7', files: [] });
  });

  it.each([
    [false, 'kubesmith 9.8.7 is not on the npm registry'],
    [undefined, 'the npm registry could not be asked for kubesmith 9.8.7'],
  ])('registry answer %s: tarballs, with the reason in the note', async (published, reason) => {
    const root = await installedPackage(true);
    const packages = await resolveKubesmithPackages({
      env: plainEnv,
      root,
      version: '9.8.7',
      isPublished: async () => published,
    });
    expect(packages.runtime).toBe('file:.kubesmith/kubesmith-runtime-9.8.7.tgz');
    expect(packages.cli).toBe('file:.kubesmith/kubesmith-9.8.7.tgz');
    expect(packages.note).toBe(
      `${reason}: the project installs kubesmith-runtime-9.8.7.tgz and kubesmith-9.8.7.tgz from .kubesmith/ (commit it with the project)`,
    );
    const [runtime, cli] = packages.files;
    expect(runtime?.bytes.toString()).toBe('runtime tarball bytes');
    // The CLI tarball is packed from the installed package with npm's own rules (its `files`).
    const packed = path.join(root, 'packed.tgz');
    await writeFile(packed, cli!.bytes);
    expect(tarList(packed).sort()).toEqual([
      'package/dist/cli.js',
      'package/dist/vendor/kubesmith-runtime-9.8.7.tgz',
      'package/package.json',
    ]);
  });

  it('an unpublished build without its runtime tarball: a clear error', async () => {
    const root = await installedPackage(false);
    await expect(
      resolveKubesmithPackages({ env: plainEnv, root, version: '9.8.7', isPublished: async () => false }),
    ).rejects.toMatchObject({
      message: `this kubesmith has no @kubesmith/runtime tarball to give the project (${vendoredRuntimePath(root, '9.8.7')})`,
      hint: 'install a released kubesmith from the registry, or set KUBESMITH_RUNTIME_SPEC to an npm spec of @kubesmith/runtime',
    });
  });

  it('one override: only the other package is a tarball', async () => {
    const root = await installedPackage(true);
    const packages = await resolveKubesmithPackages({
      env: { ...plainEnv, KUBESMITH_CLI_SPEC: '^9.8.7' },
      root,
      version: '9.8.7',
      isPublished: async () => false,
    });
    expect(packages.cli).toBe('^9.8.7');
    expect(packages.files.map((file) => file.path)).toEqual(['.kubesmith/kubesmith-runtime-9.8.7.tgz']);
  });
});
