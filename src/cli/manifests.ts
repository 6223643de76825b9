/** `kubesmith manifests`: CRDs, RBAC and webhook configurations from TypeScript types and markers. */
import { statSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { ExitCode, KubesmithError } from '../errors.js';
import { CRD_BASES_DIR } from '../project/layout.js';
import type { CommandContext } from './main.js';

interface ManifestsFlags {
  crd: boolean;
  rbac: boolean;
  webhook: boolean;
  check: boolean;
  stdout: boolean;
  maxDescLen?: number;
  paths?: string;
  outputDir?: string;
}

function isDirectory(dir: string): boolean {
  return statSync(dir, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

function parseMaxDescLen(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number (0 drops descriptions).');
  return Number(value);
}

export function registerManifests(program: Command, contextFor: (command: Command) => CommandContext): void {
  program
    .command('manifests')
    .description('generate CRDs, RBAC and webhook configurations from TypeScript types and markers')
    .option('--crd', 'generate CRDs (config/crd/bases); with none of --crd/--rbac/--webhook, all', false)
    .option('--rbac', 'generate the manager role (config/rbac/role.yaml)', false)
    .option('--webhook', 'generate webhook configurations (config/webhook/manifests.yaml)', false)
    .option('--check', 'write nothing; exit 3 with a diff when the files on disk are stale', false)
    .option('--stdout', 'print the manifests instead of writing them', false)
    .option(
      '--paths <dir>',
      'generate the CRDs of the types in <dir>/<group>/<version>/*.ts, in a project or not (controller-gen paths=)',
    )
    .option(
      '--output-dir <dir>',
      'write the CRDs into <dir> as <group>_<plural>.yaml (controller-gen output:crd:dir=)',
    )
    .option(
      '--max-desc-len <n>',
      'cut schema descriptions longer than n characters (0 drops them)',
      parseMaxDescLen,
    )
    .addHelpText(
      'after',
      `
Examples:
  $ kubesmith manifests
  $ kubesmith manifests --crd --max-desc-len 0
  $ kubesmith manifests --rbac --stdout
  $ kubesmith manifests --check          # in CI: exit 3 when the generated files are stale
  $ kubesmith manifests --paths src/external --output-dir /tmp/crds`,
    )
    .action(async (flags: ManifestsFlags, command: Command) => {
      const { out, cwd } = contextFor(command);
      const crdsOnly = flags.paths !== undefined || flags.outputDir !== undefined;
      if (crdsOnly && (flags.rbac || flags.webhook)) {
        throw new KubesmithError('--paths and --output-dir generate CRDs only, not --rbac or --webhook', {
          hint: 'run kubesmith manifests --rbac / --webhook apart, without --paths and --output-dir',
          exitCode: ExitCode.usage,
        });
      }
      const { requireProjectRoot } = await import('../project/find.js');
      const root = flags.paths !== undefined ? path.resolve(cwd, flags.paths) : requireProjectRoot(cwd);
      if (flags.paths !== undefined && !isDirectory(root)) {
        throw new KubesmithError(`--paths ${flags.paths}: no such directory`, {
          hint: 'give the directory that holds <group>/<version>/*.ts',
          exitCode: ExitCode.usage,
        });
      }
      // As controller-gen: CRDs go to config/crd/bases of the current directory unless told otherwise.
      const outputRoot =
        flags.outputDir !== undefined
          ? path.resolve(cwd, flags.outputDir)
          : flags.paths !== undefined
            ? path.resolve(cwd, CRD_BASES_DIR)
            : root;
      const options = {
        ...(flags.paths !== undefined ? { paths: true } : {}),
        ...(crdsOnly ? { flatCrds: true } : {}),
        crd: flags.crd || crdsOnly,
        rbac: flags.rbac,
        webhook: flags.webhook,
        ...(flags.maxDescLen !== undefined ? { maxDescLen: flags.maxDescLen } : {}),
      };
      // Unchanged inputs and outputs: nothing to generate, and ts-morph is never loaded.
      const stamp = await import('../manifests/stamp.js');
      const current = flags.stdout || crdsOnly ? undefined : await stamp.fingerprint(root, options);
      const cached = current === undefined ? undefined : await stamp.upToDateOutputs(root, current);
      if (cached) {
        if (flags.check)
          out.info(`manifests are up to date (${cached.length} file${cached.length === 1 ? '' : 's'})`);
        else for (const file of cached) out.info(`${out.style('dim', 'unchanged'.padEnd(9))} ${file}`);
        out.result({
          command: 'manifests',
          ok: true,
          ...(flags.check
            ? { stale: [] }
            : { files: cached.map((file) => ({ path: file, status: 'unchanged' })) }),
          diagnostics: [],
          cached: true,
        });
        return;
      }
      // ts-morph loads only here, so other commands stay fast.
      const { generateManifests, formatDiagnostic, isError } = await import('../manifests/index.js');
      const { diffAgainstDisk, OutputWriter } = await import('../manifests/write.js');
      // Each file is written to a temporary name as soon as it is generated, and renamed into place only
      // when the whole run found no error.
      const writer = flags.stdout || flags.check ? undefined : new OutputWriter(outputRoot);
      try {
        const { files, diagnostics } = await generateManifests({
          root,
          ...options,
          ...(writer ? { onFile: (file) => writer.add(file) } : {}),
        });
        const shown = diagnostics.map((d) => ({
          ...d,
          file: path.relative(cwd, path.join(root, d.file)) || d.file,
        }));
        for (const d of shown) out.info(formatDiagnostic(d));
        const errors = diagnostics.filter(isError);
        if (errors.length > 0) {
          throw new KubesmithError(
            `${errors.length} error${errors.length > 1 ? 's' : ''} in the API sources; nothing was written`,
            {
              hint: 'fix the problems listed above and run kubesmith manifests again',
              details: { command: 'manifests', diagnostics: shown },
            },
          );
        }
        if (flags.stdout) {
          out.print(files.map((f) => f.content).join(''));
          out.result({ command: 'manifests', ok: true, files });
          return;
        }
        if (flags.check) {
          const stale = await diffAgainstDisk(outputRoot, files);
          if (stale.length === 0) {
            if (current) await stamp.saveStamp(root, current, files);
            out.info(`manifests are up to date (${files.length} file${files.length === 1 ? '' : 's'})`);
            out.result({ command: 'manifests', ok: true, stale: [], diagnostics: shown });
            return;
          }
          out.print(stale.map((s) => s.diff).join(''));
          throw new KubesmithError(
            `${stale.length} generated file${stale.length > 1 ? 's are' : ' is'} out of date: ${stale.map((s) => s.path).join(', ')}`,
            {
              hint: 'run kubesmith manifests and commit the result',
              exitCode: ExitCode.drift,
              details: { command: 'manifests', stale: stale.map((s) => s.path), diagnostics: shown },
            },
          );
        }
        const statuses = await writer!.commit();
        if (current) await stamp.saveStamp(root, current, files);
        for (const s of statuses)
          out.info(`${out.style(s.status === 'unchanged' ? 'dim' : 'green', s.status.padEnd(9))} ${s.path}`);
        out.result({ command: 'manifests', ok: true, files: statuses, diagnostics: shown });
      } finally {
        await writer?.discard();
      }
    });
}
