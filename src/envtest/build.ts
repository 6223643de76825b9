/**
 * Builds etcd, kube-apiserver and kubectl from Go modules (KUBERNETES.md, "What can be built").
 *
 * `k8s.io/kubernetes` cannot be required as it is: its go.mod replaces every `k8s.io/*` staging module with
 * a local path, and replaces only apply in the main module. So each build runs in a small consumer module
 * that requires the upstream module and replaces each staging module with its published `v0.X.Y` release.
 * etcd's server module carries local replaces too, and is built from its own consumer module.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import { buildFailed } from './messages.js';
import type { K8sRelease } from './versions.js';

export interface BuildRequest {
  release: K8sRelease;
  /** An empty directory that receives `etcd`, `kube-apiserver` and `kubectl`. */
  outDir: string;
  /** The `go` executable. */
  go: string;
  env: NodeJS.ProcessEnv;
  /** One line per step, for people (stderr). */
  progress: (line: string) => void;
  /** Go's own output (`go: downloading ...`), shown with --verbose. */
  detail?: (line: string) => void;
}

/** Builds the three binaries into `request.outDir`. Temporary module directories are removed afterwards. */
export async function buildFromGoModules(request: BuildRequest): Promise<void> {
  const { release, progress } = request;
  const work = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-envtest-build-'));
  try {
    const toolchain = await goToolchain(request, work);
    progress(
      `building Kubernetes ${release.version} test binaries with ${toolchain.version} (${request.go})`,
    );
    const k8s = await kubernetesModule(request, work, toolchain);
    progress(
      `building kube-apiserver and kubectl v${release.version} (the longest step: a few minutes on a cold cache)`,
    );
    await buildKubernetesCommands(request, k8s, ['kube-apiserver', 'kubectl']);

    const etcdDir = path.join(work, 'etcd');
    await mkdir(etcdDir);
    const etcd = `v${release.etcd}`;
    await writeFile(
      path.join(etcdDir, 'go.mod'),
      [
        'module kubesmith.local/envtest/etcd',
        '',
        `go ${toolchain.line}`,
        '',
        `require go.etcd.io/etcd/server/v3 ${etcd}`,
        '',
      ].join('\n'),
    );
    progress(`building etcd ${etcd}`);
    await runGo(
      request,
      etcdDir,
      [
        'build',
        '-trimpath',
        '-ldflags',
        `-s -w -X go.etcd.io/etcd/api/v3/version.Version=${release.etcd} -X go.etcd.io/etcd/api/v3/version.GitSHA=${etcd}`,
        '-o',
        path.join(request.outDir, 'etcd'),
        // The module root of go.etcd.io/etcd/server/v3 is etcd's main package.
        'go.etcd.io/etcd/server/v3',
      ],
      'building etcd',
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The `go` in use: its full version (`go1.26.8`) and its language line for a go.mod (`1.26`). */
export interface GoToolchain {
  version: string;
  line: string;
}

export async function goToolchain(request: BuildRequest, cwd: string): Promise<GoToolchain> {
  const version = (await runGo(request, cwd, ['env', 'GOVERSION'], 'checking the Go version')).trim();
  return { version, line: /^go(\d+\.\d+)/.exec(version)?.[1] ?? '1.24' };
}

/**
 * Writes the consumer module of `k8s.io/kubernetes` into `<work>/kubernetes` and returns it with the
 * `-ldflags` that stamp the release's version. Every Kubernetes binary (kube-apiserver, kubectl, and the
 * controllers of cluster mode) is built from this same module, so later builds reuse Go's build cache.
 */
export async function kubernetesModule(
  request: BuildRequest,
  work: string,
  toolchain: GoToolchain,
): Promise<{ dir: string; ldflags: string }> {
  const { release, progress } = request;
  const dir = path.join(work, 'kubernetes');
  await mkdir(dir);
  const k8s = `v${release.version}`;
  progress(`downloading k8s.io/kubernetes ${k8s}`);
  const info = JSON.parse(
    await runGo(
      request,
      dir,
      ['mod', 'download', '-json', `k8s.io/kubernetes@${k8s}`],
      'downloading k8s.io/kubernetes',
    ),
  ) as { GoMod?: string; Error?: string };
  if (!info.GoMod) throw failure('downloading k8s.io/kubernetes', info.Error ?? 'no go.mod in the answer');
  const staging = stagingModules(await readFile(info.GoMod, 'utf8'));
  const stagingVersion = `v0.${release.minor}.${release.version.split('.')[2]}`;
  await writeFile(
    path.join(dir, 'go.mod'),
    [
      'module kubesmith.local/envtest/kubernetes',
      '',
      `go ${toolchain.line}`,
      '',
      `require k8s.io/kubernetes ${k8s}`,
      '',
      ...staging.map((m) => `replace ${m} => ${m} ${stagingVersion}`),
      '',
    ].join('\n'),
  );
  const buildDate = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const stamp = (pkg: string): string[] => [
    `-X ${pkg}.gitVersion=${k8s}`,
    `-X ${pkg}.gitMajor=${release.major}`,
    `-X ${pkg}.gitMinor=${release.minor}`,
    `-X ${pkg}.gitTreeState=clean`,
    `-X ${pkg}.buildDate=${buildDate}`,
  ];
  // The binaries read component-base's stamps; client-go keeps a copy for user agents.
  const ldflags = [
    '-s',
    '-w',
    ...stamp('k8s.io/component-base/version'),
    ...stamp('k8s.io/client-go/pkg/version'),
  ];
  return { dir, ldflags: ldflags.join(' ') };
}

/** Builds `k8s.io/kubernetes/cmd/<name>` of the consumer module, for each name, into `request.outDir`. */
export async function buildKubernetesCommands(
  request: BuildRequest,
  k8s: { dir: string; ldflags: string },
  names: string[],
): Promise<void> {
  await runGo(
    request,
    k8s.dir,
    [
      'build',
      '-trimpath',
      '-ldflags',
      k8s.ldflags,
      '-o',
      request.outDir + path.sep,
      ...names.map((name) => `k8s.io/kubernetes/cmd/${name}`),
    ],
    `building ${names.join(' and ')}`,
  );
}

/** The module paths that a k8s.io/kubernetes go.mod replaces with `./staging/...` directories. */
export function stagingModules(goMod: string): string[] {
  const modules = new Set<string>();
  // Inside a `replace (...)` block: `k8s.io/api => ./staging/src/k8s.io/api`; alone: `replace k8s.io/api => ...`.
  for (const line of goMod.split('\n')) {
    const match = /^\s*(?:replace\s+)?([^\s(]+)(?:\s+v\S+)?\s+=>\s+\.\/staging\//.exec(line);
    if (match?.[1]) modules.add(match[1]);
  }
  return [...modules].sort();
}

export function failure(step: string, detail: string): KubesmithError {
  const { message, hint } = buildFailed(step, detail);
  return new KubesmithError(message, { hint });
}

/**
 * Runs `go` in `cwd` and returns its stdout. Go's stderr goes to `detail` line by line; a heartbeat line
 * every 30 s shows a long download or compile is alive. On failure the error carries Go's last lines.
 */
export function runGo(request: BuildRequest, cwd: string, args: string[], step: string): Promise<string> {
  const env: NodeJS.ProcessEnv = {
    ...request.env,
    // The consumer module resolves what it needs; the user's GOFLAGS (-mod=vendor) or go.work must not apply.
    GOFLAGS: '-mod=mod',
    GOWORK: 'off',
    GO111MODULE: 'on',
    // Static binaries, as Kubernetes releases them; no C toolchain needed.
    CGO_ENABLED: '0',
  };
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(request.go, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    const tail: string[] = [];
    let partial = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        request.detail?.(line);
        tail.push(line);
        if (tail.length > 20) tail.shift();
      }
    });
    const heartbeat = setInterval(
      () => request.progress(`  still ${step} (${Math.round((Date.now() - started) / 1000)} s)`),
      30_000,
    );
    child.on('error', (error) => {
      clearInterval(heartbeat);
      reject(failure(step, error.message));
    });
    child.on('close', (code, signal) => {
      clearInterval(heartbeat);
      if (partial) tail.push(partial);
      if (code === 0) resolve(stdout);
      else
        reject(
          failure(
            step,
            `go ${args[0]} exited with ${signal ?? code}\n${tail.filter(Boolean).join('\n') || stdout}`,
          ),
        );
    });
  });
}
