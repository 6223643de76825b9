/**
 * Writing generated files and checking them for drift. The writing is the project's one atomic writer
 * (src/project/write.ts): an error leaves every previous file as it was. What is on disk is read through
 * the same check as the writes (contained.ts): a diff never shows a file from outside the project.
 */
import { readFileSync, statSync } from 'node:fs';
import type * as Diff from 'diff';
import { containedPaths } from '../project/contained.js';
import { StagedWrite } from '../project/write.js';

export interface OutputFile {
  path: string;
  content: string;
}

export type FileStatus = 'created' | 'updated' | 'unchanged';

function readIfExists(file: string): string | undefined {
  try {
    // A stat first: a file that is not there (every file of a first run) costs no exception.
    if (statSync(file, { throwIfNoEntry: false }) === undefined) return undefined;
    return readFileSync(file, 'utf8');
  } catch (error) {
    // Not there, or a file or directory stands in the way: the write says which, with its name.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return undefined;
    throw error;
  }
}

/**
 * Generated files written below `root` as they are added, all or none (a StagedWrite); a file whose
 * content is already on disk is not touched.
 */
export class OutputWriter {
  private readonly write: StagedWrite;
  private readonly statuses: { path: string; status: FileStatus }[] = [];

  constructor(root: string) {
    this.write = new StagedWrite(root);
  }

  add(file: OutputFile): void {
    // Checked by the write itself, which then stages the file without a second check.
    const previous = readIfExists(this.write.pathOf(file.path));
    if (previous === file.content) {
      this.statuses.push({ path: file.path, status: 'unchanged' });
      return;
    }
    this.write.stage({ path: file.path, content: file.content, previous });
    this.statuses.push({ path: file.path, status: previous === undefined ? 'created' : 'updated' });
  }

  /** Puts the added files in place; returns each one's status, by path. */
  async commit(): Promise<{ path: string; status: FileStatus }[]> {
    await this.write.commit();
    return [...this.statuses].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** Leaves the disk as it was before the first add. */
  discard(): Promise<void> {
    return this.write.discard();
  }
}

/** Writes `files` below `root`; unchanged files are not touched. Returns each file's status. */
export async function writeFilesAtomically(
  root: string,
  files: readonly OutputFile[],
): Promise<{ path: string; status: FileStatus }[]> {
  const writer = new OutputWriter(root);
  try {
    for (const file of files) writer.add(file);
  } catch (error) {
    await writer.discard();
    throw error;
  }
  return writer.commit();
}

/** The unified diff between the files on disk and `files`, for each file that differs. */
export async function diffAgainstDisk(
  root: string,
  files: readonly OutputFile[],
): Promise<{ path: string; diff: string }[]> {
  const out: { path: string; diff: string }[] = [];
  let createTwoFilesPatch: typeof Diff.createTwoFilesPatch | undefined;
  const inside = containedPaths(root);
  for (const file of files) {
    const previous = readIfExists(inside(file.path));
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
