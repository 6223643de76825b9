/**
 * A plan is everything a command will do to the user's files, decided before anything is written:
 * `--dry-run` prints it, otherwise `applyPlan` checks it whole and then writes it atomically.
 */

export type PlanAction = 'create' | 'overwrite' | 'update' | 'remove' | 'unchanged' | 'conflict';

export interface PlanEntry {
  action: PlanAction;
  /** Relative to the project root, with forward slashes. */
  path: string;
  /**
   * The new content (for conflict: the content kubesmith would have written; for remove: none, empty);
   * bytes for tarballs.
   */
  content: string | Uint8Array;
  /** The content on disk before the command, when the file exists. */
  previous?: string | Uint8Array;
  /** Why: for a conflict, what to do about it. */
  reason?: string;
  /** Executable bit for created files. */
  executable?: boolean;
}

export interface Plan {
  root: string;
  entries: PlanEntry[];
  /** Things the user should know that do not stop the command (an insertion point they removed, say). */
  warnings: string[];
}

/** Entries that change the disk. */
export function changes(plan: Plan): PlanEntry[] {
  return plan.entries.filter((entry) => entry.action !== 'unchanged' && entry.action !== 'conflict');
}

export function conflicts(plan: Plan): PlanEntry[] {
  return plan.entries.filter((entry) => entry.action === 'conflict');
}

const verbs: Record<PlanAction, string> = {
  create: 'create',
  overwrite: 'overwrite',
  update: 'update',
  remove: 'remove',
  unchanged: 'unchanged',
  conflict: 'conflict',
};

/** One line per entry, aligned, as `--dry-run` and the normal run print it. */
export function describePlan(
  plan: Plan,
  style: (action: PlanAction, text: string) => string = (_a, t) => t,
): string {
  const width = Math.max(...Object.values(verbs).map((verb) => verb.length));
  return plan.entries
    .map((entry) => {
      const verb = style(entry.action, verbs[entry.action].padEnd(width));
      return `${verb}  ${entry.path}${entry.reason ? ` (${entry.reason})` : ''}`;
    })
    .join('\n');
}

/** The plan as `--json` prints it: no file contents, which can be large. */
export function planSummary(plan: Plan): { action: PlanAction; path: string; reason?: string }[] {
  return plan.entries.map(({ action, path, reason }) => ({ action, path, ...(reason ? { reason } : {}) }));
}
