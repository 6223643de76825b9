/**
 * Where a new project gets kubesmith's own packages (`@kubesmith/runtime`, and `kubesmith` itself as a dev
 * dependency for its `manifests` script) from.
 *
 * - Published kubesmith: the registry, `^<version>`, as any dependency.
 * - kubesmith run from a checkout, or from a tarball of a version the registry does not have: the project
 *   carries both packages as tarballs under `.kubesmith/` and refers to them with `file:` specs, so that
 *   `npm install`, `npm ci` in CI and the Dockerfile's build work without the registry having kubesmith.
 *   The CLI's own tarball is re-packed from the running package; the runtime's was packed into
 *   `dist/vendor/` when the CLI was built.
 * - `KUBESMITH_RUNTIME_SPEC` / `KUBESMITH_CLI_SPEC` override either spec (any npm spec).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubesmithError } from '../errors.js';
import { kubesmithVersion } from '../version.js';
import { LOCAL_PACKAGES_DIR } from '../project/layout.js';

const RUNTIME_PACKAGE = '@kubesmith/runtime';
const CLI_PACKAGE = 'kubesmith';
/** The directory of a project that holds kubesmith's tarballs. */
/** How long to wait for the registry's answer before deciding it does not have this version. */
const REGISTRY_TIMEOUT_MS = 20_000;

/** The root of the running kubesmith package (this module is `dist/scaffold/` or `src/scaffold/` in it). */
export const packageRoot: string = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));

export interface KubesmithPackages {
  /** npm spec of @kubesmith/runtime for the project's dependencies. */
  runtime: string;
  /** npm spec of kubesmith for the project's devDependencies. */
  cli: string;
  /** Tarballs to write into the project (paths relative to its root). */
  files: { path: string; bytes: Buffer }[];
  /** One line for the user when the packages do not come from the registry. */
  note?: string;
  /**
   * The commit of the checkout kubesmith runs from, when its packages come as tarballs: PROJECT records it
   * in cliVersion (`0.1.0+<commit>`), since the registry's `kubesmith@0.1.0` is another build.
   */
  build?: string;
}

export interface ResolveOptions {
  env?: NodeJS.ProcessEnv;
  /** Default: the running package. */
  root?: string;
  /** Default: the running version. */
  version?: string;
  /** Test seam: whether the registry has `name@version`; undefined when it could not be asked. */
  isPublished?: (name: string, version: string) => Promise<boolean | undefined>;
}

export async function resolveKubesmithPackages(options: ResolveOptions = {}): Promise<KubesmithPackages> {
  const env = options.env ?? process.env;
  const root = options.root ?? packageRoot;
  const version = options.version ?? kubesmithVersion;
  const override = { runtime: env['KUBESMITH_RUNTIME_SPEC'], cli: env['KUBESMITH_CLI_SPEC'] };
  const registry = `^${version}`;
  if (override.runtime && override.cli) return { runtime: override.runtime, cli: override.cli, files: [] };

  let reason: string;
  let build: string | undefined;
  if (isCheckout(root)) {
    reason = `kubesmith runs from a checkout (${root})`;
    build = checkoutCommit(root);
  } else {
    const published = await (options.isPublished ?? isPublishedOnRegistry)(RUNTIME_PACKAGE, version);
    if (published === true)
      return { runtime: override.runtime || registry, cli: override.cli || registry, files: [] };
    reason =
      published === false
        ? `kubesmith ${version} is not on the npm registry`
        : `the npm registry could not be asked for kubesmith ${version}`;
  }

  const files: KubesmithPackages['files'] = [];
  const specs = { runtime: override.runtime ?? '', cli: override.cli ?? '' };
  if (!specs.runtime) {
    const file = `${LOCAL_PACKAGES_DIR}/${tarballName(RUNTIME_PACKAGE, version)}`;
    files.push({ path: file, bytes: await readVendoredRuntime(root, version) });
    specs.runtime = `file:${file}`;
  }
  if (!specs.cli) {
    const file = `${LOCAL_PACKAGES_DIR}/${tarballName(CLI_PACKAGE, version)}`;
    files.push({ path: file, bytes: await packSelf(root) });
    specs.cli = `file:${file}`;
  }
  return {
    ...specs,
    files,
    ...(build ? { build } : {}),
    note: `${reason}: the project installs ${files.map((f) => f.path.slice(LOCAL_PACKAGES_DIR.length + 1)).join(' and ')} from ${LOCAL_PACKAGES_DIR}/ (commit it with the project)`,
  };
}

/** npm's tarball name: `@kubesmith/runtime` 0.1.0 -> `kubesmith-runtime-0.1.0.tgz`. */
export function tarballName(name: string, version: string): string {
  return `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
}

/** The runtime tarball the build packed beside the CLI (`npm run build`: dist/vendor/). */
export function vendoredRuntimePath(root: string, version: string): string {
  return path.join(root, 'dist', 'vendor', tarballName(RUNTIME_PACKAGE, version));
}

/** The short commit of the git checkout at `root`, or undefined (not a git work tree, no git). */
function checkoutCommit(root: string): string | undefined {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 5000,
    }).trim();
    return /^[0-9a-f]{7,40}$/.test(commit) ? commit : undefined;
  } catch {
    return undefined;
  }
}

/** A git checkout (or any copy of the repository): the runtime workspace sits beside the CLI. */
function isCheckout(root: string): boolean {
  const manifest = path.join(root, 'runtime', 'package.json');
  if (!existsSync(manifest)) return false;
  try {
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === RUNTIME_PACKAGE;
  } catch {
    return false;
  }
}

async function readVendoredRuntime(root: string, version: string): Promise<Buffer> {
  const file = vendoredRuntimePath(root, version);
  try {
    return await readFile(file);
  } catch {
    throw new KubesmithError(
      `this kubesmith has no ${RUNTIME_PACKAGE} tarball to give the project (${file})`,
      {
        hint: isCheckout(root)
          ? `run \`npm install\` (or \`npm run build\`) in ${root}: the build packs the runtime, then run init again`
          : 'install a released kubesmith from the registry, or set KUBESMITH_RUNTIME_SPEC to an npm spec of @kubesmith/runtime',
      },
    );
  }
}

/**
 * The running CLI as a tarball, packed from its own package directory (its `files` only). Its `prepare`
 * script (which builds a checkout on `npm install`) is dropped: npm counts `prepare` of a tarball dependency
 * as an install script, and warns about it on every install of the project.
 */
async function packSelf(root: string): Promise<Buffer> {
  const dest = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-pack-'));
  try {
    const { editPackageJson } = await import('./tarball.js');
    return editPackageJson(await readFile(await npmPack(root, dest)), withoutPrepare);
  } finally {
    await rm(dest, { recursive: true, force: true });
  }
}

function withoutPrepare(manifest: Record<string, unknown>): Record<string, unknown> {
  const scripts = { ...(manifest['scripts'] as Record<string, string> | undefined) };
  delete scripts['prepare'];
  return { ...manifest, scripts };
}

/** `npm pack DIR` without lifecycle scripts: dist/ is already built in a checkout and in a package. */
async function npmPack(dir: string, dest: string): Promise<string> {
  const { execa } = await import('execa');
  const result = await execa(
    'npm',
    ['pack', dir, '--ignore-scripts', '--json', '--pack-destination', dest, '--loglevel', 'error'],
    { cwd: dest, stdin: 'ignore', reject: false, timeout: 120_000 },
  );
  const info = result.exitCode === 0 ? (JSON.parse(result.stdout) as { filename?: string }[])[0] : undefined;
  if (!info?.filename) {
    throw new KubesmithError(`packing kubesmith for the project failed: ${String(result.stderr).trim()}`, {
      hint: 'nothing was written; check that npm works (`npm --version`), or set KUBESMITH_CLI_SPEC',
    });
  }
  return path.join(dest, info.filename);
}

/**
 * Whether the registry npm is configured with has `name@version`. Asks npm itself, so that .npmrc
 * (a private registry, a proxy, credentials) applies. A 404 is false; no answer (offline, timeout) undefined.
 */
async function isPublishedOnRegistry(name: string, version: string): Promise<boolean | undefined> {
  const { execa } = await import('execa');
  const result = await execa('npm', ['view', `${name}@${version}`, 'version', '--json'], {
    stdin: 'ignore',
    reject: false,
    timeout: REGISTRY_TIMEOUT_MS,
  });
  if (result.exitCode === 0) return String(result.stdout).trim() !== '';
  return /\bE404\b/.test(`${String(result.stdout)}${String(result.stderr)}`) ? false : undefined;
}
