/** The corpus of the import round trip (test/fixtures/import/README.md). */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { CrdDocument } from './compare.js';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures');

/**
 * Public CRDs, read where they are in Go's module cache and never copied into this repository: the
 * envtest set-up (`npm run envtest`) downloads these modules to build kube-apiserver and kwok, so `go mod
 * download` finds them there without the network.
 */
const PUBLIC_CRDS: readonly { module: string; files: readonly string[] }[] = [
  // Gateway API v1.0.0-rc1's standard install, kept by the API server's ratcheting tests.
  {
    module: 'k8s.io/apiextensions-apiserver@v0.37.2',
    files: ['test/integration/ratcheting_test_cases/crds/standard-install.yaml'],
  },
  {
    module: 'k8s.io/kubernetes@v1.37.2',
    files: ['volumesnapshotclasses', 'volumesnapshotcontents', 'volumesnapshots'].map(
      (name) => `cluster/addons/volumesnapshots/crd/snapshot.storage.k8s.io_${name}.yaml`,
    ),
  },
  { module: 'sigs.k8s.io/kwok@v0.8.0', files: ['kustomize/crd/bases/kwok.x-k8s.io_stages.yaml'] },
];

/** The public CRDs' paths in Go's module cache. */
function publicCrds(): string[] {
  return PUBLIC_CRDS.flatMap(({ module, files }) => {
    let dir: string;
    try {
      const out = execFileSync('go', ['mod', 'download', '-json', module], {
        encoding: 'utf8',
        timeout: 300_000,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      dir = (JSON.parse(out) as { Dir: string }).Dir;
    } catch (error) {
      throw new Error(
        `the import corpus reads public CRDs from Go's module ${module}, which go mod download did not give: ` +
          `${(error as Error).message}\nhint: run \`npm run envtest\` first (it downloads the module), with Go on the PATH`,
      );
    }
    return files.map((file) => path.join(dir, file));
  });
}

/** The corpus: controller-gen's CRDs of the golden fixtures and of the import corpus, hand-written ones and public ones. */
export function corpus(): string[] {
  const files: string[] = [];
  for (const fixture of readdirSync(FIXTURES)) {
    const dir = path.join(FIXTURES, fixture, 'controller-gen/config/crd/bases');
    try {
      for (const file of readdirSync(dir)) if (file.endsWith('.yaml')) files.push(path.join(dir, file));
    } catch {
      // a fixture without controller-gen's output
    }
  }
  for (const sub of ['import/controller-gen', 'import/hand']) {
    const dir = path.join(FIXTURES, sub);
    try {
      for (const file of readdirSync(dir)) if (file.endsWith('.yaml')) files.push(path.join(dir, file));
    } catch {
      // not there
    }
  }
  return [...files.sort(), ...publicCrds()];
}

/** The CRD documents of a corpus file. */
export function crdDocuments(text: string): CrdDocument[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as (CrdDocument & { kind?: string }) | null)
    .filter((d): d is CrdDocument & { kind?: string } => d?.kind === 'CustomResourceDefinition');
}
