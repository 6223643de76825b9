/**
 * Changing the cluster so that it can be put back: each object is recorded in the state file as it was
 * before run touches it, and restore() puts every recorded object back, in reverse order, once run ends
 * (or, after a run killed outright, when the next one starts).
 */
import type { Cluster, KindName } from './cluster.js';
import type { KubeObject } from './project-modules.js';
import { removeState, writeState, type ChangedObject, type RunState } from './state.js';

/** The field manager of run's server-side applies: what marks an object as changed by run. */
export const FIELD_MANAGER = 'kubesmith-run';

/** Whether `object` carries run's field manager (run applied it, and nobody replaced it since). */
export function changedByRun(object: KubeObject): boolean {
  return (object.metadata?.managedFields ?? []).some((entry) => entry.manager === FIELD_MANAGER);
}

export class Changes {
  private readonly state: RunState;

  constructor(
    private readonly root: string,
    readonly cluster: Cluster,
  ) {
    this.state = { pid: process.pid, server: cluster.server, context: cluster.context, changed: [] };
  }

  /**
   * Records `name` as it is now (the first time only: a second change keeps the first original), then
   * returns it for the caller to change.
   */
  async record(kind: KindName, name: string): Promise<KubeObject | undefined> {
    const current = await this.cluster.get(kind, name);
    if (!this.state.changed.some((entry) => entry.kind === kind && entry.name === name)) {
      this.state.changed.push({ kind, name, original: current ? withoutServerFields(current) : null });
      writeState(this.root, this.state);
    }
    return current;
  }

  get recorded(): number {
    return this.state.changed.length;
  }

  /** Puts everything back; see restore(). */
  async restore(log: (line: string) => void): Promise<void> {
    await restore(this.root, this.cluster, this.state, log);
  }
}

/**
 * Puts back every object of `state`, newest first: deletes those run created, and writes the original of
 * the others back (a CRD: its conversion only, the rest may have been installed since). An object that
 * no longer carries run's field manager is left alone: someone else has replaced it since, or run never
 * changed it. Removes the state file once all are back; an object that fails keeps it, for the next run.
 */
export async function restore(
  root: string,
  cluster: Cluster,
  state: RunState,
  log: (line: string) => void,
): Promise<void> {
  const left: ChangedObject[] = [];
  let failure: unknown;
  for (const entry of [...state.changed].reverse()) {
    try {
      await restoreOne(cluster, entry, log);
    } catch (error) {
      left.unshift(entry);
      failure ??= error;
    }
  }
  if (left.length === 0) {
    removeState(root);
    return;
  }
  writeState(root, { ...state, changed: left });
  throw failure;
}

async function restoreOne(
  cluster: Cluster,
  entry: ChangedObject,
  log: (line: string) => void,
): Promise<void> {
  // A conflict (someone wrote the object between our read and our write) is read again, a few times.
  for (let attempt = 1; ; attempt++) {
    const current = await cluster.get(entry.kind, entry.name);
    if (!current || !changedByRun(current)) return;
    try {
      if (entry.original === null) {
        await cluster.delete(entry.kind, entry.name);
        log(`deleted ${entry.kind} ${entry.name}`);
      } else {
        const written = await cluster.update(entry.kind, putBack(entry, current));
        // The write's own manager took the fields it changed; a second write that changes nothing else
        // leaves the field ownership exactly as recorded.
        const managedFields = entry.original.metadata?.managedFields ?? [];
        if (JSON.stringify(written.metadata?.managedFields ?? []) !== JSON.stringify(managedFields))
          await cluster.update(entry.kind, { ...written, metadata: { ...written.metadata, managedFields } });
        log(`restored ${entry.kind} ${entry.name}`);
      }
      return;
    } catch (error) {
      if (attempt >= 3 || (error as { cause?: { statusCode?: number } }).cause?.statusCode !== 409)
        throw error;
    }
  }
}

/** The object to write back: the original on the current resourceVersion (a CRD: its conversion). */
function putBack(entry: ChangedObject, current: KubeObject): KubeObject {
  const original = entry.original!;
  const metadata = {
    ...(entry.kind === 'CustomResourceDefinition' ? current.metadata : original.metadata),
    resourceVersion: current.metadata?.resourceVersion,
    // The field ownership as it was: run's manager leaves with its change.
    managedFields: original.metadata?.managedFields ?? [],
  };
  if (entry.kind !== 'CustomResourceDefinition') return { ...original, metadata };
  const spec = { ...(current['spec'] as Record<string, unknown>) };
  const conversion = (original['spec'] as Record<string, unknown> | undefined)?.['conversion'];
  if (conversion === undefined) delete spec['conversion'];
  else spec['conversion'] = conversion;
  return { ...current, metadata, spec };
}

function withoutServerFields(object: KubeObject): KubeObject {
  // resourceVersion is taken from the object when it is written back; the rest the server keeps as is.
  const { resourceVersion: _resourceVersion, ...metadata } = object.metadata ?? {};
  void _resourceVersion;
  return { ...object, metadata };
}
