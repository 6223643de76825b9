/**
 * Writing generated files atomically and checking them for drift. Every file is first written to a
 * temporary name in its own directory; only when all are written are they renamed into place, so an
 * error leaves every previous file as it was. The file system calls are synchronous: a run handles
 * hundreds of small files one after the other, and a promise per call cost a 200-kind run a tenth of a
 * second of waiting on the thread pool.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type * as Diff from 'diff';

export interface OutputFile {
  path: string;
  content: string;
}

export type FileStatus = 'created' | 'updated' | 'unchanged';

function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Writes `files` below `root`; unchanged files are not touched. Returns each file's status. */
export async function writeFilesAtomically(
  root: string,
  files: readonly OutputFile[],
): Promise<{ path: string; status: FileStatus }[]> {
  const statuses: { path: string; status: FileStatus }[] = [];
  const pending: { temp: string; target: string }[] = [];
  const dirs = new Set<string>();
  try {
    for (const file of files) {
      const target = path.join(root, file.path);
      const previous = readIfExists(target);
      if (previous === file.content) {
        statuses.push({ path: file.path, status: 'unchanged' });
        continue;
      }
      const dir = path.dirname(target);
      if (!dirs.has(dir)) mkdirSync(dir, { recursive: true });
      dirs.add(dir);
      const temp = path.join(
        dir,
        `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
      );
      pending.push({ temp, target });
      writeFileSync(temp, file.content);
      statuses.push({ path: file.path, status: previous === undefined ? 'created' : 'updated' });
    }
  } catch (error) {
    for (const { temp } of pending) rmSync(temp, { force: true });
    throw error;
  }
  for (const { temp, target } of pending) renameSync(temp, target);
  return statuses;
}

/** The unified diff between the files on disk and `files`, for each file that differs. */
export async function diffAgainstDisk(
  root: string,
  files: readonly OutputFile[],
): Promise<{ path: string; diff: string }[]> {
  const out: { path: string; diff: string }[] = [];
  let createTwoFilesPatch: typeof Diff.createTwoFilesPatch | undefined;
  for (const file of files) {
    const previous = readIfExists(path.join(root, file.path));
    if (previous === file.content) continue;
    // Loaded only when a file differs: its 20 modules cost a run that writes or finds nothing stale ~15 ms.
    createTwoFilesPatch ??= (await import('diff')).createTwoFilesPatch;
    out.push({
      path: file.path,
      diff: createTwoFilesPatch(
        `a/${file.path}`,
        `b/${file.path}`,
        previous ?? '',
        file.content,
        previous === undefined ? 'missing' : 'on disk',
        'generated',
      ),
    });
  }
  return out;
}
