/**
 * Formatting the TypeScript a command writes with Prettier and the project's own settings, as kubebuilder
 * runs `go fmt` after scaffolding: lines built from names (kinds, groups, versions) fit the print width
 * whatever those names' lengths, so the generated project passes its `npm run lint`.
 */
import path from 'node:path';
import type { Tree } from './tree.js';

/**
 * Formats the changed `.ts` files of `tree` with the Prettier settings found for them on disk. A file the
 * user keeps unformatted (it did not pass `prettier --check` before this change) is left as it is: a
 * command adds its lines, never reformats the user's code. Without Prettier settings nothing changes.
 */
export async function formatTypeScript(tree: Tree): Promise<void> {
  const files = tree.changed().filter((change) => change.file.endsWith('.ts'));
  if (files.length === 0) return;
  const prettier = await import('prettier');
  for (const { file, content, created } of files) {
    const filepath = path.join(tree.root, file);
    const options = await prettier.resolveConfig(filepath);
    if (options === null) continue;
    if (!created) {
      const before = await tree.readOriginal(file);
      if (before !== undefined && !(await prettier.check(before, { ...options, filepath }))) continue;
    }
    tree.reformat(file, await prettier.format(content, { ...options, filepath }));
  }
}
