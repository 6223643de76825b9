/**
 * The processes `alpha update` runs and the two scaffolds it makes with them, each in a directory of its
 * own temporary directory: the old kubesmith installed from an npm spec, the old scaffold made by it (its
 * `alpha generate` when it has one, else the commands PROJECT records, run one by one), the new scaffold
 * made by the running kubesmith (or --to-cli). Every process has a timeout; none runs in the user's work
 * tree.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { KubesmithError } from '../errors.js';
import { containedPath } from '../project/contained.js';
import { PROJECT_FILE } from '../project/layout.js';
import type { ReplayStep } from '../scaffold/replay.js';

export interface ProcessResult {
  code: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Runs `command` with a timeout, never through a shell, stdin closed; output bounded. */
export async function runProcess(
  command: string,
  args: string[],
  options: { cwd: string; timeoutMs: number; env?: NodeJS.ProcessEnv },
): Promise<ProcessResult> {
  const { execa } = await import('execa');
  const result = await execa(command, args, {
    cwd: options.cwd,
    reject: false,
    timeout: options.timeoutMs,
    stdin: 'ignore',
    maxBuffer: 64 * 1024 * 1024,
    ...(options.env ? { env: options.env, extendEnv: false } : {}),
  });
  return {
    code: result.exitCode ?? 1,
    stdout: String(result.stdout ?? ''),
    stderr: String(result.stderr ?? ''),
    timedOut: result.timedOut === true,
  };
}

/**
 * The line of a failed process's output that says what failed: an `error:` line (kubesmith), the first
 * line naming a failure (a test runner's FAIL, a compiler's error), else the last line. Colours removed.
 */
export function lastLine(result: ProcessResult): string {
  if (result.timedOut) return 'timed out';
  const lines = stripVTControlCharacters(`${result.stderr}\n${result.stdout}`)
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const line =
    lines.find((l) => l.startsWith('error:')) ??
    lines.find((l) => /^(FAIL|×|✗)\s|\berror\b|\bERR!/i.test(l)) ??
    lines.at(-1) ??
    `exit code ${result.code}`;
  return line.slice(0, 400);
}

/** A kubesmith to run: `node <bin>`, and the package directory it came from. */
export interface Cli {
  /** How it is named in messages: the npm spec, or "this kubesmith". */
  name: string;
  bin: string;
  packageDir: string;
}

const INSTALL_TIMEOUT_MS = 10 * 60_000;
const COMMAND_TIMEOUT_MS = 5 * 60_000;

/**
 * Installs kubesmith from an npm spec (a version, a tarball, a directory) into `dir`, as npm installs any
 * package: from npm's cache first (`--prefer-offline`), so that a tarball or a version installed before
 * needs no network. Install scripts are not run.
 */
export async function installCli(spec: string, dir: string, role: 'old' | 'new'): Promise<Cli> {
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'package.json'), '{ "private": true }\n');
  const result = await runProcess(
    'npm',
    [
      'install',
      spec,
      '--prefer-offline',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      '--loglevel',
      'error',
    ],
    { cwd: dir, timeoutMs: INSTALL_TIMEOUT_MS },
  );
  const packageDir = path.join(dir, 'node_modules', 'kubesmith');
  const bin = path.join(packageDir, 'bin', 'kubesmith.js');
  if (result.code !== 0 || !existsSync(bin))
    throw new KubesmithError(
      `the ${role} kubesmith (${spec}) could not be installed: ${result.code === 0 ? 'the package has no bin/kubesmith.js' : lastLine(result)}`,
      {
        hint:
          role === 'old'
            ? 'pass --from-cli with the kubesmith that made the project: a version, a tarball or a directory (e.g. --from-cli ./kubesmith-0.1.0.tgz)'
            : 'pass --to-cli with a kubesmith npm can install: a version, a tarball or a directory',
      },
    );
  return { name: spec, bin, packageDir };
}

/** Runs a kubesmith command; a failure is an error naming the command and the kubesmith. */
export async function runCli(
  cli: Cli,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = COMMAND_TIMEOUT_MS,
): Promise<ProcessResult> {
  const result = await runProcess(process.execPath, [cli.bin, ...args], { cwd, timeoutMs, env });
  if (result.code !== 0)
    throw new KubesmithError(`kubesmith ${args.join(' ')} (${cli.name}) failed: ${lastLine(result)}`, {
      hint: 'nothing was changed; the line above is the command that failed and its error',
    });
  return result;
}

/** Whether `cli` has `alpha generate --input-dir --output-dir` (kubesmith after issue 27). */
async function hasAlphaGenerate(cli: Cli, cwd: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const result = await runProcess(process.execPath, [cli.bin, 'alpha', 'generate', '--help'], {
    cwd,
    timeoutMs: 60_000,
    env,
  });
  return result.code === 0 && result.stdout.includes('--input-dir');
}

/**
 * The project of `input` (a directory with PROJECT and the license header) made by `cli` in `output` (a
 * new directory): by its `alpha generate`, or by running the commands of `steps` in turn, then
 * `manifests`. The year of the license header is the project's (SOURCE_DATE_EPOCH), the chart's image
 * the recorded one ($IMG empty).
 */
export async function makeScaffold(
  cli: Cli,
  input: string,
  output: string,
  steps: ReplayStep[],
  env: NodeJS.ProcessEnv,
): Promise<'alpha generate' | 'replay'> {
  const year = steps[0]?.command === 'init' ? steps[0].options.year : undefined;
  const childEnv: NodeJS.ProcessEnv = {
    ...env,
    IMG: '',
    ...(year !== undefined ? { SOURCE_DATE_EPOCH: String(Date.UTC(year, 6, 1) / 1000) } : {}),
  };
  if (await hasAlphaGenerate(cli, input, childEnv)) {
    await runCli(cli, ['alpha', 'generate', '--input-dir', input, '--output-dir', output], input, childEnv);
    return 'alpha generate';
  }
  await mkdir(output, { recursive: true });
  for (const step of steps) await runCli(cli, replayArgs(step, input), output, childEnv);
  await runCli(cli, ['manifests'], output, childEnv);
  return 'replay';
}

/**
 * A step as the arguments of the command that does it, each flag only when it is not the default, so
 * that a kubesmith older than the flag (--license, --owner) still runs the steps that do not need it.
 * `input` is the project the steps come from: an imported kind's CRD is read from its copy there.
 */
export function replayArgs(step: ReplayStep, input: string): string[] {
  switch (step.command) {
    case 'init': {
      const o = step.options;
      return [
        'init',
        '--domain',
        o.domain,
        '--project-name',
        o.projectName,
        '--skip-install',
        ...(o.owner ? ['--owner', o.owner] : []),
        ...(o.license !== 'apache2' ? ['--license', o.license] : []),
        ...(o.namespaced ? ['--namespaced'] : []),
        ...(o.multigroup ? ['--multigroup'] : []),
        ...(o.certProvider !== undefined && o.certProvider !== 'cert-manager'
          ? ['--cert-provider', o.certProvider]
          : []),
      ];
    }
    case 'import crd':
      return [
        'import',
        'crd',
        containedPath(input, step.options.source),
        ...step.options.version.flatMap((version) => ['--version', version]),
      ];
    case 'create api': {
      const o = step.options;
      const image = o.deployImage;
      return [
        'create',
        'api',
        '--group',
        o.group,
        '--version',
        o.version,
        '--kind',
        o.kind,
        ...(o.plural !== undefined ? ['--plural', o.plural] : []),
        ...(!o.namespaced ? ['--namespaced=false'] : []),
        ...(!o.resource ? ['--resource=false'] : []),
        ...(!o.controller ? ['--controller=false'] : []),
        ...(image
          ? [
              '--image',
              image.image,
              ...(image.containerPort !== undefined
                ? ['--image-container-port', String(image.containerPort)]
                : []),
              ...(image.containerCommand.length > 0
                ? ['--image-container-command', image.containerCommand.join(',')]
                : []),
              ...(image.runAsUser !== undefined ? ['--run-as-user', String(image.runAsUser)] : []),
              ...(image.serviceType !== 'ClusterIP' ? ['--service-type', image.serviceType] : []),
              ...(image.nodePort !== undefined ? ['--node-port', String(image.nodePort)] : []),
            ]
          : []),
      ];
    }
    case 'create webhook': {
      const o = step.options;
      return [
        'create',
        'webhook',
        '--group',
        o.group,
        '--version',
        o.version,
        '--kind',
        o.kind,
        ...(o.defaulting ? ['--defaulting'] : []),
        ...(o.validation ? ['--programmatic-validation'] : []),
        ...(o.conversion ? ['--conversion', '--spoke', o.spoke.join(',')] : []),
      ];
    }
    case 'edit':
      return ['edit', '--plugins', step.options.plugins];
    case 'helm-chart':
      return [
        'helm-chart',
        ...(step.options.image !== undefined ? ['--img', step.options.image] : []),
        ...(step.options.output !== undefined ? ['--output', step.options.output] : []),
      ];
  }
}

/** The cliVersion a scaffold's PROJECT records (the kubesmith that made it). */
export function recordedCliVersion(projectDir: string): string | undefined {
  try {
    return /^cliVersion: ['"]?([^'"\s]+)/m.exec(
      readFileSync(path.join(projectDir, PROJECT_FILE), 'utf8'),
    )?.[1];
  } catch {
    return undefined;
  }
}

/**
 * The CHANGELOG entries (top-level bullets) the new kubesmith carries and the old one does not: what
 * the update crosses, also between two builds of one unreleased version. Empty when either has none.
 */
export function changelogCrossed(oldCli: Cli, newCli: Cli): string[] {
  const entries = (cli: Cli): string[] | undefined => {
    try {
      const text = readFileSync(path.join(cli.packageDir, 'CHANGELOG.md'), 'utf8');
      return text
        .split(/\n(?=- |#)/)
        .filter((entry) => entry.startsWith('- '))
        .map((entry) => entry.replace(/\s+/g, ' ').trim());
    } catch {
      return undefined;
    }
  };
  const before = entries(oldCli);
  const after = entries(newCli);
  if (!before || !after) return [];
  const known = new Set(before);
  return after.filter((entry) => !known.has(entry));
}
