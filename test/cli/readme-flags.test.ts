/**
 * The README's section of each command names every flag its `--help` lists, and no flag it does not
 * have: the tables and the prose are checked against the commands themselves.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeTemp, run, tempDir } from '../helpers/run.js';

const README = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');
/** Flags every command has (README's "Commands" says so once, for all). */
const GLOBAL = new Set(['--help', '--verbose', '--json', '--no-color']);

/** The text of README's `### \`kubesmith <command>\`` section. */
function section(command: string): string {
  const start = README.indexOf(`### \`kubesmith ${command}\``);
  if (start < 0) throw new Error(`README.md has no section for kubesmith ${command}`);
  const end = README.slice(start + 4).search(/\n##+ /);
  return end < 0 ? README.slice(start) : README.slice(start, start + 4 + end);
}

/** The long flags of a `--help` text's Options (`--namespaced[=bool]` is `--namespaced`). */
function helpFlags(help: string): string[] {
  const options = help.slice(help.indexOf('Options:'));
  return [...options.matchAll(/^ {2}(?:-\w, )?(--[a-z0-9-]+)/gm)].map((m) => m[1]!);
}

/** The flags a section's tables list in their first column. */
function tableFlags(text: string): string[] {
  return [...text.matchAll(/^\| `(--[a-z0-9-]+)/gm)].map((m) => m[1]!);
}

describe("README's flags", () => {
  it.each([
    'init',
    'create api',
    'create webhook',
    'manifests',
    'import crd',
    'validate',
    'run',
    'envtest',
    'build-installer',
    'helm-chart',
    'alpha generate',
    'alpha update',
  ])('kubesmith %s: the section names every flag of --help, and its table no other', async (command) => {
    const dir = await tempDir();
    try {
      const result = await run(dir, ...command.split(' '), '--help');
      expect(result.code).toBe(0);
      const flags = helpFlags(result.stdout).filter((flag) => !GLOBAL.has(flag));
      const text = section(command);
      const missing = flags.filter((flag) => !new RegExp(`${flag}(?![a-z0-9-])`).test(text));
      expect(missing, `flags of kubesmith ${command} --help that README.md does not name`).toEqual([]);
      const unknown = tableFlags(text).filter((flag) => !flags.includes(flag) && !GLOBAL.has(flag));
      expect(unknown, `flags in README.md's table for kubesmith ${command} that --help lacks`).toEqual([]);
    } finally {
      await removeTemp(dir);
    }
  });
});
