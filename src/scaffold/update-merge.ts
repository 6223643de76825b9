/**
 * `kubesmith alpha update`: how each file of the three trees (the old scaffold, the user's branch, the new
 * scaffold) is merged, by its class, not by text alone. kubebuilder's alpha update merges every file as
 * text; its users meet conflicts in go.mod and in generated manifests that no one edits by hand. Here:
 *
 * - generated files (CRDs, the manager's role, webhook configurations, the chart's templates and record)
 *   are not merged: the new scaffold's stand in until the commands that write them run on the merged
 *   sources (`regenerated`);
 * - package.json is merged key by key: a dependency the user added or bumped stays, one the scaffold
 *   bumped moves (both bumped: the user's stays);
 * - package-lock.json is the user's until `npm install` writes it again (`regenerated`);
 * - kubesmith's own tarballs (.kubesmith/) are the new CLI's;
 * - every other file is merged as text, three ways (`git merge-file`, run by the caller).
 *
 * This module decides; it runs nothing. The caller gives each file's three contents (undefined: absent).
 */
import {
  CHART_DIR,
  CHART_RECORD_FILE,
  isGeneratedManifest,
  LOCAL_PACKAGES_DIR,
  PACKAGE_FILE,
  PACKAGE_LOCK_FILE,
} from '../project/layout.js';

/** What happened to a file, as the report says it. */
export type Outcome = 'kept' | 'taken' | 'merged' | 'regenerated' | 'conflicted' | 'unchanged';

export interface ThreeWay {
  base?: Buffer;
  ours?: Buffer;
  theirs?: Buffer;
}

export type Decision =
  /** The file's content in the result (undefined: the file is not there). */
  | { outcome: Exclude<Outcome, 'merged' | 'conflicted'>; content: Buffer | undefined; note?: string }
  /** A three-way text merge the caller runs. */
  | { outcome: 'text-merge' }
  | { outcome: 'merged' | 'conflicted'; content: Buffer | undefined; note?: string };

/** The files the generator and the chart command write, whose content follows from other files. */
export function isRegenerated(file: string, chartDir: string = CHART_DIR): boolean {
  return (
    isGeneratedManifest(file) ||
    file.startsWith(`${chartDir}/templates/`) ||
    file === `${chartDir}/${CHART_RECORD_FILE}`
  );
}

const same = (a: Buffer | undefined, b: Buffer | undefined): boolean =>
  a === undefined ? b === undefined : b !== undefined && a.equals(b);

const isBinary = (content: Buffer | undefined): boolean => content !== undefined && content.includes(0);

/** The decision for one file; `chartDir` is the project's chart directory. */
export function decide(file: string, three: ThreeWay, chartDir: string = CHART_DIR): Decision {
  const { base, ours, theirs } = three;
  if (isRegenerated(file, chartDir)) return { outcome: 'regenerated', content: theirs ?? ours };
  if (file === PACKAGE_LOCK_FILE) return { outcome: 'regenerated', content: ours ?? theirs };
  if (file.startsWith(`${LOCAL_PACKAGES_DIR}/`)) {
    // kubesmith's own packages are the new CLI's; an old tarball the user did not touch goes.
    if (theirs !== undefined) return { outcome: same(ours, theirs) ? 'unchanged' : 'taken', content: theirs };
    if (ours !== undefined && !same(ours, base)) return { outcome: 'kept', content: ours };
    return { outcome: ours === undefined ? 'unchanged' : 'taken', content: undefined };
  }
  if (same(ours, theirs)) return { outcome: same(ours, base) ? 'unchanged' : 'kept', content: ours };
  if (same(base, ours)) return { outcome: 'taken', content: theirs };
  if (same(base, theirs)) return { outcome: 'kept', content: ours };
  // Both sides changed the file, differently.
  if (theirs === undefined)
    // The new scaffold no longer makes a file the user changed: the user's stays.
    return { outcome: 'kept', content: ours, note: 'the new scaffold no longer makes it' };
  if (ours === undefined)
    return {
      outcome: 'conflicted',
      content: undefined,
      note: 'deleted on your branch, changed by the new scaffold',
    };
  if (isBinary(base) || isBinary(ours) || isBinary(theirs))
    return { outcome: 'conflicted', content: ours, note: 'a binary file both sides changed (yours kept)' };
  if (file === PACKAGE_FILE) {
    const merged = mergePackageJson(base, ours, theirs);
    if (merged)
      return {
        outcome: 'merged',
        content: Buffer.from(merged.text),
        ...(merged.note ? { note: merged.note } : {}),
      };
  }
  return { outcome: 'text-merge' };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const equal = (a: Json | undefined, b: Json | undefined): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The sections whose keys are package names and whose values are version ranges. */
const DEPENDENCY_SECTIONS = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'];

/**
 * package.json merged key by key (the top level, and the keys of each object in it). Undefined when a key
 * both sides changed differently is not a dependency (a script, say): the caller merges the file as text,
 * which marks the conflict where the user sees it.
 */
export function mergePackageJson(
  base: Buffer | undefined,
  ours: Buffer,
  theirs: Buffer,
): { text: string; note?: string } | undefined {
  let parsed: [JsonObject, JsonObject, JsonObject];
  try {
    const read = (b: Buffer | undefined): JsonObject => {
      const value = JSON.parse(b?.toString('utf8') ?? '{}') as Json;
      if (!isObject(value)) throw new Error('not an object');
      return value;
    };
    parsed = [read(base), read(ours), read(theirs)];
  } catch {
    return undefined;
  }
  const [o, a, n] = parsed;
  const userWins: string[] = [];
  const mergeValue = (
    b: Json | undefined,
    x: Json | undefined,
    y: Json | undefined,
  ): { value: Json | undefined } | undefined => {
    if (equal(x, y) || equal(b, y)) return { value: x };
    if (equal(b, x)) return { value: y };
    return undefined;
  };
  const result: JsonObject = {};
  // The user's order of keys, then the keys the new scaffold adds where it has them.
  const keys = [...Object.keys(a), ...Object.keys(n).filter((key) => !(key in a))];
  for (const key of keys) {
    const [b, x, y] = [o[key], a[key], n[key]];
    const whole = mergeValue(b, x, y);
    if (whole) {
      if (whole.value !== undefined) result[key] = whole.value;
      continue;
    }
    if (!isObject(x) || !isObject(y)) return undefined;
    const section: JsonObject = {};
    const baseSection = isObject(b) ? b : {};
    for (const name of [...Object.keys(x), ...Object.keys(y).filter((k) => !(k in x))]) {
      const merged = mergeValue(baseSection[name], x[name], y[name]);
      if (merged) {
        if (merged.value !== undefined) section[name] = merged.value;
      } else if (DEPENDENCY_SECTIONS.includes(key) && x[name] !== undefined) {
        // Both changed a dependency's range: the user's is kept (their deliberate choice), and said so.
        section[name] = x[name];
        userWins.push(`${key}.${name}`);
      } else return undefined;
    }
    result[key] = DEPENDENCY_SECTIONS.includes(key) ? sortKeys(section) : section;
  }
  const indent = /^\{\n(\s+)"/.exec(ours.toString('utf8'))?.[1] ?? '  ';
  return {
    text: `${JSON.stringify(result, null, indent)}\n`,
    ...(userWins.length > 0 ? { note: `your ranges kept where both changed: ${userWins.join(', ')}` } : {}),
  };
}

/** npm writes dependency sections sorted by name. */
function sortKeys(section: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(section).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
