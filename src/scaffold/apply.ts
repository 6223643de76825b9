/**
 * Writing a plan to disk, all or nothing: conflicts refuse the whole plan; otherwise its changes go through
 * the project's one atomic writer (src/project/write.ts), which leaves the project exactly as it was when
 * any write fails.
 */
import { KubesmithError } from '../errors.js';
import { writeAtomically } from '../project/write.js';
import { changes, conflicts, type Plan } from './plan.js';

export interface ApplyResult {
  written: string[];
}

export async function applyPlan(plan: Plan): Promise<ApplyResult> {
  const blocked = conflicts(plan);
  if (blocked.length > 0) {
    const list = blocked.map((entry) => entry.path).join(', ');
    throw new KubesmithError(
      blocked.length === 1 ? `${list} already exists` : `${blocked.length} files already exist: ${list}`,
      { hint: 'nothing was written; pass --force to overwrite, or --dry-run to see the plan' },
    );
  }
  const todo = changes(plan);
  writeAtomically(
    plan.root,
    todo.map((entry) => ({
      path: entry.path,
      content: entry.content,
      previous: entry.previous,
      ...(entry.executable ? { executable: true } : {}),
      ...(entry.action === 'remove' ? { remove: true } : {}),
    })),
  );
  return { written: todo.map((entry) => entry.path) };
}
