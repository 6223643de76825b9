/**
 * Rendering a folder of templates/ into a tree. File names and contents are handlebars templates; the
 * `.hbs` suffix is dropped and a `dot-` prefix becomes `.` (npm leaves dot files out of packages).
 * Templates compile in strict mode, so a variable missing from the context is an error, not a blank.
 * Text from the command line goes through the helper named for its sink (escape.ts): `{{tsString image}}`.
 * What to do when the file exists is the template's own: a first line `{{!-- if-exists: skip ... --}}`
 * (docs/templates.md); without one, a file the user has with other content is a conflict.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Handlebars from 'handlebars';
import { escapeHelpers } from './escape.js';
import type { IfExists, Tree } from './tree.js';

/** templates/ of this package: beside dist/ once built, beside src/ in a checkout. */
export const templatesDir = fileURLToPath(new URL('../../templates/', import.meta.url));

export interface RenderedFile {
  path: string;
  content: string;
  /** The template's rule for a file that exists with other content. */
  ifExists: IfExists;
}

/** The template's first line, when it says what to do with an existing file; a handlebars comment. */
const IF_EXISTS_LINE = /^\{\{!-- if-exists: (conflict|skip|overwrite)\b.*--\}\}\r?\n/;

/** The template's rule and its text without the line that says it. */
function ifExistsOf(source: string): { ifExists: IfExists; template: string } {
  const match = IF_EXISTS_LINE.exec(source);
  if (!match) return { ifExists: 'conflict', template: source };
  return { ifExists: match[1] as IfExists, template: source.slice(match[0].length) };
}

/** A handlebars environment with the escaping helpers. */
export function templateEngine(): typeof Handlebars {
  const handlebars = Handlebars.create();
  for (const [name, helper] of Object.entries(escapeHelpers)) {
    handlebars.registerHelper(name, (value: unknown) => {
      if (typeof value !== 'string') throw new Error(`{{${name}}} needs a string, not ${typeof value}`);
      return helper(value);
    });
  }
  return handlebars;
}

export async function renderFolder(folder: string, context: object): Promise<RenderedFile[]> {
  const base = path.join(templatesDir, folder);
  const files = await listFiles(base);
  const handlebars = templateEngine();
  return Promise.all(
    files.map(async (relative) => {
      const { ifExists, template } = ifExistsOf(await readFile(path.join(base, relative), 'utf8'));
      const content = handlebars.compile(template, { noEscape: true, strict: true })(context);
      return { path: outputPath(relative, context, handlebars), content, ifExists };
    }),
  );
}

/** Renders and adds every file of `folder`, each with its template's if-exists rule. */
export async function addFolder(
  tree: Tree,
  folder: string,
  context: object,
  /** Output paths to leave out (another folder renders them). */
  exclude: ReadonlySet<string> = new Set(),
): Promise<void> {
  for (const file of await renderFolder(folder, context)) {
    if (exclude.has(file.path)) continue;
    await tree.create(file.path, file.content, file.ifExists);
  }
}

function outputPath(relative: string, context: object, handlebars: typeof Handlebars): string {
  const rendered = handlebars.compile(relative.split(path.sep).join('/'), { noEscape: true, strict: true })(
    context,
  );
  return rendered
    .replace(/\.hbs$/, '')
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => (segment.startsWith('dot-') ? `.${segment.slice(4)}` : segment))
    .join('/');
}

async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const relative = path.join(prefix, entry.name);
    if (entry.isDirectory()) files.push(...(await listFiles(path.join(dir, entry.name), relative)));
    else files.push(relative);
  }
  return files;
}
