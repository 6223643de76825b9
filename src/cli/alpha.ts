/**
 * `kubesmith alpha generate`: the project made again from its PROJECT by the running kubesmith, running
 * the plans `init`, `create api`, `create webhook` and `helm-chart` run (src/scaffold/replay.ts says in
 * which order), then the manifests. As kubebuilder's: `--output-dir` absent means in place. Unlike
 * kubebuilder's, in place never deletes: it needs a clean git work tree (git keeps what it overwrites), and
 * writes only the files the scaffold makes. A new output directory must be empty. Each step is written
 * before the next plans (each reads what the previous wrote); a failure puts back every file written and
 * removes the directories made, so the run leaves nothing behind.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { KubesmithError } from '../errors.js';
import { printable } from '../printable.js';
import type { CommandContext } from './main.js';
import type { Plan } from '../scaffold/plan.js';
import type { LoadedProject } from '../project/find.js';
import type { ReplayStep } from '../scaffold/replay.js';
import type { KubesmithPackages } from '../scaffold/packages.js';
import { registerUpdate } from './alpha-update.js';

interface GenerateFlags {
  inputDir?: string;
  outputDir?: string;
}

const HELP = `
The project is made again from its PROJECT: init, then each API and webhook, then the Helm chart when
PROJECT records one, then \`kubesmith manifests\`. npm install is not run.

Without --output-dir the project is made again in place (kubebuilder's default): only inside a clean git
work tree, and every file the scaffold makes is overwritten with the new scaffold's (your edits are in
git: \`git diff\` shows what changed); files the scaffold does not make are left alone, none is deleted.
With --output-dir the project is made in that directory, which must be empty or not exist.

Examples:
  $ kubesmith alpha generate --output-dir ../guestbook-regenerated
  $ kubesmith alpha generate --input-dir guestbook --output-dir /tmp/guestbook
  $ kubesmith alpha generate            # in place, in a clean git work tree`;

export function registerAlpha(program: Command, contextFor: (command: Command) => CommandContext): void {
  const alpha = program
    .command('alpha')
    .description('experimental commands: their flags and output may change between releases');
  alpha
    .command('generate')
    .description("make the project again from its PROJECT with this kubesmith (kubebuilder's alpha generate)")
    .option('--input-dir <dir>', 'the project to make again (default: the project of the current directory)')
    .option(
      '--output-dir <dir>',
      'an empty or new directory for the result (default: the project itself, in place, in a clean git work tree)',
    )
    .addHelpText('after', HELP)
    .action(async (flags: GenerateFlags, command: Command) => {
      await generate(flags, contextFor(command));
    });
  registerUpdate(alpha, contextFor);
}

async function generate(flags: GenerateFlags, context: CommandContext): Promise<void> {
  const { out, cwd, env } = context;
  const root = await inputRoot(flags, cwd);
  const { containedPath } = await import('../project/contained.js');
  const { PROJECT_FILE, BOILERPLATE_FILE } = await import('../project/layout.js');
  const { readProjectText } = await import('../project/read-project.js');
  const { parseProject } = await import('../project/config.js');
  const projectFile = containedPath(root, PROJECT_FILE);
  const config = parseProject(readProjectText(projectFile), path.join(root, PROJECT_FILE));
  const { replaySteps } = await import('../scaffold/replay.js');
  const steps = replaySteps(config, readSmallFile(containedPath(root, BOILERPLATE_FILE)));

  const output = flags.outputDir === undefined ? root : path.resolve(cwd, flags.outputDir);
  const inPlace = sameDirectory(output, root);
  if (inPlace) await requireCleanGitTree(root);
  else requireEmptyDirectory(output, flags.outputDir ?? '');

  const { resolveKubesmithPackages } = await import('../scaffold/packages.js');
  const packages = await resolveKubesmithPackages({ env });
  const journal = new Journal(output);
  const done: string[] = [];
  try {
    if (!existsSync(output)) journal.makeDirectory(output);
    for (const step of steps) {
      const plan = await planStep(step, { input: root, output }, inPlace, packages, env);
      await journal.apply(plan);
      done.push(replayCommandLine(step));
    }
    await journal.apply(await manifestsPlan(output));
    done.push('kubesmith manifests');
  } catch (error) {
    journal.rollback();
    if (error instanceof KubesmithError) {
      const last = steps[done.length];
      throw new KubesmithError(
        `${last ? `${replayCommandLine(last)}: ` : ''}${error.message}; nothing was written`,
        { hint: error.hint ?? 'fix PROJECT and run again', exitCode: error.exitCode },
      );
    }
    throw error;
  }
  if (packages.note) out.info(packages.note);
  // One line per file, as the plans of the commands print them; the steps with --verbose and --json.
  for (const line of done) out.debug(printable(`ran ${line}`));
  for (const file of [...journal.written].sort()) {
    const verb = journal.existed(file) ? 'update' : 'create';
    out.info(`${out.style(verb === 'create' ? 'green' : 'cyan', verb.padEnd(9))} ${file}`);
  }
  const where = inPlace ? 'in place' : `in ${path.relative(cwd, output) || '.'}`;
  out.info(
    `Next: review the project made again ${where} (${journal.written.size} files)${inPlace ? ': `git diff` shows what changed' : ''}`,
  );
  out.result({
    command: 'alpha generate',
    ok: true,
    input: root,
    output,
    inPlace,
    steps: done,
    written: [...journal.written].sort(),
  });
}

/** The input project's root: --input-dir itself, or the project of the current directory. */
async function inputRoot(flags: GenerateFlags, cwd: string): Promise<string> {
  const { PROJECT_FILE } = await import('../project/layout.js');
  if (flags.inputDir === undefined) {
    const { requireProjectRoot } = await import('../project/find.js');
    return requireProjectRoot(cwd);
  }
  const dir = path.resolve(cwd, flags.inputDir);
  if (!existsSync(path.join(dir, PROJECT_FILE)))
    throw new KubesmithError(`not a kubesmith project: no ${PROJECT_FILE} file in ${dir}`, {
      hint: 'give --input-dir the directory holding the PROJECT file',
    });
  return dir;
}

/** A file of at most 64 KiB (the license header), or undefined when there is none. */
function readSmallFile(file: string): string | undefined {
  try {
    // Not a regular file (a FIFO, a device), or larger than any license header: not one kubesmith wrote.
    const stat = lstatSync(file);
    if (!stat.isFile() || stat.size > 64 * 1024) return undefined;
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function sameDirectory(a: string, b: string): boolean {
  const real = (dir: string) => (existsSync(dir) ? realpathSync(dir) : path.resolve(dir));
  return real(a) === real(b);
}

function requireEmptyDirectory(dir: string, flag: string): void {
  if (!existsSync(dir)) return;
  const stat = lstatSync(dir);
  if (!stat.isDirectory())
    throw new KubesmithError(`--output-dir ${flag} is not a directory`, {
      hint: 'give a new or empty directory, e.g. --output-dir ../my-project-regenerated',
    });
  if (readdirSync(dir).length > 0)
    throw new KubesmithError(`--output-dir ${flag} is not empty`, {
      hint: 'give a new or empty directory; to make the project again in place, leave --output-dir out (in a clean git work tree)',
    });
}

/** In place is allowed only where git holds every file as it was: a work tree with nothing to commit. */
async function requireCleanGitTree(root: string): Promise<void> {
  const { execa } = await import('execa');
  const result = await execa('git', ['status', '--porcelain', '--', '.'], {
    cwd: root,
    reject: false,
    timeout: 60_000,
    stdin: 'ignore',
    maxBuffer: 4 * 1024 * 1024,
  });
  if (result.exitCode !== 0)
    throw new KubesmithError(
      `${root} is not in a git work tree: alpha generate in place would overwrite files git cannot give back`,
      {
        hint: 'commit the project to git first, or pass --output-dir <new directory>',
      },
    );
  const dirty = String(result.stdout).split('\n').filter(Boolean);
  if (dirty.length > 0)
    throw new KubesmithError(
      `the git work tree has ${dirty.length} uncommitted change${dirty.length === 1 ? '' : 's'} (${dirty[0]!.slice(3)}${dirty.length > 1 ? ', ...' : ''}): alpha generate in place overwrites files`,
      { hint: 'commit or stash your changes first, or pass --output-dir <new directory>' },
    );
}

async function loadOutput(output: string): Promise<LoadedProject> {
  const { PROJECT_FILE } = await import('../project/layout.js');
  const { readProjectText } = await import('../project/read-project.js');
  const { parseProject } = await import('../project/config.js');
  const { containedPath } = await import('../project/contained.js');
  const text = readProjectText(containedPath(output, PROJECT_FILE));
  return { root: output, config: parseProject(text, PROJECT_FILE), text };
}

type Step = ReplayStep;

async function planStep(
  step: Step,
  { input, output }: { input: string; output: string },
  inPlace: boolean,
  packages: KubesmithPackages,
  env: NodeJS.ProcessEnv,
): Promise<Plan> {
  // In place, each step overwrites the file it makes (as `--force`); in a new directory nothing is there.
  const force = inPlace;
  switch (step.command) {
    case 'init': {
      const { planInit } = await import('../scaffold/init.js');
      return planInit({ root: output, ...step.options, force, packages });
    }
    case 'create api': {
      const { planCreateApi } = await import('../scaffold/api.js');
      return planCreateApi(await loadOutput(output), { ...step.options, force });
    }
    case 'create webhook': {
      const { planCreateWebhook } = await import('../scaffold/webhook.js');
      return planCreateWebhook(await loadOutput(output), { ...step.options, force });
    }
    case 'import crd': {
      // The copy of the CRD the input project keeps, imported into the output as `import crd` does.
      const { containedPath } = await import('../project/contained.js');
      const { EXTERNAL_API_DIR, EXTERNAL_CRD_DIR } = await import('../project/layout.js');
      const { importWrites, planImport } = await import('../importer/index.js');
      const { Readable } = await import('node:stream');
      const plan = await planImport({
        inputs: [containedPath(input, step.options.source)],
        cwd: input,
        stdin: Readable.from([]),
        outDir: path.join(output, EXTERNAL_API_DIR),
        crdCopyDir: path.join(output, EXTERNAL_CRD_DIR),
        versions: step.options.version,
        force,
      });
      const entries = importWrites(plan, output).map((write) => ({
        action: write.previous === undefined ? ('create' as const) : ('update' as const),
        path: write.path,
        content: write.content,
        ...(write.previous !== undefined ? { previous: write.previous } : {}),
      }));
      return { root: output, warnings: [], entries };
    }
    case 'edit': {
      const { planAutoupdate } = await import('../scaffold/autoupdate.js');
      return planAutoupdate(await loadOutput(output), force);
    }
    case 'helm-chart': {
      const { planHelmChart } = await import('./helm-chart.js');
      const { CHART_DIR } = await import('../project/layout.js');
      const { plan } = await planHelmChart(await loadOutput(output), {
        output: step.options.output ?? CHART_DIR,
        ...(step.options.image !== undefined ? { img: step.options.image } : {}),
        force,
        // The recorded image, not $IMG of this shell, is the chart's.
        env: { ...env, IMG: '' },
      });
      return plan;
    }
  }
}

/** `kubesmith manifests` as a plan: the generated files of the sources now in the output directory. */
async function manifestsPlan(output: string): Promise<Plan> {
  const { generateManifests, formatDiagnostic, isError } = await import('../manifests/index.js');
  const { files, diagnostics } = await generateManifests({ root: output });
  const errors = diagnostics.filter(isError);
  if (errors.length > 0)
    throw new KubesmithError(`kubesmith manifests: ${formatDiagnostic(errors[0]!)}`, {
      hint: 'fix the API sources, then run `kubesmith manifests`',
    });
  const { containedPaths } = await import('../project/contained.js');
  const inside = containedPaths(output);
  return {
    root: output,
    warnings: [],
    entries: files.map((file) => {
      const previous = readSmallFileOrUndefined(inside(file.path));
      return previous === file.content
        ? { action: 'unchanged' as const, path: file.path, content: file.content, previous }
        : {
            action: previous === undefined ? ('create' as const) : ('update' as const),
            path: file.path,
            content: file.content,
            ...(previous !== undefined ? { previous } : {}),
          };
    }),
  };
}

function readSmallFileOrUndefined(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * What the run has written, so that a failure puts it back: each file's content before the first step
 * that wrote it (undefined: it did not exist) and each directory made, outermost first.
 */
class Journal {
  private readonly before = new Map<string, string | Uint8Array | undefined>();
  private readonly directories: string[] = [];
  readonly written = new Set<string>();

  constructor(private readonly root: string) {}

  /** Whether `file` was there before the run. */
  existed(file: string): boolean {
    return this.before.get(file) !== undefined;
  }

  /** Makes `dir` and the parents it lacks, each to be removed again by rollback(). */
  makeDirectory(dir: string): void {
    for (let missing = dir; !existsSync(missing); missing = path.dirname(missing))
      this.directories.push(missing);
    mkdirSync(dir, { recursive: true });
  }

  async apply(plan: Plan): Promise<void> {
    const blocked = plan.entries.filter((entry) => entry.action === 'conflict');
    if (blocked.length > 0)
      throw new KubesmithError(`${blocked[0]!.path} already exists with other content`, {
        hint: 'make the project again in an empty directory (--output-dir)',
      });
    for (const entry of plan.entries) {
      if (entry.action === 'unchanged') continue;
      if (entry.action === 'remove')
        throw new KubesmithError(`the scaffold would remove ${entry.path}`, {
          hint: 'alpha generate never deletes a file; remove it yourself if it must go',
        });
      if (!this.before.has(entry.path)) this.before.set(entry.path, entry.previous);
      for (
        let dir = path.dirname(path.join(this.root, entry.path));
        dir.length > this.root.length;
        dir = path.dirname(dir)
      ) {
        if (!existsSync(dir) && !this.directories.includes(dir)) this.directories.push(dir);
      }
      this.written.add(entry.path);
    }
    this.directories.sort((a, b) => a.length - b.length);
    const { applyPlan } = await import('../scaffold/apply.js');
    await applyPlan(plan);
  }

  /** Puts back every file as it was and removes the directories the run made (when empty). */
  rollback(): void {
    for (const [file, previous] of this.before) {
      const target = path.join(this.root, file);
      try {
        if (previous === undefined) rmSync(target, { force: true });
        else writeFileSync(target, previous);
      } catch {
        // Best effort: the error that stopped the run is the one reported.
      }
    }
    for (const dir of [...this.directories].reverse()) {
      try {
        rmdirSync(dir);
      } catch {
        // Not empty: something else wrote there.
      }
    }
  }
}

/** A step as the command line that does the same, for messages: `kubesmith create api --group ...`. */
function replayCommandLine(step: Step): string {
  const flags = Object.entries(step.options)
    .filter(
      ([key, value]) =>
        key !== 'year' &&
        value !== undefined &&
        value !== false &&
        !(Array.isArray(value) && value.length === 0),
    )
    .map(([key, value]) => {
      const flag = `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      if (value === true) return flag;
      if (key === 'source') return String(value);
      if (key === 'deployImage') return `--image ${(value as { image: string }).image}`;
      return `${flag} ${Array.isArray(value) ? value.join(',') : String(value)}`;
    });
  return ['kubesmith', step.command, ...flags].join(' ');
}
