/**
 * What `kubesmith helm-chart` writes into the chart directory, as a plan (src/scaffold/plan.ts) that the
 * CLI applies atomically. The directory is kubesmith's: a record of the files it wrote (MANIFEST_FILE,
 * with each template's sha256) lets a run tell its own files from anyone else's.
 *   - A file the record does not list (or a chart directory without a record) stops the run: one error
 *     line, nothing written. kubesmith would otherwise mix its templates with files it cannot update.
 *   - Chart.yaml is written once, then it is the user's.
 *   - values.yaml is merged (chart-values.ts).
 *   - Templates are regenerated; one the user edited since (its hash differs from the record) is a
 *     conflict unless --force.
 *   - A template of the previous run that is no longer generated is removed after the writes.
 * The record is a file in the project, which anyone's pull request can edit: a line naming anything
 * kubesmith cannot have written (outside templates/ and the chart's top-level files) stops the run before
 * anything is read or removed through it. Every file is read and written through the project's path
 * check (src/project/contained.ts), so not even a link in the chart directory leads out of the project.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import { containedPaths } from '../project/contained.js';
import type { Plan, PlanEntry } from '../scaffold/plan.js';
import { CHART_RECORD_FILE } from '../project/layout.js';

export const MANIFEST_FILE = CHART_RECORD_FILE;
/** The files the user owns after the first run: never rewritten. */
const USER_FILES = new Set(['Chart.yaml']);
/** Files whose edits are expected (merged or kept): no hash recorded, never a conflict. */
const UNHASHED = new Set(['Chart.yaml', 'values.yaml']);
/** Merged with the user's version rather than replaced. */
export const VALUES_FILE = 'values.yaml';
/** A chart directory with more files than this is not one kubesmith made. */
const MAX_FILES = 5000;
/** The files outside templates/ that kubesmith writes into a chart: the only ones its record can name. */
const TOP_LEVEL_FILES = new Set(['Chart.yaml', VALUES_FILE, '.helmignore']);

export interface ChartPlan {
  plan: Plan;
  /**
   * Files of the previous run that this one no longer writes (relative to the project root): the plan
   * removes them.
   */
  stale: string[];
}

const sha256 = (text: string | Uint8Array) => createHash('sha256').update(text).digest('hex');

/**
 * The record of the previous run: path -> sha256 of what was written ('' for user-owned files). `shown`
 * names the record in errors: a line kubesmith would not have written (a path outside the chart's
 * templates and top-level files, or no path at all) is one.
 */
export function parseManifest(text: string, shown = MANIFEST_FILE): Map<string, string> {
  const files = new Map<string, string>();
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const match = /^([0-9a-f]{64}|-) {2}(.+)$/.exec(line);
    if (!match || !isChartFile(match[2]!)) {
      const quoted = JSON.stringify(line.length > 200 ? `${line.slice(0, 200)}...` : line);
      throw new KubesmithError(
        `${shown}:${index + 1}: ${quoted} is not a line kubesmith helm-chart writes: ${match ? 'the path is not one of the files of a chart' : 'expected "<sha256>  <path>" or "-  <path>"'}`,
        {
          hint: `kubesmith records only the files it wrote below templates/ and its ${[...TOP_LEVEL_FILES].join(', ')}: delete that line (or the whole record and the chart directory) and run again; nothing was written or removed`,
        },
      );
    }
    files.set(match[2]!, match[1] === '-' ? '' : match[1]!);
  }
  return files;
}

/** Whether a record may name `file`: one of the files kubesmith writes into a chart directory. */
function isChartFile(file: string): boolean {
  if (TOP_LEVEL_FILES.has(file)) return true;
  const [first, ...rest] = file.split('/');
  return first === 'templates' && rest.length > 0 && rest.every(isPlainName);
}

/** A name of a file or directory: not empty, `.` or `..`, no backslash, no control character. */
function isPlainName(name: string): boolean {
  return name !== '.' && name !== '..' && /^[^\\\p{Cc}]+$/u.test(name);
}

function manifestText(files: { path: string; content: string }[]): string {
  const lines = [
    '# The files `kubesmith helm-chart` wrote into this chart, with the sha256 of what it wrote (- for',
    '# the files that are yours after the first run). It regenerates them on every run, and stops when',
    '# this directory holds a file it did not write. Helm ignores this file (.helmignore).',
    ...files
      .map((file) => `${UNHASHED.has(file.path) ? '-' : sha256(file.content)}  ${file.path}`)
      .sort((a, b) => (a.slice(66) < b.slice(66) ? -1 : 1)),
    '',
  ];
  return lines.join('\n');
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  if (entries.length > MAX_FILES) {
    throw new KubesmithError(`${dir}: more than ${MAX_FILES} files, not a chart kubesmith wrote`, {
      hint: 'give another directory with --output; nothing was written',
    });
  }
  return entries
    .filter((entry) => !entry.isDirectory())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * The plan for `files` (relative to the chart directory `chartDir`, itself relative to `root`).
 * `values` makes values.yaml from the user's previous one ('' when there is none).
 */
export async function planChart(options: {
  root: string;
  chartDir: string;
  files: { path: string; content: string }[];
  values: (previous: string, file: string) => string;
  force: boolean;
}): Promise<ChartPlan> {
  const { root, chartDir, force } = options;
  const inside = containedPaths(root);
  const absolute = inside(chartDir);
  const shown = (file: string) => `${chartDir}/${file}`;
  /** A file of the chart directory on disk: read only inside the project. */
  const readChartFile = (file: string) => readIfExists(inside(shown(file)));
  let previous = new Map<string, string>();
  if (existsSync(absolute)) {
    if (!(await stat(absolute)).isDirectory()) {
      throw new KubesmithError(`${chartDir} is a file, not a chart directory`, {
        hint: 'move it away or give another directory with --output; nothing was written',
      });
    }
    const manifest = await readChartFile(MANIFEST_FILE);
    previous = manifest === undefined ? new Map() : parseManifest(manifest, shown(MANIFEST_FILE));
    const foreign = (await listFiles(absolute)).filter(
      (file) => file !== MANIFEST_FILE && !previous.has(file),
    );
    if (foreign.length > 0) {
      const list = foreign.slice(0, 3).map(shown).join(', ') + (foreign.length > 3 ? ', ...' : '');
      throw new KubesmithError(
        foreign.length === 1
          ? `${list} was not written by kubesmith helm-chart`
          : `${foreign.length} files in ${chartDir} were not written by kubesmith helm-chart: ${list}`,
        {
          hint: `kubesmith regenerates ${chartDir} from config/: move your files out of it (put resources in config/ instead), or write the chart elsewhere with --output; nothing was written`,
        },
      );
    }
  }

  const entries: PlanEntry[] = [];
  const written: { path: string; content: string }[] = [];
  for (const file of options.files) {
    const onDisk = await readChartFile(file.path);
    let content = file.content;
    if (USER_FILES.has(file.path) && onDisk !== undefined) content = onDisk;
    if (file.path === VALUES_FILE) content = options.values(onDisk ?? '', shown(file.path));
    written.push({ path: file.path, content });
    const entry: PlanEntry = { action: 'create', path: shown(file.path), content };
    if (onDisk !== undefined) {
      entry.previous = onDisk;
      const recorded = previous.get(file.path);
      const edited = recorded !== undefined && recorded !== '' && recorded !== sha256(onDisk);
      if (onDisk === content) entry.action = 'unchanged';
      else if (edited && !force) {
        entry.action = 'conflict';
        entry.reason = 'edited since kubesmith wrote it; --force overwrites, or make the change in config/';
      } else entry.action = 'overwrite';
    }
    entries.push(entry);
  }
  const manifest = manifestText(written);
  const manifestOnDisk = await readChartFile(MANIFEST_FILE);
  entries.push({
    action: manifestOnDisk === undefined ? 'create' : manifestOnDisk === manifest ? 'unchanged' : 'overwrite',
    path: shown(MANIFEST_FILE),
    content: manifest,
    ...(manifestOnDisk === undefined ? {} : { previous: manifestOnDisk }),
  });

  const now = new Set(options.files.map((file) => file.path));
  const stale: string[] = [];
  for (const [file, recorded] of previous) {
    if (now.has(file)) continue;
    const onDisk = await readChartFile(file);
    if (onDisk === undefined) continue;
    if (recorded !== '' && recorded !== sha256(onDisk) && !force) {
      entries.push({
        action: 'conflict',
        path: shown(file),
        content: onDisk,
        previous: onDisk,
        reason: 'no longer generated, and edited since kubesmith wrote it; --force removes it',
      });
      continue;
    }
    stale.push(shown(file));
    entries.push({
      action: 'remove',
      path: shown(file),
      content: '',
      previous: onDisk,
      reason: 'no longer generated',
    });
  }
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { plan: { root, entries, warnings: [] }, stale };
}
