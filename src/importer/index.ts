/**
 * `kubesmith import crd` without the CLI: the inputs' CRDs as TypeScript files under the output directory,
 * `<group>/<version>/<kind>.types.ts` and `<group>/<version>/group-version.ts`, formatted, and the record
 * of what it wrote (RECORD_FILE: each file's sha256), all written at once through the project's atomic
 * writer (src/project/write.ts) or not at all.
 *
 * The record tells kubesmith's files from anyone's: a file it wrote and nobody changed since is replaced by
 * a new import; one edited since, or one it did not write, stops the run (a conflict) unless `force`. The
 * record is a file anyone can edit, so a line naming anything but a file the importer writes stops the
 * run too, before anything is read through it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import { containedPaths } from '../project/contained.js';
import { EXTERNAL_API_DIR, IMPORT_RECORD_FILE } from '../project/layout.js';
import { writeAtomically, type FileWrite } from '../project/write.js';
import { readCrd, type Crd } from './crd.js';
import { crdCopy, crdCopyName } from './crd-copy.js';
import { emitGroupVersion, emitVersion } from './emit.js';
import { formatter } from './format.js';
import { DEFAULT_LIMITS, parseDocuments, readInputs, type InputText, type ReadLimits } from './read.js';

export const RECORD_FILE = IMPORT_RECORD_FILE;
/** Where imported types go in a project, relative to its root. */
export const DEFAULT_OUT_DIR = EXTERNAL_API_DIR;

const HEADER = '';

export interface ImportOptions {
  inputs: readonly string[];
  cwd: string;
  stdin: NodeJS.ReadableStream;
  /** The output directory, absolute. */
  outDir: string;
  /** Only these versions (each must be in at least one CRD). Default: all. */
  versions?: readonly string[];
  force?: boolean;
  limits?: ReadLimits;
  /** Inputs already read (the CRDs of `--from-cluster`), before those of `inputs`. */
  texts?: readonly InputText[];
  /**
   * In a project: config/crd/external, absolute, where a copy of each CRD goes (crd-copy.ts), tracked as
   * the types are, by a record file of its own.
   */
  crdCopyDir?: string;
}

export type ImportStatus = 'created' | 'updated' | 'unchanged' | 'conflict';

export interface ImportFile {
  /** Relative to the output directory. */
  path: string;
  content: string;
  status: ImportStatus;
  /** What is on disk, if anything. */
  previous: string | undefined;
}

/** Files of one directory and the record of that directory that lists them. */
export interface TrackedFiles {
  /** The directory, absolute. */
  dir: string;
  files: ImportFile[];
  record: string;
}

export interface ImportPlan extends TrackedFiles {
  crds: { group: string; kind: string; plural: string; versions: string[] }[];
  /** The CRDs' copies, when the import is into a project. */
  copies?: TrackedFiles;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The files the importer writes: `<group>/<version>/<name>.ts`, of names the CRD checks allowed. */
const IMPORTED_FILE = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[a-z]([-a-z0-9]*[a-z0-9])?\/[a-z0-9][a-z0-9.-]*\.ts$/;
/** The CRD copies it writes in config/crd/external: `<group>_<plural>.yaml`. */
const COPIED_CRD = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?_[a-z]([-a-z0-9]*[a-z0-9])?\.yaml$/;

/** What each record lists: its lines' shape for the error, and the files' names. */
const RECORDS = {
  types: { pattern: IMPORTED_FILE, shape: '<group>/<version>/<file>.ts' },
  copies: { pattern: COPIED_CRD, shape: '<group>_<plural>.yaml' },
} as const;

export function parseRecord(
  text: string,
  shown: string,
  kind: keyof typeof RECORDS = 'types',
): Map<string, string> {
  const { pattern, shape } = RECORDS[kind];
  const files = new Map<string, string>();
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const match = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
    if (!match || !pattern.test(match[2]!) || match[2]!.split('/').includes('..')) {
      throw new KubesmithError(
        `${shown}:${index + 1}: ${JSON.stringify(line.slice(0, 200))} is not a line kubesmith import crd writes`,
        {
          hint: `the record lists "<sha256>  ${shape}" lines only: delete that line (or the record) and run again; nothing was written`,
        },
      );
    }
    files.set(match[2]!, match[1]!);
  }
  return files;
}

function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** The CRDs of the inputs, checked, without two of one group and kind. */
export async function readCrds(options: ImportOptions): Promise<Crd[]> {
  const texts = [
    ...(options.texts ?? []),
    ...(await readInputs(options.inputs, options.cwd, options.stdin, options.limits ?? DEFAULT_LIMITS)),
  ];
  const crds: Crd[] = [];
  const seen = new Map<string, Crd>();
  for (const { value, origin } of parseDocuments(texts)) {
    const crd = readCrd(value, origin);
    const key = `${crd.group}/${crd.kind}`;
    const first = seen.get(key);
    if (first) {
      throw new KubesmithError(
        `${crd.origin}: .spec: ${crd.kind}.${crd.group} again (first in ${first.origin})`,
        { hint: 'give each CRD once; nothing was written' },
      );
    }
    // Two kinds whose files would be one (kinds differing in case only).
    for (const other of crds) {
      if (other.group === crd.group && other.kind.toLowerCase() === crd.kind.toLowerCase()) {
        throw new KubesmithError(
          `${crd.origin}: .spec.names.kind: ${crd.kind} and ${other.kind} (${other.origin}) differ in case only`,
          {
            hint: 'import them into different directories (--out); nothing was written',
          },
        );
      }
    }
    seen.set(key, crd);
    crds.push(crd);
  }
  if (crds.length === 0) {
    throw new KubesmithError('no CustomResourceDefinition in the inputs', {
      hint: 'give files, directories or URLs of CRDs (apiextensions.k8s.io/v1)',
    });
  }
  const wanted = options.versions ?? [];
  for (const version of wanted) {
    if (!crds.some((crd) => crd.versions.some((v) => v.name === version))) {
      const known = [...new Set(crds.flatMap((crd) => crd.versions.map((v) => v.name)))].join(', ');
      throw new KubesmithError(`--version ${version} is in none of the CRDs (their versions: ${known})`, {
        hint: 'give one of their versions, or leave --version out to import them all',
        exitCode: 2,
      });
    }
  }
  return crds;
}

/** What an import would write, each file with its status; nothing is written. */
export async function planImport(options: ImportOptions): Promise<ImportPlan> {
  const crds = await readCrds(options);
  const wanted = new Set(options.versions ?? []);
  const format = formatter(options.outDir);
  const generated = new Map<string, string>();
  const copies = new Map<string, string>();
  const summary: ImportPlan['crds'] = [];
  for (const crd of crds) {
    const versions = crd.versions.filter((v) => wanted.size === 0 || wanted.has(v.name));
    if (versions.length === 0) continue;
    summary.push({
      group: crd.group,
      kind: crd.kind,
      plural: crd.plural,
      versions: versions.map((v) => v.name),
    });
    for (const version of versions) {
      const dir = `${crd.group}/${version.name}`;
      const types = `${dir}/${crd.kind.toLowerCase()}.types.ts`;
      generated.set(`${dir}/group-version.ts`, emitGroupVersion(crd.group, version.name, HEADER));
      generated.set(types, emitVersion(crd, version, HEADER, await format.width(types)));
    }
    // Only a project keeps copies: writing the YAML of big CRDs is not free.
    if (options.crdCopyDir !== undefined) copies.set(crdCopyName(crd), crdCopy(crd));
  }
  for (const [file, raw] of generated) generated.set(file, await format.format(file, raw));
  const types = tracked(options.outDir, generated, 'types', options.force ?? false);
  return {
    crds: summary,
    ...types,
    ...(options.crdCopyDir !== undefined
      ? { copies: tracked(options.crdCopyDir, copies, 'copies', options.force ?? false) }
      : {}),
  };
}

/**
 * The files `generated` (relative to `dir`) against what is on disk and what `dir`'s record says the
 * import wrote: each with its status, and the record as it will be.
 */
function tracked(
  dir: string,
  generated: ReadonlyMap<string, string>,
  kind: keyof typeof RECORDS,
  force: boolean,
): TrackedFiles {
  const inside = containedPaths(dir);
  const recordText = readIfExists(inside(RECORD_FILE));
  const record =
    recordText === undefined ? new Map<string, string>() : parseRecord(recordText, RECORD_FILE, kind);
  const files: ImportFile[] = [];
  for (const [file, content] of [...generated].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const previous = readIfExists(inside(file));
    let status: ImportStatus;
    if (previous === undefined) status = 'created';
    else if (previous === content) status = 'unchanged';
    else if (record.get(file) === sha256(previous) || force) status = 'updated';
    else status = 'conflict';
    files.push({ path: file, content, status, previous });
  }
  const next = new Map(record);
  for (const file of files) next.set(file.path, sha256(file.content));
  const lines = [...next].sort(([a], [b]) => (a < b ? -1 : 1)).map(([file, hash]) => `${hash}  ${file}`);
  const newRecord = `# Files written by kubesmith import crd, with their sha256: a re-import replaces them unless edited.\n${lines.join('\n')}\n`;
  return { dir, files, record: newRecord };
}

/** Throws when the plan would replace a file edited by hand (or not written by the importer). */
export function checkConflicts(plan: ImportPlan): void {
  const conflicts = [
    ...plan.files.filter((f) => f.status === 'conflict').map((f) => f.path),
    ...(plan.copies?.files ?? [])
      .filter((f) => f.status === 'conflict')
      .map((f) => path.join(path.relative(plan.dir, plan.copies!.dir), f.path)),
  ];
  if (conflicts.length > 0) {
    throw new KubesmithError(
      `${conflicts.join(', ')} ${conflicts.length > 1 ? 'were' : 'was'} edited since kubesmith import crd wrote ${conflicts.length > 1 ? 'them' : 'it'}, or not written by it`,
      { hint: 'keep your changes elsewhere and run again with --force to replace them; nothing was written' },
    );
  }
}

/**
 * The writes of a plan without conflicts, relative to `root` (the directory that holds the types and the
 * CRDs' copies: the project): the files that change, and each record that does.
 */
export function importWrites(plan: ImportPlan, root: string = plan.dir): FileWrite[] {
  checkConflicts(plan);
  const writes: FileWrite[] = [];
  for (const set of [plan, ...(plan.copies ? [plan.copies] : [])]) {
    const prefix = path.relative(root, set.dir);
    const inside = containedPaths(set.dir);
    const at = (file: string) => (prefix === '' ? file : `${prefix.split(path.sep).join('/')}/${file}`);
    for (const f of set.files.filter((f) => f.status !== 'unchanged'))
      writes.push({ path: at(f.path), content: f.content, previous: f.previous });
    const previousRecord = readIfExists(inside(RECORD_FILE));
    if (previousRecord !== set.record)
      writes.push({ path: at(RECORD_FILE), content: set.record, previous: previousRecord });
  }
  return writes;
}

/** Writes a plan without conflicts, all or nothing: the types, and the CRDs' copies with them. */
export function applyImport(plan: ImportPlan, root: string = plan.dir): void {
  writeAtomically(root, importWrites(plan, root));
}
