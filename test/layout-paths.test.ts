/**
 * `src/project/layout.ts` is the one module of src/ that spells where a project's files go: a path spelled
 * again elsewhere drifts from it when the layout changes. This reads every module's string, template and
 * regular-expression literals (comments do not count) and fails on one that names a project path.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('..', import.meta.url));
const LAYOUT = 'src/project/layout.ts';

/**
 * A literal that names a project path: a path under one of the project's top directories, one of its
 * files, or a top directory alone (as `path.join(root, 'src')` has it; `test` and `dist` alone are too
 * common a word: an npm script, kubesmith's own build).
 */
const PROJECT_DIRS = ['config', 'src', 'test', 'dist', 'hack', '.github', '.kubesmith'];
const ALONE = ['config', 'src', '.kubesmith', 'PROJECT', 'LICENSE', '.kubesmith-files'];

function spellsProjectPath(text: string): boolean {
  // A regular expression's `\/` is a `/`, and its anchors say nothing of the path; a kustomization's
  // `- ../config/default` names config/default.
  const plain = text
    .replace(/\\\//g, '/')
    .replace(/^\^|\$$/g, '')
    .replace(/^- /, '')
    .replace(/^(\.\.\/)+/, '');
  if (ALONE.includes(plain)) return true;
  return PROJECT_DIRS.some((dir) => plain.startsWith(`${dir}/`) || plain.startsWith(`${dir}-`));
}

function modules(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(repo, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...modules(rel));
    else if (/\.c?ts$/.test(entry.name) && !/\.(test|d)\.c?ts$/.test(entry.name)) out.push(rel);
  }
  return out;
}

/** The first element of the argument list of a call of `git`: a git subcommand. */
function isGitSubcommand(node: ts.Node): boolean {
  const list = node.parent;
  return (
    ts.isArrayLiteralExpression(list) &&
    list.elements[0] === node &&
    ts.isCallExpression(list.parent) &&
    list.parent.expression.getText() === 'git'
  );
}

/** The literals of a module that name a project path, as `file:line: literal`. */
function projectPathLiterals(file: string): string[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(path.join(repo, file), 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    let text: string | undefined;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) text = node.text;
    else if (ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node))
      text = node.text;
    else if (ts.isRegularExpressionLiteral(node)) text = node.text.slice(1, node.text.lastIndexOf('/'));
    // An import's specifier is a module of kubesmith, not a path of the project; nor is the subcommand
    // that starts a git command line (`git(['config', 'user.email'])`).
    const inImport = ts.isImportDeclaration(node.parent) || ts.isExportDeclaration(node.parent);
    if (text !== undefined && !inImport && !isGitSubcommand(node) && spellsProjectPath(text)) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
      found.push(`${file}:${line + 1}: ${node.getText(source)}`);
    }
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(source, visit);
  return found;
}

describe('project paths', () => {
  it('are spelled in src/project/layout.ts only', () => {
    const spelled = modules('src')
      .filter((file) => file !== LAYOUT)
      .flatMap(projectPathLiterals);
    expect(spelled).toEqual([]);
  });

  it('are what layout.ts spells (the check finds them there)', () => {
    expect(projectPathLiterals(LAYOUT).length).toBeGreaterThan(10);
  });
});
