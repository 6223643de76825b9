/** `kubesmith validate`: objects checked offline against CRDs, as kube-apiserver checks a create or update. */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { ExitCode, KubesmithError } from '../errors.js';
import { CRD_BASES_DIR, EXTERNAL_CRD_DIR } from '../project/layout.js';
import { relativeWithin } from '../within.js';
import type { CrdIndex, Document } from '../schema/validate-input.js';
import type { CommandContext } from './main.js';

interface ValidateFlags {
  crd: string[];
  old?: string;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function registerValidate(program: Command, contextFor: (command: Command) => CommandContext): void {
  program
    .command('validate')
    .description('check objects against the CRDs offline, as the API server checks a create or update')
    .argument('<paths...>', 'YAML files or directories of objects (several documents a file)')
    .option(
      '--crd <path>',
      "a CRD file or directory (repeatable); default: the project's config/crd/bases and config/crd/external",
      collect,
      [],
    )
    .option('--old <file>', 'the stored object: check an update from it (transition rules, ratcheting)')
    .addHelpText(
      'after',
      `
Exit status: 0 when every object is valid, 1 when any is not, 2 for usage errors.

Examples:
  $ kubesmith validate config/samples
  $ kubesmith validate --crd config/crd/bases my-object.yaml
  $ kubesmith validate --old stored.yaml changed.yaml`,
    )
    .action(async (paths: string[], flags: ValidateFlags, command: Command) => {
      const { out, cwd } = contextFor(command);
      const input = await import('../schema/validate-input.js');
      const { validateObject } = await import('#validation/validate.js');
      const show = (file: string) => path.relative(cwd, file) || file;
      const documents = paths.flatMap((p) => {
        const files = input.yamlFiles(path.resolve(cwd, p), p);
        return files.flatMap((file) => input.readDocuments(file, show(file)));
      });
      if (documents.length === 0) {
        // A project with no API yet has no samples: nothing to check, and no CRDs needed.
        out.info('no objects to validate');
        out.result({ command: 'validate', ok: true, objects: [] });
        return;
      }
      let crdPaths = flags.crd.map((p) => path.resolve(cwd, p));
      if (crdPaths.length === 0) {
        const { requireProjectRoot } = await import('../project/find.js');
        const root = requireProjectRoot(cwd);
        const bases = path.join(root, CRD_BASES_DIR);
        // The copies of the CRDs `import crd` imported: objects of those kinds are checked too.
        const external = path.join(root, EXTERNAL_CRD_DIR);
        // The project's files may come from a stranger's pull request: its CRD directories must not lead
        // out of the project through a symbolic link.
        const real = (p: string) => (fs.existsSync(p) ? fs.realpathSync(p) : p);
        for (const [dir, name] of [
          [bases, CRD_BASES_DIR],
          [external, EXTERNAL_CRD_DIR],
        ] as const)
          if (relativeWithin(real(root), real(dir)) === undefined)
            throw new KubesmithError(`${show(dir)}: leads out of the project (a symbolic link)`, {
              hint: `make ${name} a directory of the project, or give the CRDs with --crd`,
            });
        const present = [bases, external].filter((dir) => fs.existsSync(dir));
        crdPaths = present.length > 0 ? present : [bases];
      }
      const index: CrdIndex = new Map();
      for (const crdPath of crdPaths)
        for (const file of input.yamlFiles(crdPath, show(crdPath)))
          input.indexCrds(input.readDocuments(file, show(file)), index);
      if (index.size === 0)
        throw new KubesmithError(`no CRDs in ${crdPaths.map(show).join(', ')}`, {
          hint: 'run kubesmith manifests first, or give the CRDs with --crd FILE|DIR',
        });
      let old: Document | undefined;
      if (flags.old !== undefined) {
        const file = path.resolve(cwd, flags.old);
        const docs = input.readDocuments(input.yamlFiles(file)[0] ?? file, show(file));
        if (docs.length !== 1 || !isObject(docs[0]!.value))
          throw new KubesmithError(`${show(file)}:1: --old must hold one object`, {
            hint: 'give --old the stored object alone',
          });
        old = docs[0];
      }
      let invalid = 0;
      const results: unknown[] = [];
      for (const doc of documents) {
        const obj = doc.value;
        const where = `${doc.file}:${doc.line}`;
        if (!isObject(obj) || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string')
          throw new KubesmithError(`${where}: not a Kubernetes object (no apiVersion and kind)`, {
            hint: 'each YAML document must be an object with apiVersion, kind and metadata',
          });
        const version = index.get(input.crdKey(obj.apiVersion, obj.kind));
        if (!version)
          throw new KubesmithError(`${where}: no CRD for ${obj.kind} (${obj.apiVersion})`, {
            hint: 'give the CRD with --crd, or run kubesmith manifests',
          });
        let stored: Record<string, unknown> | undefined;
        if (old) {
          const o = old.value as Record<string, unknown>;
          const name = (v: Record<string, unknown>) => (isObject(v.metadata) ? v.metadata.name : undefined);
          if (o.apiVersion !== obj.apiVersion || o.kind !== obj.kind || name(o) !== name(obj))
            throw new KubesmithError(
              `${old.file}:${old.line}: --old is ${String(o.kind)} ${String(name(o))}, not ${obj.kind} ${String(name(obj))} (${where})`,
              { hint: 'give --old the stored version of the same object' },
            );
          stored = o;
        }
        const verdict = validateObject(obj, version, stored);
        const line = (steps: readonly (string | number)[]) => `${doc.file}:${doc.lineOf(steps)}`;
        for (const w of verdict.warnings) out.print(`${line(w.steps)}: ${w.path}: warning: ${w.message}`);
        for (const e of verdict.errors) out.print(`${line(e.steps)}: ${e.path}: ${e.message}`);
        if (verdict.errors.length > 0) invalid++;
        results.push({
          file: doc.file,
          line: doc.line,
          kind: obj.kind,
          name: isObject(obj.metadata) ? obj.metadata.name : undefined,
          valid: verdict.errors.length === 0,
          errors: verdict.errors.map((e) => ({
            line: doc.lineOf(e.steps),
            field: e.path,
            message: e.message,
          })),
          warnings: verdict.warnings.map((w) => ({
            line: doc.lineOf(w.steps),
            field: w.path,
            message: w.message,
          })),
        });
      }
      if (invalid > 0)
        throw new KubesmithError(
          `${invalid} of ${documents.length} object${documents.length === 1 ? '' : 's'} invalid`,
          {
            hint: 'fix the fields above; each line is what the API server would say',
            exitCode: ExitCode.error,
            details: { command: 'validate', objects: results },
          },
        );
      out.result({ command: 'validate', ok: true, objects: results });
      out.info(`${documents.length} object${documents.length === 1 ? '' : 's'} valid`);
    });
}
