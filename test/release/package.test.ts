/**
 * What `npm publish` would upload, checked on the tarballs themselves: both packages are packed once
 * (`npm pack --ignore-scripts`, from the dist/ that `npm test` builds first) and every check reads the
 * packed package.json and files.
 *
 * `npm pack` rather than `npm publish --dry-run`: with npm 11 the dry run packs the same way and then asks
 * the registry whether the version exists (a GET of the packument whose failure it ignores: without a
 * network it waits ~70 s for its retries). That question belongs to the release workflow, not to a test.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveKubesmithPackages, tarballName } from '../../src/scaffold/packages.js';
import {
  danglingSourceMaps,
  difference,
  missingTargets,
  shippedTests,
  staleOutputs,
  unreachableOutputs,
  type PackedPackage,
} from './packlist.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const CLI = 'kubesmith';
const RUNTIME = '@kubesmith/runtime';

interface Packed extends PackedPackage {
  name: string;
  version: string;
  tarball: string;
  /** Where the tarball was extracted (its `package/` directory). */
  dir: string;
}

let work: string;
const packed = new Map<string, Packed>();
let attw: { code: number; stdout: string };
let loaded: { code: number; stdout: string; stderr: string };

function pkg(name: string): Packed {
  const found = packed.get(name);
  if (!found) throw new Error(`${name} was not packed`);
  return found;
}

async function listFiles(dir: string, base = dir): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(base, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}

/** `npm pack` both workspaces in one npm run, then extract each tarball. */
async function packBoth(): Promise<void> {
  const { stdout } = await run(
    'npm',
    [
      'pack',
      '--json',
      '--ignore-scripts',
      '--pack-destination',
      work,
      '--workspace',
      RUNTIME,
      '--include-workspace-root',
      '--loglevel',
      'error',
    ],
    { cwd: repo, timeout: 60_000 },
  );
  for (const info of JSON.parse(stdout) as { name: string; version: string; filename: string }[]) {
    const tarball = path.join(work, info.filename);
    const into = path.join(work, info.name.replace('/', '+'));
    await mkdir(into);
    await run('tar', ['-xzf', tarball, '-C', into], { timeout: 30_000 });
    const dir = path.join(into, 'package');
    const files = await listFiles(dir);
    const manifest = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const texts = new Map<string, string>();
    await Promise.all(
      files
        .filter((f) => f.endsWith('.map') || (f.startsWith('dist/') && /\.[cm]?js$/.test(f)))
        .map(async (f) => texts.set(f, await readFile(path.join(dir, f), 'utf8'))),
    );
    packed.set(info.name, {
      name: info.name,
      version: info.version,
      tarball,
      dir,
      manifest,
      files,
      read: (file) => texts.get(file) ?? '',
    });
  }
}

/**
 * The types of the runtime, resolved as TypeScript resolves them for ESM and CJS importers under
 * node16/nodenext and for bundlers (arethetypeswrong, on the tarball, offline).
 *
 * - `--profile node16` leaves out `moduleResolution: node10`, which ignores `exports` (so no subpath such
 *   as `/testing` can resolve there) and which TypeScript itself deprecates; kubesmith projects use
 *   nodenext.
 * - `--ignore-rules cjs-resolves-to-esm`: the runtime is ESM only ("type": "module"), so attw reports that a
 *   CommonJS `require` gets ESM. That is what we intend: the package needs Node 20.19+, where `require()`
 *   of an ES module without top-level await works (checked below on the tarball), and TypeScript 5.8+
 *   with `"module": "nodenext"` type-checks such a require. A second, CommonJS build would double the
 *   package and give CJS and ESM importers two copies of the manager and cache classes. Any other
 *   problem (missing or wrong types, false ESM/CJS, unresolved subpaths) still fails.
 */
async function runAttw(tarball: string): Promise<{ code: number; stdout: string }> {
  const bin = path.join(repo, 'node_modules/@arethetypeswrong/cli/dist/index.js');
  const args = [
    bin,
    tarball,
    '--profile',
    'node16',
    '--ignore-rules',
    'cjs-resolves-to-esm',
    '--format',
    'json',
  ];
  try {
    const { stdout } = await run(process.execPath, args, { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; message: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : -1,
      stdout: failed.stdout ?? failed.message,
    };
  }
}

/**
 * The packed runtime installed as npm installs a dependency: its directory under node_modules, and its
 * own dependencies and peers linked from this repository's node_modules; then a CommonJS script requires
 * each entry point and imports it.
 */
async function loadRuntime(runtime: Packed): Promise<{ code: number; stdout: string; stderr: string }> {
  const app = path.join(work, 'app');
  const modules = path.join(app, 'node_modules');
  // Extracted, not linked: Node resolves a linked package's dependencies from where the link points.
  const installed = path.join(modules, '@kubesmith', 'runtime');
  await mkdir(installed, { recursive: true });
  await run('tar', ['-xzf', runtime.tarball, '-C', installed, '--strip-components=1'], { timeout: 30_000 });
  // Its peers too (client-node, optional: envtest imports it; the lean-start test loads the main entry
  // without it).
  const needed = {
    ...(runtime.manifest['dependencies'] as object),
    ...(runtime.manifest['peerDependencies'] as object),
  };
  for (const dep of Object.keys(needed)) {
    await mkdir(path.dirname(path.join(modules, dep)), { recursive: true });
    await symlink(path.join(repo, 'node_modules', dep), path.join(modules, dep), 'dir');
  }
  const entries = Object.keys(runtime.manifest['exports'] as Record<string, unknown>).map((key) =>
    path.posix.join(RUNTIME, key),
  );
  // require() first, so that it loads each module itself (require of ESM fails on top-level await);
  // import() must then give the same exports.
  const script = `(async () => {
    const required = {}, imported = {};
    for (const e of ${JSON.stringify(entries)}) required[e] = Object.keys(require(e)).sort();
    for (const e of ${JSON.stringify(entries)}) imported[e] = Object.keys(await import(e)).sort();
    console.log(JSON.stringify({ required, imported }));
  })().catch((error) => { console.error(error); process.exit(1); });`;
  try {
    const { stdout, stderr } = await run(process.execPath, ['-e', script], { cwd: app, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    return { code: 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? failed.message };
  }
}

beforeAll(async () => {
  for (const built of ['dist/cli/main.js', 'runtime/dist/index.js']) {
    if (!existsSync(path.join(repo, built))) {
      throw new Error(`${built} is missing: run \`npm run build\` first (npm test does)`);
    }
  }
  work = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-release-'));
  await packBoth();
  [attw, loaded] = await Promise.all([runAttw(pkg(RUNTIME).tarball), loadRuntime(pkg(RUNTIME))]);
}, 120_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe.each([CLI, RUNTIME])('the %s tarball', (name) => {
  it('holds every file that bin, main, types and exports name', () => {
    expect(missingTargets(pkg(name))).toEqual([]);
  });

  it('holds no tests, test directories or fixtures', () => {
    expect(shippedTests(pkg(name).files)).toEqual([]);
  });

  it('holds no source map that points at a file it does not ship', () => {
    expect(danglingSourceMaps(pkg(name))).toEqual([]);
  });

  it('has a README and the license', async () => {
    const { files, dir } = pkg(name);
    expect(files).toEqual(expect.arrayContaining(['README.md', 'LICENSE', 'package.json']));
    expect(await readFile(path.join(dir, 'LICENSE'), 'utf8')).toBe(
      await readFile(path.join(repo, 'LICENSE'), 'utf8'),
    );
  });
});

describe('the kubesmith tarball', () => {
  it('starts with a shebang, so npx and the bin link can run it', async () => {
    const cli = pkg(CLI);
    for (const target of Object.values(cli.manifest['bin'] as Record<string, string>)) {
      expect((await readFile(path.join(cli.dir, target), 'utf8')).split('\n')[0]).toBe('#!/usr/bin/env node');
    }
  });

  it('carries CHANGELOG.md: alpha update prints the entries an update crosses from it', async () => {
    const cli = pkg(CLI);
    expect(await readFile(path.join(cli.dir, 'CHANGELOG.md'), 'utf8')).toBe(
      await readFile(path.join(repo, 'CHANGELOG.md'), 'utf8'),
    );
  });

  it('holds the whole templates/ directory', async () => {
    const shipped = pkg(CLI).files.filter((f) => f.startsWith('templates/'));
    const inRepo = (await listFiles(path.join(repo, 'templates'))).map((f) => `templates/${f}`);
    expect(difference(inRepo, shipped)).toEqual({ missing: [], extra: [] });
  });

  it('holds compiled modules of current sources only (tsc never cleans dist/)', async () => {
    const sources = (await listFiles(path.join(repo, 'src'))).filter((f) => !/\.test\.ts$/.test(f));
    // dist/validation/ is the runtime's validator, copied by the build (scripts/validation-files.mjs).
    const validation = (await listFiles(path.join(repo, 'runtime/src/validation')))
      .filter((f) => !/\.test\.ts$/.test(f))
      .map((f) => `validation/${f}`);
    const stale = staleOutputs(pkg(CLI).files, [...sources, ...validation]);
    expect(stale, 'stale build output: rm -rf dist && npm run build').toEqual([]);
  });

  it('ships no source maps: nobody steps through the CLI from node_modules, and src/ is not shipped', () => {
    expect(pkg(CLI).files.filter((f) => f.endsWith('.map'))).toEqual([]);
  });

  it("carries the runtime's validator (dist/validation/): a module per source, the runtime's declarations", async () => {
    // `kubesmith validate` and manifests' rule compiler import it as #validation/*.js (package.json "imports").
    // The runtime ships it bundled, so the build compiles the same sources module by module for the CLI.
    const cli = pkg(CLI);
    const runtime = pkg(RUNTIME);
    const modules = (await listFiles(path.join(repo, 'runtime/src/validation')))
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .map((f) => f.slice(0, -'.ts'.length))
      .sort();
    expect(modules).toContain('validate');
    const copied = cli.files
      .filter((f) => f.startsWith('dist/validation/'))
      .map((f) => f.slice('dist/validation/'.length));
    expect(copied.sort()).toEqual(modules.flatMap((name) => [`${name}.d.ts`, `${name}.js`]).sort());
    for (const name of modules) {
      const [ours, theirs] = await Promise.all([
        readFile(path.join(cli.dir, 'dist/validation', `${name}.d.ts`), 'utf8'),
        readFile(path.join(runtime.dir, 'dist/validation', `${name}.d.ts`), 'utf8'),
      ]);
      expect(ours, `dist/validation/${name}.d.ts differs from the runtime's: run npm run build`).toBe(theirs);
    }
  });

  it('vendors exactly the runtime tarball that is published beside it', async () => {
    const cli = pkg(CLI);
    const runtime = pkg(RUNTIME);
    const vendored = cli.files.filter((f) => f.startsWith('dist/vendor/'));
    expect(vendored).toEqual([`dist/vendor/${tarballName(RUNTIME, runtime.version)}`]);
    const same = (await readFile(path.join(cli.dir, vendored[0]!))).equals(await readFile(runtime.tarball));
    expect(same, 'dist/vendor holds another build of the runtime: run `npm run build`').toBe(true);
  });
});

describe('the @kubesmith/runtime tarball', () => {
  it('ships its TypeScript sources, which its source maps and declaration maps point at', () => {
    const runtime = pkg(RUNTIME);
    const maps = runtime.files.filter((f) => f.endsWith('.map'));
    expect(maps).toContain('dist/index.d.ts.map');
    // dist/index.js re-exports the shared chunk, whose map points at the modules it bundles.
    const chunkMap = maps.find((f) => /^dist\/chunks\/runtime-[^/]*\.js\.map$/.test(f));
    expect(chunkMap).toBeDefined();
    expect((JSON.parse(runtime.read(chunkMap!)) as { sources: string[] }).sources).toContain(
      '../../src/manager.ts',
    );
    expect(runtime.files).toContain('src/index.ts');
  });

  it('holds the bundle of its entry points and the chunks they load, nothing left over', () => {
    const runtime = pkg(RUNTIME);
    expect(runtime.files).toEqual(expect.arrayContaining(['dist/index.js', 'dist/testing/index.js']));
    expect(unreachableOutputs(runtime), 'stale build output: npm run build -w @kubesmith/runtime').toEqual(
      [],
    );
  });

  it('has types that resolve for ESM and CJS importers (node16/nodenext) and for bundlers', () => {
    let problems: { kind: string; resolutionKind?: string; entrypoint?: string }[] = [];
    try {
      problems = (JSON.parse(attw.stdout) as { analysis: { problems: typeof problems } }).analysis.problems;
    } catch {
      expect.fail(`attw printed no analysis (exit ${attw.code}): ${attw.stdout.slice(0, 2000)}`);
    }
    // The JSON lists every problem found; the exit code applies the profile and the ignored rule.
    const counted = problems.filter((p) => p.resolutionKind !== 'node10' && p.kind !== 'CJSResolvesToESM');
    expect(counted).toEqual([]);
    expect(attw.code).toBe(0);
  });

  it('loads from the tarball with import and with require, each entry point exporting the same names', () => {
    expect(loaded.code, loaded.stderr).toBe(0);
    const { required, imported } = JSON.parse(loaded.stdout) as Record<string, Record<string, string[]>>;
    expect(imported!['@kubesmith/runtime']).toContain('Manager');
    expect(imported!['@kubesmith/runtime/testing']).toContain('FakeClient');
    expect(imported!['@kubesmith/runtime/envtest']).toContain('startEnvtest');
    expect(required).toEqual(imported);
  });
});

describe('lockstep versions', () => {
  it('both packages have one version', () => {
    expect(pkg(RUNTIME).version).toBe(pkg(CLI).version);
  });

  it('a project made by the packed CLI asks for that version of the runtime', async () => {
    const version = pkg(RUNTIME).version;
    const registry = await resolveKubesmithPackages({
      root: pkg(CLI).dir,
      env: {},
      isPublished: () => Promise.resolve(true),
    });
    expect(registry.runtime).toBe(`^${version}`);
    expect(registry.cli).toBe(`^${version}`);
    // Before the registry has the version (or when it cannot be asked), the project gets the runtime
    // tarball vendored in the CLI: the same bytes as the runtime that is published.
    const local = await resolveKubesmithPackages({
      root: pkg(CLI).dir,
      env: { KUBESMITH_CLI_SPEC: 'kubesmith@test' },
      isPublished: () => Promise.resolve(false),
    });
    expect(local.runtime).toBe(`file:.kubesmith/${tarballName(RUNTIME, version)}`);
    const runtimeBytes = await readFile(pkg(RUNTIME).tarball);
    expect(local.files.map((f) => [f.path, f.bytes.equals(runtimeBytes)])).toEqual([
      [`.kubesmith/${tarballName(RUNTIME, version)}`, true],
    ]);
  });
});
