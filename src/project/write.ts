/**
 * Writing files into a project, all or nothing: the one writer of the scaffolder (applyPlan) and the
 * generator (kubesmith manifests). Every file is first written to a temporary name beside its target; only
 * when all of them are written are they renamed into place. Any failure removes the temporary files and the
 * directories the write created, and puts back files already replaced, so the project is left exactly as it
 * was. The file system calls are synchronous: a run writes up to hundreds of small files one after the
 * other, and a promise per call cost a 200-kind `kubesmith manifests` a tenth of a second of waiting on the
 * thread pool.
 *
 * StagedWrite is the same write for files that come one by one (the CRDs of `kubesmith manifests`): each is
 * written to its temporary name while the next is still being generated, and only commit() renames them.
 *
 * Both refuse a path that leads outside the project (contained.ts), whatever computed it: writeAtomically
 * before it writes anything, StagedWrite when the file is staged.
 */
import fs from 'node:fs';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import { containedPaths } from './contained.js';
import { TEMPORARY_PREFIX } from './layout.js';

export interface FileWrite {
  /** Relative to the root, with forward slashes. */
  path: string;
  content: string | Uint8Array;
  /** The content on disk before the write, put back on failure; undefined when the file is new. */
  previous: string | Uint8Array | undefined;
  /** Executable bit for the written file. */
  executable?: boolean;
  /** Remove the file instead (its content is not used): put back if anything fails. */
  remove?: boolean;
}

/** Writes `files` below `root`, all or none. Throws a KubesmithError naming the file that failed. */
export function writeAtomically(root: string, files: readonly FileWrite[]): void {
  const inside = containedPaths(root);
  const targets = files.map((file) => inside(file.path));
  const createdDirs: string[] = [];
  const temps: Temp[] = [];
  const stamp = tempSuffix();
  try {
    for (const [index, file] of files.entries()) {
      const target = targets[index]!;
      const temp = `${target}${stamp}`;
      if (file.remove) {
        // Moved aside to its temporary name with the renames, deleted once they all succeeded.
        temps.push({ temp, target, previous: file.previous, remove: true });
        continue;
      }
      makeDirs(path.dirname(target), createdDirs);
      fs.writeFileSync(temp, file.content, { flag: 'wx' });
      temps.push({ temp, target, previous: file.previous });
      if (file.executable) fs.chmodSync(temp, 0o755);
    }
  } catch (error) {
    rollback(temps, [], createdDirs);
    throw writeError(error, root);
  }
  renameIntoPlace(root, temps, createdDirs);
}

/**
 * An all-or-nothing write of files handed over one by one. stage() creates a file's directories and starts
 * writing it to its temporary name on libuv's thread pool, where creating it (a third of a millisecond on
 * ext4, in the kernel) overlaps with whatever the caller does next: `kubesmith manifests` stages each CRD as
 * it is generated, and gives the event loop a turn between two. commit() waits for the writes and renames
 * every file into place; discard() removes what was staged. Either leaves the project as it was when
 * anything fails, and so does Ctrl-C (SIGINT, SIGTERM) meanwhile.
 */
export class StagedWrite {
  private readonly createdDirs: string[] = [];
  /** The temporary files written, with what their targets held. */
  private readonly temps: Temp[] = [];
  /** Every temporary name handed to an open, written or not yet: what a signal removes. */
  private readonly staged: string[] = [];
  private readonly writing: Promise<void>[] = [];
  private readonly stamp = tempSuffix();
  private readonly inside: (relative: string) => string;
  private failure: unknown;
  private state: 'open' | 'finishing' | 'done' = 'open';
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    for (const temp of this.staged) fs.rmSync(temp, { force: true });
    rollback([], [], this.createdDirs);
    process.kill(process.pid, signal);
  };

  /** The directories this write made or found: each is made (mkdir -p) once, not once per file. */
  private readonly dirs = new Set<string>();

  constructor(private readonly root: string) {
    this.inside = containedPaths(root);
  }

  /**
   * Where `relative` is written, checked as stage() checks it (and remembered: staging it then costs no
   * second check). Throws a KubesmithError when the path leads outside the project.
   */
  pathOf(relative: string): string {
    return this.inside(relative);
  }

  /** Starts writing `file`. Throws at once (a KubesmithError) when its path leads outside the project. */
  stage(file: FileWrite): void {
    if (this.state !== 'open') throw new Error('StagedWrite: stage() after commit() or discard()');
    if (this.failure !== undefined) return;
    const target = this.inside(file.path);
    if (this.staged.length === 0) process.once('SIGINT', this.onSignal).once('SIGTERM', this.onSignal);
    try {
      const dir = path.dirname(target);
      if (!this.dirs.has(dir)) {
        makeDirs(dir, this.createdDirs);
        this.dirs.add(dir);
      }
    } catch (error) {
      this.failure = error;
      return;
    }
    const temp = `${target}${this.stamp}`;
    this.staged.push(temp);
    this.writing.push(
      new Promise<void>((resolve) => {
        // One trip to the thread pool, for the open that creates the file; writing a few kilobytes to the
        // page cache and closing take microseconds.
        fs.open(temp, 'wx', (openError, fd) => {
          if (openError) {
            this.failure ??= openError;
            return resolve();
          }
          this.temps.push({ temp, target, previous: file.previous });
          try {
            fs.writeFileSync(fd, file.content);
            if (file.executable) fs.fchmodSync(fd, 0o755);
          } catch (error) {
            this.failure ??= error;
          } finally {
            fs.closeSync(fd);
          }
          resolve();
        });
      }),
    );
  }

  /**
   * Renames every staged file into place once all are written. Throws a KubesmithError naming the file
   * that failed, having put everything back.
   */
  async commit(): Promise<void> {
    await this.finish();
    if (this.failure !== undefined) {
      rollback(this.temps, [], this.createdDirs);
      throw writeError(this.failure, this.root);
    }
    renameIntoPlace(this.root, this.temps, this.createdDirs);
  }

  /** Removes every staged file and the directories staging made; after commit(), nothing. */
  async discard(): Promise<void> {
    if (this.state !== 'open') return;
    await this.finish();
    rollback(this.temps, [], this.createdDirs);
  }

  private async finish(): Promise<void> {
    if (this.state !== 'open') throw new Error('StagedWrite: committed or discarded twice');
    this.state = 'finishing';
    await Promise.all(this.writing);
    process.off('SIGINT', this.onSignal).off('SIGTERM', this.onSignal);
    this.state = 'done';
  }
}

interface Temp {
  temp: string;
  target: string;
  previous: string | Uint8Array | undefined;
  /** A file to remove: renamed from target to temp, then deleted. */
  remove?: boolean;
}

/** The suffix of a write's temporary names: this process and this moment, so no two writes share one. */
function tempSuffix(): string {
  return `${TEMPORARY_PREFIX}${process.pid}-${Date.now()}.tmp`;
}

/**
 * Renames the written temporary files onto their targets, and the files to remove aside; any failure puts
 * everything back. Then deletes what was set aside.
 */
function renameIntoPlace(root: string, temps: Temp[], createdDirs: string[]): void {
  const renamed: Temp[] = [];
  try {
    for (const item of temps) {
      if (item.remove) {
        if (!fs.existsSync(item.target)) continue; // gone already
        fs.renameSync(item.target, item.temp);
      } else fs.renameSync(item.temp, item.target);
      renamed.push(item);
    }
  } catch (error) {
    rollback(temps, renamed, createdDirs);
    throw writeError(error, root);
  }
  for (const item of temps) if (item.remove) fs.rmSync(item.temp, { force: true });
}

function writeError(error: unknown, root: string): KubesmithError {
  return new KubesmithError(`cannot write ${describeFailure(error, root)}`, {
    hint: 'nothing was changed; check that the directory is writable and that no file stands where a directory must go',
    cause: error,
  });
}

/** mkdir -p that remembers each directory it made, outermost first. */
function makeDirs(dir: string, created: string[]): void {
  const first = fs.mkdirSync(dir, { recursive: true });
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

function rollback(temps: Temp[], renamed: Temp[], createdDirs: string[]): void {
  for (const item of renamed) {
    if (item.remove) fs.renameSync(item.temp, item.target);
    else if (item.previous === undefined) fs.rmSync(item.target, { force: true });
    else fs.writeFileSync(item.target, item.previous);
  }
  for (const item of temps) fs.rmSync(item.temp, { force: true });
  for (const dir of [...createdDirs].reverse()) {
    try {
      fs.rmdirSync(dir);
    } catch {
      // Not empty (something else wrote there meanwhile) or gone: leave it.
    }
  }
}

function describeFailure(error: unknown, root: string): string {
  const err = error as NodeJS.ErrnoException;
  const file = err.path ? path.relative(root, err.path).replace(/\.kubesmith-\d+-\d+\.tmp$/, '') : undefined;
  const reason =
    err.code === 'EACCES' || err.code === 'EPERM'
      ? 'permission denied'
      : err.code === 'ENOTDIR' || err.code === 'EEXIST'
        ? 'a file stands where a directory is needed'
        : err.code === 'EISDIR'
          ? 'a directory stands where the file goes'
          : err.code === 'ENOSPC'
            ? 'no space left on device'
            : (err.message ?? String(error));
  return `${file || root}: ${reason}`;
}
