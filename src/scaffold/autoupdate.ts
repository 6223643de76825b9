/**
 * `--plugins autoupdate` (on `init` and `edit`): `.github/workflows/auto-update.yml`, a weekly workflow that
 * runs `kubesmith alpha update --force`, builds and tests the result with a read-only token, and opens a pull
 * request (or, on conflicts, an issue) with `gh`. PROJECT records the plugin, so `alpha generate` makes the
 * workflow again.
 */
import { serializeProject } from '../project/config.js';
import type { LoadedProject } from '../project/find.js';
import { PROJECT_FILE } from '../project/layout.js';
import { AUTOUPDATE_PLUGIN } from '../project/plugins.js';
import { NODE_MAJOR } from './context.js';
import type { Plan } from './plan.js';
import { addFolder } from './render.js';
import { Tree } from './tree.js';

/** The plugin names `--plugins` accepts for it: ours, and kubebuilder's. */
export const AUTOUPDATE_NAMES = /^autoupdate(?:\/v1-alpha|\.kubebuilder\.io\/v1-alpha)?$/;

/** Adds the workflow to `tree` (a file of the same path with other content is a conflict, or --force's). */
export async function addAutoupdateWorkflow(tree: Tree): Promise<void> {
  await addFolder(tree, 'autoupdate', { nodeMajor: NODE_MAJOR });
}

/** PROJECT's top-level extra keys with the plugin recorded. */
export function withAutoupdate(extra: Record<string, unknown>): Record<string, unknown> {
  const current = extra['plugins'];
  const plugins = typeof current === 'object' && current !== null ? current : {};
  return { ...extra, plugins: { ...plugins, [AUTOUPDATE_PLUGIN]: {} } };
}

/** `edit --plugins autoupdate` (and its replay by `alpha generate`): the workflow and PROJECT's record. */
export async function planAutoupdate(project: LoadedProject, force: boolean): Promise<Plan> {
  const tree = new Tree(project.root, force);
  await addAutoupdateWorkflow(tree);
  const { config } = project;
  await tree.write(PROJECT_FILE, serializeProject({ ...config, extra: withAutoupdate(config.extra) }));
  return tree.plan();
}
