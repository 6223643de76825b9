/**
 * Builds the binaries of envtest's cluster mode from Go modules (KUBERNETES.md, "A fuller cluster without a
 * container runtime"): kube-controller-manager and kube-scheduler from the same consumer module as
 * kube-apiserver (so a warm Go build cache from the base build is reused), and KWOK from its own.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildKubernetesCommands, goToolchain, kubernetesModule, runGo, type BuildRequest } from './build.js';

/** The programs cluster mode adds to etcd, kube-apiserver and kubectl. */
export const CONTROLLER_BINARIES = ['kube-controller-manager', 'kube-scheduler', 'kwok'] as const;

/**
 * The KWOK release built for cluster mode. It does not follow the Kubernetes version: v0.8.0 was verified
 * with kube-apiserver 1.36.3 and 1.34.2.
 */
export const KWOK_VERSION = '0.8.0';

/** Builds the three programs into `request.outDir` (an empty directory). */
export async function buildControllersFromGoModules(request: BuildRequest): Promise<void> {
  const { release, progress } = request;
  const work = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-envtest-build-'));
  try {
    const toolchain = await goToolchain(request, work);
    progress(
      `building the cluster-mode binaries for Kubernetes ${release.version} with ${toolchain.version}`,
    );
    const k8s = await kubernetesModule(request, work, toolchain);
    progress(`building kube-controller-manager and kube-scheduler v${release.version}`);
    await buildKubernetesCommands(request, k8s, ['kube-controller-manager', 'kube-scheduler']);

    const kwokDir = path.join(work, 'kwok');
    await mkdir(kwokDir);
    // kwok's go.mod asks for go 1.26.0, a patch release: the consumer module names the full version in use
    // (a bare `go 1.26` sorts below 1.26.0 and would make Go look for another toolchain).
    await writeFile(
      path.join(kwokDir, 'go.mod'),
      [
        'module kubesmith.local/envtest/kwok',
        '',
        `go ${/^go(\d+\.\d+\.\d+)/.exec(toolchain.version)?.[1] ?? `${toolchain.line}.0`}`,
        '',
        `require sigs.k8s.io/kwok v${KWOK_VERSION}`,
        '',
      ].join('\n'),
    );
    progress(`building kwok v${KWOK_VERSION} (its first build downloads ~330 MB of Go modules)`);
    await runGo(
      request,
      kwokDir,
      [
        'build',
        '-trimpath',
        '-ldflags',
        `-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=v${KWOK_VERSION}`,
        '-o',
        path.join(request.outDir, 'kwok'),
        'sigs.k8s.io/kwok/cmd/kwok',
      ],
      'building kwok',
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
