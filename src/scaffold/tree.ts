/**
 * A virtual file tree over the project directory, in the manner of Angular's schematics: commands read
 * and change files here, in memory, and the result becomes a plan. Nothing touches the disk until the
 * plan is applied, so a command that fails half way has written nothing.
 */
import { readFile } from 'node:fs/promises';
import { containedPaths } from '../project/contained.js';
import type { Plan, PlanEntry } from './plan.js';

/** What to do when a file that a template would create already exists with other content. */
export type IfExists = 'conflict' | 'skip' | 'overwrite';

interface Change {
  content: string;
  kind: 'create' | 'update';
  executable?: boolean;
}

export class Tree {
  private readonly disk = new Map<string, string | undefined>();
  private readonly changes = new Map<string, Change>();
  private readonly conflicts = new Map<string, { content: string | Uint8Array; reason: string }>();
  /** Binary files (tarballs): kept apart, since the text operations (inserts, formatting) never apply. */
  private readonly binaries = new Map<string, { bytes: Uint8Array; previous: Buffer | undefined }>();
  /** Files a template would create exactly as they are: reported, not written. */
  private readonly unchanged = new Set<string>();
  readonly warnings: string[] = [];
  /** The disk is read through the writer's check: a plan never compares with a file outside the project. */
  private readonly inside: (relative: string) => string;

  constructor(
    readonly root: string,
    private readonly force = false,
  ) {
    this.inside = containedPaths(root);
  }

  /** The file's current content in the tree (changed or on disk), or undefined when it does not exist. */
  async read(file: string): Promise<string | undefined> {
    const changed = this.changes.get(file);
    if (changed) return changed.content;
    return this.readDisk(file);
  }

  async exists(file: string): Promise<boolean> {
    return (await this.read(file)) !== undefined;
  }

  /**
   * Creates `file`. When it exists with other content: `conflict` records a conflict (or overwrites with
   * --force), `skip` leaves it, `overwrite` replaces it.
   */
  async create(
    file: string,
    content: string,
    ifExists: IfExists = 'conflict',
    executable = false,
  ): Promise<void> {
    const current = await this.read(file);
    if (current === undefined) {
      this.changes.set(file, { content, kind: 'create', executable });
      return;
    }
    if (current === content) {
      if (!this.changes.has(file)) this.unchanged.add(file);
      return;
    }
    if (ifExists === 'skip') return;
    if (ifExists === 'conflict' && !this.force) {
      this.conflicts.set(file, { content, reason: 'exists with other content; --force overwrites it' });
      return;
    }
    this.changes.set(file, { content, kind: 'update', executable });
  }

  /** Creates a binary file; one that exists with other bytes is a conflict, unless --force. */
  async createBinary(file: string, bytes: Uint8Array): Promise<void> {
    let previous: Buffer | undefined;
    try {
      previous = await readFile(this.inside(file));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    }
    if (previous && !previous.equals(bytes) && !this.force) {
      this.conflicts.set(file, {
        content: bytes,
        reason: 'exists with other content; --force overwrites it',
      });
      return;
    }
    this.binaries.set(file, { bytes, previous });
  }

  /** Replaces the content of a file the command owns (PROJECT, generated files). */
  async write(file: string, content: string): Promise<void> {
    const exists = (await this.read(file)) !== undefined;
    const previous = this.changes.get(file);
    this.changes.set(file, { content, kind: previous?.kind ?? (exists ? 'update' : 'create') });
  }

  /** The files changed so far, with their new content and whether they are new. */
  changed(): { file: string; content: string; created: boolean }[] {
    return [...this.changes].map(([file, change]) => ({
      file,
      content: change.content,
      created: change.kind === 'create',
    }));
  }

  /** The file as it is on disk, before any change of this tree. */
  readOriginal(file: string): Promise<string | undefined> {
    return this.readDisk(file);
  }

  /** Replaces the content of a changed file, keeping how it changed (created or updated). */
  reformat(file: string, content: string): void {
    const change = this.changes.get(file);
    if (change) this.changes.set(file, { ...change, content });
  }

  /** Turns the changes into a plan, in path order so that output is stable. */
  async plan(): Promise<Plan> {
    const entries: PlanEntry[] = [];
    for (const [file, change] of this.changes) {
      const previous = await this.readDisk(file);
      if (previous === change.content) {
        entries.push({ action: 'unchanged', path: file, content: change.content, previous });
        continue;
      }
      const action = previous === undefined ? 'create' : change.kind === 'create' ? 'overwrite' : 'update';
      entries.push({
        action,
        path: file,
        content: change.content,
        ...(previous === undefined ? {} : { previous }),
        ...(change.executable ? { executable: true } : {}),
      });
    }
    for (const file of this.unchanged) {
      if (this.changes.has(file)) continue;
      const content = (await this.readDisk(file)) ?? '';
      entries.push({ action: 'unchanged', path: file, content, previous: content });
    }
    for (const [file, { bytes, previous }] of this.binaries) {
      if (previous?.equals(bytes))
        entries.push({ action: 'unchanged', path: file, content: bytes, previous });
      else
        entries.push({
          action: previous ? 'overwrite' : 'create',
          path: file,
          content: bytes,
          ...(previous ? { previous } : {}),
        });
    }
    for (const [file, conflict] of this.conflicts) {
      if (this.changes.has(file)) continue;
      entries.push({ action: 'conflict', path: file, content: conflict.content, reason: conflict.reason });
    }
    entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { root: this.root, entries, warnings: [...this.warnings] };
  }

  private async readDisk(file: string): Promise<string | undefined> {
    if (this.disk.has(file)) return this.disk.get(file);
    let content: string | undefined;
    try {
      content = await readFile(this.inside(file), 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      content = undefined;
    }
    this.disk.set(file, content);
    return content;
  }
}
