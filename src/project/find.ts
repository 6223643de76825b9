/** Locating and loading the project that a command works on. */
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import type { ProjectConfig } from './config.js';

/** The name of kubesmith's record of a project. */
export const PROJECT_FILE = 'PROJECT';

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

export async function loadProject(cwd: string): Promise<LoadedProject> {
  const root = requireProjectRoot(cwd);
  const file = path.join(root, PROJECT_FILE);
  const text = await readFile(file, 'utf8');
  // Loaded here, not at the top: it loads the yaml package, which `kubesmith manifests` does without.
  const { parseProject } = await import('./config.js');
  return { root, config: parseProject(text, file), text };
}
