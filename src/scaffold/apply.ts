/**
 * Writing a plan to disk, all or nothing. Every file is first written to a temporary name beside its
 * target; only when all of them are written are they renamed into place. Any failure removes the
 * temporary files and the directories the plan created, and puts back files already replaced, so the
 * project is left exactly as it was.
 */
import { mkdir, rename, rm, rmdir, writeFile, chmod } from 'node:fs/promises';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
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
  const createdDirs: string[] = [];
  const temps: { temp: string; target: string; previous: string | Uint8Array | undefined }[] = [];
  const renamed: typeof temps = [];
  const stamp = `.kubesmith-${process.pid}-${Date.now()}.tmp`;
  try {
    for (const entry of todo) {
      const target = path.join(plan.root, entry.path);
      await makeDirs(path.dirname(target), createdDirs);
      const temp = `${target}${stamp}`;
      await writeFile(temp, entry.content, { flag: 'wx' });
      temps.push({ temp, target, previous: entry.previous });
      if (entry.executable) await chmod(temp, 0o755);
    }
    for (const item of temps) {
      await rename(item.temp, item.target);
      renamed.push(item);
    }
  } catch (error) {
    await rollback(temps, renamed, createdDirs);
    const where = describeFailure(error, plan.root);
    throw new KubesmithError(`cannot write ${where}`, {
      hint: 'nothing was changed; check that the directory is writable and that no file stands where a directory must go',
      cause: error,
    });
  }
  return { written: todo.map((entry) => entry.path) };
}

/** mkdir -p that remembers each directory it made, outermost first. */
async function makeDirs(dir: string, created: string[]): Promise<void> {
  const first = await mkdir(dir, { recursive: true });
  if (first === undefined) return;
  let current = dir;
  const made: string[] = [];
  while (current.length >= first.length) {
    made.unshift(current);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  created.push(...made);
}

async function rollback(
  temps: { temp: string; target: string; previous: string | Uint8Array | undefined }[],
  renamed: { temp: string; target: string; previous: string | Uint8Array | undefined }[],
  createdDirs: string[],
): Promise<void> {
  for (const item of renamed) {
    if (item.previous === undefined) await rm(item.target, { force: true });
    else await writeFile(item.target, item.previous);
  }
  for (const item of temps) await rm(item.temp, { force: true });
  for (const dir of [...createdDirs].reverse()) await rmdir(dir).catch(() => undefined);
}

function describeFailure(error: unknown, root: string): string {
  const err = error as NodeJS.ErrnoException;
  const file = err.path ? path.relative(root, err.path).replace(/\.kubesmith-\d+-\d+\.tmp$/, '') : undefined;
  const reason =
    err.code === 'EACCES' || err.code === 'EPERM'
      ? 'permission denied'
      : err.code === 'ENOTDIR' || err.code === 'EEXIST'
        ? 'a file stands where a directory is needed'
        : err.code === 'ENOSPC'
          ? 'no space left on device'
          : (err.message ?? String(error));
  return `${file || root}: ${reason}`;
}
