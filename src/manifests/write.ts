/**
 * Writing generated files and checking them for drift. The writing is the project's one atomic writer
 * (src/project/write.ts): an error leaves every previous file as it was.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type * as Diff from 'diff';
import { writeAtomically, type FileWrite } from '../project/write.js';

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
  const writes: FileWrite[] = [];
  for (const file of files) {
    const previous = readIfExists(path.join(root, file.path));
    if (previous === file.content) {
      statuses.push({ path: file.path, status: 'unchanged' });
      continue;
    }
    writes.push({ path: file.path, content: file.content, previous });
    statuses.push({ path: file.path, status: previous === undefined ? 'created' : 'updated' });
  }
  writeAtomically(root, writes);
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
