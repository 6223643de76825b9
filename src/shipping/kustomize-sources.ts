/**
 * What kustomize will read when it renders config/, checked before it runs. kustomize keeps a
 * kustomization's own files (patches, generator inputs) inside its directory, but not the directories it
 * lists under `resources`, `bases` and `components`: `- ../../../../home/runner/.kube` there, or a git URL
 * that kustomize would clone, would bring what lies outside the project into install.yaml or the chart.
 * Every such directory, followed from the starting ones, must lie inside the project (links included).
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import { yaml } from '../lazy-yaml.js';
import { containedPath } from '../project/contained.js';
import { CONFIG_DIR } from '../project/layout.js';

const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];
/** The keys whose entries are directories (or files) kustomize loads as further roots. */
const SOURCE_KEYS = ['resources', 'bases', 'components'] as const;
/** A config/ tree is a few dozen kustomizations; more than this is not one kubesmith renders. */
const MAX_KUSTOMIZATIONS = 500;
const MAX_KUSTOMIZATION_BYTES = 1024 * 1024;
/** `https://...`, `git::...`, `ssh://`, `git@host:`, `github.com/org/repo`: kustomize fetches these. */
const REMOTE = /^(?:[a-z][a-z0-9+.-]*:\/\/|[a-z]+::|git@|(?:github|gitlab)\.com\/|bitbucket\.org\/)/i;

/** Throws a KubesmithError naming the kustomization and entry that leads out of the project. */
export function checkKustomizeSources(root: string, startDirs: readonly string[]): void {
  const seen = new Set<string>();
  const queue = [...startDirs];
  while (queue.length > 0) {
    const dir = queue.shift()!;
    if (seen.has(dir)) continue;
    seen.add(dir);
    if (seen.size > MAX_KUSTOMIZATIONS) {
      throw new KubesmithError(`${CONFIG_DIR}/ lists more than ${MAX_KUSTOMIZATIONS} kustomizations`, {
        hint: 'kubesmith renders the config/ tree it scaffolded; nothing was written',
      });
    }
    const found = kustomizationOf(root, dir);
    if (!found) continue;
    for (const key of SOURCE_KEYS) {
      const entries: unknown = found.content[key];
      if (!Array.isArray(entries)) continue;
      for (const entry of entries) {
        if (typeof entry !== 'string') continue;
        const next = sourceDir(root, found.file, dir, key, entry);
        if (next !== undefined) queue.push(next);
      }
    }
  }
}

/** The kustomization file of `dir` (relative to root) and its content, if it is a directory with one. */
function kustomizationOf(
  root: string,
  dir: string,
): { file: string; content: Record<string, unknown> } | undefined {
  for (const name of KUSTOMIZATION_FILES) {
    const file = `${dir}/${name}`;
    const full = containedPath(root, file);
    const info = statSync(full, { throwIfNoEntry: false });
    if (!info?.isFile()) continue;
    if (info.size > MAX_KUSTOMIZATION_BYTES) {
      throw new KubesmithError(`${file} is larger than ${MAX_KUSTOMIZATION_BYTES} bytes`, {
        hint: 'a kustomization lists files and settings; nothing was written',
      });
    }
    let content: unknown;
    try {
      content = yaml().parse(readFileSync(full, 'utf8'), { maxAliasCount: 10 });
    } catch {
      return undefined; // kustomize reports its own syntax errors
    }
    return {
      file,
      content: content && typeof content === 'object' ? (content as Record<string, unknown>) : {},
    };
  }
  return undefined;
}

/** The directory (relative to root) an entry of `key` names, once it is known to lie inside the project. */
function sourceDir(root: string, file: string, dir: string, key: string, entry: string): string | undefined {
  const refuse = (why: string) =>
    new KubesmithError(`${file}: the ${key} entry ${JSON.stringify(entry)} ${why}`, {
      hint: 'kubesmith renders only what lies inside the project: copy it into config/; nothing was written',
    });
  if (REMOTE.test(entry)) throw refuse('is fetched from elsewhere');
  if (path.posix.isAbsolute(entry) || entry.includes('\\')) throw refuse('is not a path inside the project');
  const target = path.posix.normalize(path.posix.join(dir, entry));
  if (target === '..' || target.startsWith('../')) throw refuse('leads out of the project');
  let full: string;
  try {
    full = containedPath(root, target);
  } catch {
    throw refuse('leads out of the project through a symbolic link');
  }
  return statSync(full, { throwIfNoEntry: false })?.isDirectory() ? target : undefined;
}
