/**
 * `kubesmith edit --multigroup`: PROJECT's multigroup set, and the files of the existing kinds moved to the
 * layout a multigroup project gives them (project/layout.ts): each controller and its tests into a
 * directory of its group, each API's RBAC roles named after group and kind. The moves are textual, so
 * they keep the user's edits: a moved file's relative module paths (`from '...'`, `import('...')`,
 * `new URL('...', import.meta.url)`) are made relative to its new place; the controller's name and field
 * manager get the group (`guestbook` -> `webapp-guestbook`), as a multigroup scaffold names them; src/main.ts
 * and config/rbac/kustomization.yaml follow. A target that exists already stops the command.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import { serializeProject } from '../project/config.js';
import { containedPaths } from '../project/contained.js';
import type { LoadedProject } from '../project/find.js';
import {
  importPath,
  kindLayout,
  kindRoleFile,
  rootFrom,
  MAIN_FILE,
  PROJECT_FILE,
  RBAC_KUSTOMIZATION_FILE,
} from '../project/layout.js';
import { resolveResource } from '../project/resource.js';
import type { Plan, PlanEntry } from './plan.js';
import { addManifests } from './manifests.js';
import { Tree } from './tree.js';

const ROLES = ['admin', 'editor', 'viewer'];

/** Relative module paths in a source file: imports, dynamic imports, and URLs relative to the module. */
const MODULE_PATH = /(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+|new URL\(\s*)(['"])(\.\.?\/[^'"\n]*|\.\.?)\2/g;

/** `source` moved from directory `from` to directory `to`: each relative module path leads where it did. */
export function rebaseModulePaths(source: string, from: string, to: string): string {
  return source.replace(MODULE_PATH, (_match, head: string, quote: string, target: string) => {
    const absolute = path.posix.join(from, target);
    // A path written up to the project root and down again (the scaffold's `../../test/envtest.js`) stays so.
    const viaRoot = target === `${rootFrom(from)}${absolute}${target.endsWith('/') ? '/' : ''}`;
    let moved = viaRoot ? `${rootFrom(to)}${absolute}` : path.posix.relative(to, absolute) || '.';
    if (!moved.startsWith('.')) moved = `./${moved}`;
    if (target.endsWith('/') && !moved.endsWith('/')) moved += '/';
    return `${head}${quote}${moved}${quote}`;
  });
}

export async function planMultigroup(project: LoadedProject): Promise<Plan> {
  const { root, config } = project;
  const inside = containedPaths(root);
  const read = async (file: string): Promise<string | undefined> => {
    try {
      return await readFile(inside(file), 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw error;
    }
  };
  const moves: { from: string; to: string; content: string; previous: string }[] = [];
  const edits = new Map<string, string>();
  const edit = async (file: string, change: (text: string) => string) => {
    const text = edits.get(file) ?? (await read(file));
    if (text !== undefined) edits.set(file, change(text));
  };
  const move = async (from: string, to: string, change: (text: string) => string) => {
    const previous = await read(from);
    if (previous === undefined) return; // removed by the user: nothing to move
    if ((await read(to)) !== undefined)
      throw new KubesmithError(`cannot move ${from} to ${to}: ${to} exists`, {
        hint: 'move or remove one of them yourself, then run kubesmith edit --multigroup again; nothing was written',
      });
    moves.push({ from, to, previous, content: change(previous) });
  };
  const quoted = (name: string) => new RegExp(`(['"])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\1`, 'g');

  for (const entry of config.resources) {
    const resource = resolveResource(entry, config, entry.api === undefined);
    const single = kindLayout(resource, false);
    const multi = kindLayout(resource, true);
    const kindLower = resource.kind.toLowerCase();
    if (entry.controller) {
      const files: [string, string][] = [
        [single.controllerFile, multi.controllerFile],
        [single.controllerTestFile, multi.controllerTestFile],
        [single.controllerIntegrationTestFile, multi.controllerIntegrationTestFile],
      ];
      for (const [from, to] of files) {
        await move(from, to, (text) => {
          let moved = rebaseModulePaths(text, path.posix.dirname(from), path.posix.dirname(to));
          // The files the move leaves behind are imported under their new names.
          for (const [oldFile, newFile] of files)
            moved = moved.replace(
              quoted(importPath(path.posix.dirname(to), oldFile)),
              (m, q: string) => `${q}${importPath(path.posix.dirname(to), newFile)}${q}`,
            );
          if (from === single.controllerFile)
            moved = moved
              .replace(
                new RegExp(`\\.named\\((['"])${kindLower}\\1\\)`, 'g'),
                `.named('${resource.group}-${kindLower}')`,
              )
              .replace(quoted(`${kindLower}-controller`), `'${resource.group}-${kindLower}-controller'`);
          return moved;
        });
      }
      const mainDir = path.posix.dirname(MAIN_FILE);
      await edit(MAIN_FILE, (text) =>
        text.replace(
          quoted(importPath(mainDir, single.controllerFile)),
          (_m, q: string) => `${q}${importPath(mainDir, multi.controllerFile)}${q}`,
        ),
      );
    }
    if (entry.api) {
      for (const role of ROLES) {
        const from = kindRoleFile(single.rolePrefix, role);
        const to = kindRoleFile(multi.rolePrefix, role);
        await move(from, to, (text) =>
          text.replace(
            new RegExp(`^(\\s*name: )${kindLower}-${role}-role$`, 'm'),
            `$1${resource.group}-${kindLower}-${role}-role`,
          ),
        );
        await edit(RBAC_KUSTOMIZATION_FILE, (text) =>
          text.replace(
            new RegExp(`^(\\s*- )${path.posix.basename(from).replace(/\./g, '\\.')}$`, 'm'),
            `$1${path.posix.basename(to)}`,
          ),
        );
      }
    }
  }

  // The sources as they will be, so that the generated manifests (the role's markers) follow them.
  const tree = new Tree(root);
  await tree.write(PROJECT_FILE, serializeProject({ ...config, multigroup: true }));
  for (const [file, content] of edits) await tree.write(file, content);
  for (const item of moves) await tree.write(item.to, item.content);
  await addManifests(tree);
  const plan = await tree.plan();
  const removals: PlanEntry[] = moves.map((item) => ({
    action: 'remove',
    path: item.from,
    content: '',
    previous: item.previous,
  }));
  plan.entries = [...plan.entries.filter((e) => e.action !== 'unchanged'), ...removals].sort((a, b) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : 0,
  );
  return plan;
}
