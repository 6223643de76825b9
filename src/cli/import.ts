/** `kubesmith import crd`: other people's CRDs as TypeScript types in kubesmith's marker dialect. */
import path from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import type { InputText } from '../importer/read.js';
import type { CommandContext } from './main.js';

interface ImportFlags {
  fromCluster: boolean;
  out?: string;
  version: string[];
  force: boolean;
  dryRun: boolean;
}

const HELP = `
Reads apiextensions.k8s.io/v1 CRDs (multi-document YAML or JSON; a directory: its .yaml, .yml and .json
files; an http(s) URL, 30 s and 32 MiB at most; - for standard input) and writes, per kind and version,
<out>/<group>/<version>/<kind>.types.ts and the directory's group-version.ts, as create api writes them.
\`kubesmith manifests --paths <out>\` makes the same CRDs again. In a project it keeps a copy of each CRD
in config/crd/external, which the project's envtest installs. A file the import wrote and you edited
since stops the run (--force replaces it); .kubesmith-files beside them records what it wrote.
--from-cluster reads the CRDs named from the kubeconfig's current context, through kubectl (30 s, 32 MiB).

Examples:
  $ kubesmith import crd https://github.com/cert-manager/cert-manager/releases/download/v1.16.2/cert-manager.crds.yaml
  $ kubesmith import crd config/crds/ --out src/external --version v1
  $ kubectl get crd certificates.cert-manager.io -o yaml | kubesmith import crd -
  $ kubesmith import crd --from-cluster certificates.cert-manager.io issuers.cert-manager.io`;

const collect = (value: string, previous: string[]) => [...previous, value];

export function registerImport(program: Command, contextFor: (command: Command) => CommandContext): void {
  const imports = program.command('import').description('import APIs defined elsewhere (import crd)');
  imports
    .command('crd')
    .description('write TypeScript types for CRDs (files, directories, URLs or -)')
    .argument('<sources...>', 'CRD files, directories, http(s) URLs, or - for standard input')
    .option(
      '--from-cluster',
      "the sources are CRDs' names, read from the cluster of the kubeconfig's current context (through kubectl)",
      false,
    )
    .option('--out <dir>', 'the directory to write into (default: src/external of the project)')
    .option('--version <version>', 'import only this version (repeatable; default: all)', collect, [])
    .option('--force', 'replace files edited since the last import', false)
    .option('--dry-run', 'print the files that would be written, and write nothing', false)
    .addHelpText('after', HELP)
    .action(async (sources: string[], flags: ImportFlags, command: Command) => {
      const { out, cwd, stdin, env } = contextFor(command);
      const { findProjectRoot } = await import('../project/find.js');
      const { DEFAULT_OUT_DIR, applyImport, checkConflicts, planImport } =
        await import('../importer/index.js');
      const { EXTERNAL_CRD_DIR } = await import('../project/layout.js');
      const { relativeWithin } = await import('../within.js');
      const root = findProjectRoot(cwd);
      let outDir: string;
      if (flags.out !== undefined) outDir = path.resolve(cwd, flags.out);
      else {
        if (root === undefined)
          throw new UsageError(
            'not in a kubesmith project, and no --out',
            'give the directory to write into with --out, or run the command in a project',
          );
        outDir = path.join(root, DEFAULT_OUT_DIR);
      }
      // Into a project: it keeps a copy of each CRD for its tests (envtest installs config/crd/external).
      const project = root !== undefined && relativeWithin(root, outDir) !== undefined ? root : undefined;
      const texts: InputText[] = [];
      if (flags.fromCluster) {
        const { findKubectl } = await import('../shipping/kubectl.js');
        const { DEFAULT_LIMITS } = await import('../importer/read.js');
        const { readFromCluster } = await import('../importer/cluster.js');
        const kubectl = await findKubectl(env, 'it reads the CRDs from the cluster (--from-cluster)');
        texts.push(await readFromCluster(kubectl, sources, env, DEFAULT_LIMITS));
      }
      const plan = await planImport({
        inputs: flags.fromCluster ? [] : sources,
        texts,
        cwd,
        stdin,
        outDir,
        versions: flags.version,
        force: flags.force,
        ...(project !== undefined ? { crdCopyDir: path.join(project, EXTERNAL_CRD_DIR) } : {}),
      });
      // A conflict is the one line of the error, before anything is listed.
      if (!flags.dryRun) checkConflicts(plan);
      const shownDir = path.relative(cwd, outDir) || '.';
      const styles = { created: 'green', updated: 'cyan', unchanged: 'dim', conflict: 'red' } as const;
      const listed = [
        ...plan.files.map((f) => ({ ...f, path: path.join(shownDir, f.path) })),
        ...(plan.copies?.files ?? []).map((f) => ({
          ...f,
          path: path.join(path.relative(cwd, plan.copies!.dir), f.path),
        })),
      ];
      for (const file of listed) {
        out.info(`${out.style(styles[file.status], file.status.padEnd(9))} ${file.path}`);
      }
      if (!flags.dryRun) applyImport(plan, project ?? outDir);
      const kinds = plan.crds.map((c) => `${c.kind}.${c.group} (${c.versions.join(', ')})`);
      out.info(`${flags.dryRun ? 'would import' : 'imported'} ${kinds.join(', ')}`);
      out.result({
        command: 'import crd',
        ok: true,
        dryRun: flags.dryRun,
        out: outDir,
        crds: plan.crds,
        files: listed.map((f) => ({ path: f.path, status: f.status })),
      });
    });
}
