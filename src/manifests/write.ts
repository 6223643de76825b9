/**
 * Writing generated files atomically and checking them for drift. Every file is first written to a
 * temporary name in its own directory; only when all are written are they renamed into place, so an
 * error leaves every previous file as it was.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type * as Diff from 'diff';

export interface OutputFile {
  path: string;
  content: string;
}

export type FileStatus = 'created' | 'updated' | 'unchanged';

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
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
  try {
    for (const file of files) {
      const target = path.join(root, file.path);
      const previous = await readIfExists(target);
      if (previous === file.content) {
        statuses.push({ path: file.path, status: 'unchanged' });
        continue;
      }
      await mkdir(path.dirname(target), { recursive: true });
      const temp = path.join(
        path.dirname(target),
        `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
      );
      pending.push({ temp, target });
      await writeFile(temp, file.content);
      statuses.push({ path: file.path, status: previous === undefined ? 'created' : 'updated' });
    }
  } catch (error) {
    await Promise.all(pending.map(({ temp }) => rm(temp, { force: true })));
    throw error;
  }
  for (const { temp, target } of pending) await rename(temp, target);
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
    const previous = await readIfExists(path.join(root, file.path));
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
