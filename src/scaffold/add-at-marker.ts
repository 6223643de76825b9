/** Adding code to a file of the tree at a scaffold marker, as `create api` and `create webhook` do. */
import { insertAtMarker, insertBlockAtMarker } from './insert.js';
import type { Tree } from './tree.js';

/**
 * Adds `fragment` at the `point` marker of `file`: line by line (each line once), or with `block` as one
 * multi-line block. A file or marker the user removed becomes a warning with what to add by hand, never a
 * failure.
 */
export async function addAtMarker(
  tree: Tree,
  file: string,
  point: string,
  fragment: string,
  options: { block?: boolean } = {},
): Promise<void> {
  const byHand = `add this by hand:\n  ${fragment.replace(/\n/g, '\n  ')}`;
  const content = await tree.read(file);
  if (content === undefined) {
    tree.warnings.push(`${file} not found: ${byHand}`);
    return;
  }
  const result = (options.block ? insertBlockAtMarker : insertAtMarker)(file, content, point, fragment);
  if (!result.ok) {
    tree.warnings.push(`${file} has no "+kubesmith:scaffold:${point}" marker: ${byHand}`);
    return;
  }
  if (result.content !== content) await tree.write(file, result.content);
}
