/** Locating and loading the project that a command works on. */
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import { yaml } from '../lazy-yaml.js';
import type { ProjectConfig } from './config.js';

import { PROJECT_FILE } from './layout.js';

export { PROJECT_FILE } from './layout.js';

/** Aliases (`*name`) a PROJECT may use: kubesmith writes none; many are an expansion bomb. */
export const MAX_ALIAS_COUNT = 10;

export interface LoadedProject {
  /** The directory holding PROJECT. */
  root: string;
  config: ProjectConfig;
  /** PROJECT's text as read, so a plan can tell whether it changes. */
  text: string;
}

/** The nearest directory from `cwd` upwards that holds a PROJECT file, or undefined. */
export function findProjectRoot(cwd: string): string | undefined {
  let dir = path.resolve(cwd);
  for (;;) {
    if (existsSync(path.join(dir, PROJECT_FILE))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The project root, or the error every command but init gives outside a project. */
export function requireProjectRoot(cwd: string): string {
  const root = findProjectRoot(cwd);
  if (root === undefined) {
    throw new KubesmithError(
      `not in a kubesmith project: no ${PROJECT_FILE} file in ${path.resolve(cwd)} or its parents`,
      {
        hint: 'run `kubesmith init --domain <domain>` first, or cd into your project',
      },
    );
  }
  return root;
}

/**
 * The largest PROJECT kubesmith reads. A real one is a few KiB; parsing takes tens of times its size in
 * memory (a 60 MB file took 2.3 GB), and any pull request can change it.
 */
export const MAX_PROJECT_BYTES = 1024 * 1024;

/** Refuses a PROJECT larger than MAX_PROJECT_BYTES, before it is parsed. */
export function checkProjectSize(bytes: number, file: string): void {
  if (bytes > MAX_PROJECT_BYTES) {
    throw new KubesmithError(
      `${file}: PROJECT is larger than the ${MAX_PROJECT_BYTES} bytes a PROJECT may have`,
      { hint: 'a PROJECT records a few settings and resources; restore it from git (`git diff PROJECT`)' },
    );
  }
}

/**
 * PROJECT's text, read only when it is a regular file, and never more than MAX_PROJECT_BYTES of it (a
 * PROJECT that links to /dev/zero or a pipe would otherwise be read forever).
 */
export function readProjectText(file: string): string {
  const fd = openSync(file, 'r');
  try {
    if (!fstatSync(fd).isFile()) {
      throw new KubesmithError(`${file}: PROJECT is not a regular file`, {
        hint: 'PROJECT is a YAML file at the project root; restore it from git (`git diff PROJECT`)',
      });
    }
    const buffer = Buffer.alloc(MAX_PROJECT_BYTES + 1);
    let length = 0;
    for (let read = -1; read !== 0 && length < buffer.length; length += read) {
      read = readSync(fd, buffer, length, buffer.length - length, null);
    }
    checkProjectSize(length, file);
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

export async function loadProject(cwd: string): Promise<LoadedProject> {
  const root = requireProjectRoot(cwd);
  const file = path.join(root, PROJECT_FILE);
  const text = readProjectText(file);
  // Loaded here, not at the top: it loads the yaml package, which `kubesmith manifests` does without.
  const { parseProject } = await import('./config.js');
  return { root, config: parseProject(text, file), text };
}

/**
 * The domain recorded in the project's PROJECT file, when it has one: all `kubesmith manifests` needs of
 * PROJECT (for the hint of a missing +groupName), read without parsing the whole configuration.
 */
export function readProjectDomain(root: string): string | undefined {
  const file = path.join(root, PROJECT_FILE);
  let text: string;
  try {
    text = readProjectText(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const data = yaml().parse(text, { maxAliasCount: MAX_ALIAS_COUNT }) as { domain?: unknown } | null;
    return typeof data?.domain === 'string' ? data.domain : undefined;
  } catch (error) {
    throw new KubesmithError(`cannot read ${file}: ${(error as Error).message}`, {
      hint: 'fix the YAML syntax of the PROJECT file',
    });
  }
}
