/**
 * What a run changed in the cluster, kept in the project (`.kubesmith/run/state.json`) before each change is
 * made: the object as it was, or that there was none. The run puts them back when it ends; a run killed
 * outright (SIGKILL, a power cut) leaves the file, and the next run puts them back first.
 *
 * The file is in the project, where anyone may have written it (a pull request), so it is taken as a
 * claim, not on trust: its size and shape are checked, only the kinds run changes can appear in it, and an
 * object is only put back when it still carries run's field manager, the mark of run's own change.
 */
import fs from 'node:fs';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import { containedPath } from '../project/contained.js';
import { LOCAL_PACKAGES_DIR } from '../project/layout.js';
import { writeAtomically } from '../project/write.js';
import { KINDS, type KindName } from './cluster.js';
import type { KubeObject } from './project-modules.js';

/** Run's own directory: the state file and the run's certificates. It ignores itself in git. */
export const RUN_DIR = `${LOCAL_PACKAGES_DIR}/run`;
export const STATE_FILE = `${RUN_DIR}/state.json`;

/** A state file is a few objects; a larger one is not run's. */
const MAX_STATE_BYTES = 4 * 2 ** 20;

export interface ChangedObject {
  kind: KindName;
  name: string;
  /** The object before run changed it; null when run created it. */
  original: KubeObject | null;
}

export interface RunState {
  /** The process of the run; another live run in the same project is not interrupted. */
  pid: number;
  /** The API server the changes were made on. */
  server: string;
  context: string | undefined;
  changed: ChangedObject[];
}

/** Creates run's directory with a .gitignore of `*`, so that neither state nor keys get committed. */
export function prepareRunDir(root: string): string {
  const dir = containedPath(root, RUN_DIR);
  fs.mkdirSync(dir, { recursive: true });
  const ignore = path.join(dir, '.gitignore');
  if (!fs.existsSync(ignore))
    fs.writeFileSync(ignore, '# kubesmith run: state and certificates of a run\n*\n');
  return dir;
}

export function readState(root: string): RunState | undefined {
  const file = containedPath(root, STATE_FILE);
  let text: string;
  try {
    const size = fs.statSync(file).size;
    if (size > MAX_STATE_BYTES) throw invalid(`it is ${size} bytes, more than run ever writes`);
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw invalid((error as Error).message);
  }
  return checkState(data);
}

export function writeState(root: string, state: RunState): void {
  writeAtomically(root, [
    {
      path: STATE_FILE,
      content: `${JSON.stringify(state, null, 2)}\n`,
      previous: undefined,
    },
  ]);
}

export function removeState(root: string): void {
  fs.rmSync(containedPath(root, STATE_FILE), { force: true });
}

function checkState(data: unknown): RunState {
  const state = data as Partial<RunState> | null;
  if (typeof state !== 'object' || state === null) throw invalid('it is not an object');
  if (!Number.isSafeInteger(state.pid) || (state.pid as number) <= 0) throw invalid('no pid');
  if (typeof state.server !== 'string') throw invalid('no server');
  if (state.context !== undefined && typeof state.context !== 'string') throw invalid('a bad context');
  if (!Array.isArray(state.changed)) throw invalid('no list of changed objects');
  for (const entry of state.changed as unknown[]) {
    const changed = entry as Partial<ChangedObject> | null;
    if (typeof changed !== 'object' || changed === null) throw invalid('a changed object is not an object');
    if (typeof changed.kind !== 'string' || !Object.hasOwn(KINDS, changed.kind))
      throw invalid(`a changed object of kind ${String(changed.kind)}, which run never changes`);
    if (typeof changed.name !== 'string' || !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(changed.name))
      throw invalid('a changed object without a valid name');
    const original = changed.original;
    if (original !== null && (typeof original !== 'object' || original.metadata?.name !== changed.name))
      throw invalid(`the original of ${changed.name} is not that object`);
  }
  return state as RunState;
}

function invalid(why: string): KubesmithError {
  return new KubesmithError(`${STATE_FILE} is not a state file of kubesmith run: ${why}`, {
    hint: `delete ${STATE_FILE}, then check by hand the webhook configurations and CRDs a previous run may have left changed`,
  });
}
