/** `run --install-crds`: the project's CRDs server-side applied, as `npm run install-crds` does, and ready. */
import { KubesmithError } from '../errors.js';
import type { Cluster } from './cluster.js';
import type { CrdManifest } from './manifests.js';

/** The field manager of the CRDs run installs (they stay installed after the run, as with install-crds). */
export const INSTALL_FIELD_MANAGER = 'kubesmith-install';

/** How long a new CRD may take to be served. */
const ESTABLISHED_TIMEOUT_MS = 30_000;

export async function installCrds(
  cluster: Cluster,
  crds: readonly CrdManifest[],
  log: (line: string) => void,
): Promise<void> {
  for (const crd of crds) {
    await cluster.apply('CustomResourceDefinition', crd.object, INSTALL_FIELD_MANAGER);
    log(`applied CustomResourceDefinition ${crd.name}`);
  }
  // The manager's informers list each kind at start: a CRD not yet served would fail them.
  for (const crd of crds) await waitEstablished(cluster, crd.name);
}

async function waitEstablished(cluster: Cluster, name: string): Promise<void> {
  const deadline = Date.now() + ESTABLISHED_TIMEOUT_MS;
  for (;;) {
    const current = await cluster.get('CustomResourceDefinition', name);
    const conditions = ((current?.['status'] as { conditions?: unknown } | undefined)?.conditions ?? []) as {
      type?: string;
      status?: string;
    }[];
    if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (Date.now() > deadline)
      throw new KubesmithError(
        `the CRD ${name} was not established within ${ESTABLISHED_TIMEOUT_MS / 1000} s`,
        {
          hint: `see its conditions: kubectl get crd ${name} -o yaml`,
        },
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
