/**
 * The manifests a scaffold's sources give (CRDs, the manager's role, webhook configurations), as kubebuilder
 * runs `make manifests` after `create api`, made part of the scaffold's own plan: the generator reads the
 * plan's TypeScript before it is written, `--dry-run` lists the CRD and role files a real run writes, and one
 * atomic write puts the scaffold and its manifests in place, or neither.
 */
import { isGeneratedManifest } from '../project/layout.js';
import type { Plan, PlanAction } from './plan.js';
import type { Tree } from './tree.js';

/**
 * Adds the manifests of the tree's sources to the tree. Problems in the user's sources are warnings: the
 * scaffold stands, without its manifests, and the warning says how to make them.
 */
export async function addManifests(tree: Tree): Promise<void> {
  const sources = new Map(tree.changed().map((file) => [file.file, file.content]));
  // ts-morph loads only here (and in `kubesmith manifests`), so other commands stay fast.
  const { generateManifests, formatDiagnostic, isError } = await import('../manifests/index.js');
  const { files, diagnostics } = await generateManifests({ root: tree.root, sources });
  if (diagnostics.some(isError)) {
    for (const d of diagnostics) tree.warnings.push(formatDiagnostic(d));
    tree.warnings.push(
      'the manifests were not regenerated: fix the problems above, then run `npm run manifests`',
    );
    return;
  }
  for (const file of files) await tree.write(file.path, file.content);
}

const STATUS: Record<PlanAction, string> = {
  create: 'created',
  overwrite: 'updated',
  update: 'updated',
  remove: 'removed',
  unchanged: 'unchanged',
  conflict: 'conflict',
};

/** The generated manifests of a plan and what happens to each, as `--json` reports them. */
export function manifestsOf(plan: Plan): { path: string; status: string }[] {
  return plan.entries
    .filter((entry) => isGeneratedManifest(entry.path))
    .map((entry) => ({ path: entry.path, status: STATUS[entry.action] }));
}
