/** `kubesmith init`: a new operator project in the current directory. */
import path from 'node:path';
import type { Command } from 'commander';
import { Option } from 'commander';
import { KubesmithError, UsageError } from '../errors.js';
import type { CommandContext } from './main.js';
import type { Output } from './output.js';
import { reportPlan } from './shared.js';

interface InitFlags {
  domain: string;
  projectName?: string;
  owner?: string;
  license: 'apache2' | 'none';
  namespaced: boolean;
  multigroup: boolean;
  certProvider: 'cert-manager' | 'self';
  skipInstall: boolean;
  dryRun: boolean;
  force: boolean;
  plugins?: string;
}

export function registerInit(program: Command, contextFor: (command: Command) => CommandContext): void {
  program
    .command('init')
    .description('scaffold a new operator project in the current directory')
    .option('--domain <domain>', 'domain of the API groups (webapp -> webapp.<domain>)', 'my.domain')
    .option('--project-name <name>', 'name of the project, a DNS-1123 label (default: the directory name)')
    .option('--owner <owner>', 'copyright owner written in the license header')
    .addOption(
      new Option('--license <license>', 'license header of generated files')
        .choices(['apache2', 'none'])
        .default('apache2'),
    )
    .option(
      '--namespaced',
      'the manager watches only its own namespace (Role instead of ClusterRole, WATCH_NAMESPACE)',
      false,
    )
    .option('--multigroup', 'allow APIs in several groups (src/api/<group>/<version>)', false)
    .addOption(
      new Option(
        '--cert-provider <provider>',
        "who provides the webhooks' serving certificate: cert-manager, or self (the manager makes and rotates its own)",
      )
        .choices(['cert-manager', 'self'])
        .default('cert-manager'),
    )
    .option(
      '--plugins <plugins>',
      'plugins to add: autoupdate (a weekly workflow that runs `kubesmith alpha update` and opens a pull request)',
    )
    .option('--skip-install', 'do not run npm install', false)
    .option('--dry-run', 'print the files that would be written, and write nothing', false)
    .option('--force', 'scaffold over an existing project, overwriting files', false)
    .addHelpText(
      'after',
      `
Examples:
  $ mkdir guestbook && cd guestbook
  $ kubesmith init --domain example.com
  $ kubesmith init --domain example.com --project-name guestbook-operator --owner "The Guestbook Authors"
  $ kubesmith init --domain example.com --namespaced --skip-install --dry-run
  $ kubesmith init --domain example.com --cert-provider self
  $ kubesmith init --domain example.com --plugins autoupdate`,
    )
    .action(async (flags: InitFlags, command: Command) => {
      const { out, cwd, env } = contextFor(command);
      const { validateDomain, validateOwner, validateProjectName } = await import('../project/validation.js');
      const projectName = flags.projectName ?? path.basename(path.resolve(cwd));
      const problem =
        validateDomain(flags.domain) ??
        validateProjectName(projectName) ??
        (flags.owner !== undefined ? validateOwner(flags.owner) : undefined);
      if (problem) throw new UsageError(problem.message, problem.hint);
      const { AUTOUPDATE_NAMES } = await import('../scaffold/autoupdate.js');
      const plugins = flags.plugins?.split(',').map((plugin) => plugin.trim());
      const unknown = plugins?.find((plugin) => !AUTOUPDATE_NAMES.test(plugin));
      if (unknown !== undefined)
        throw new UsageError(
          `unknown plugin ${JSON.stringify(unknown.slice(0, 80))} for init`,
          'init knows one plugin: --plugins autoupdate (the Helm chart comes later: `kubesmith edit --plugins helm`)',
        );

      const { resolveKubesmithPackages } = await import('../scaffold/packages.js');
      const packages = await resolveKubesmithPackages({ env });
      const { planInit } = await import('../scaffold/init.js');
      const { sourceDateYear } = await import('../scaffold/context.js');
      const year = sourceDateYear(env);
      const plan = await planInit({
        root: cwd,
        projectName,
        domain: flags.domain,
        owner: flags.owner ?? '',
        license: flags.license,
        namespaced: flags.namespaced,
        multigroup: flags.multigroup,
        certProvider: flags.certProvider,
        force: flags.force,
        packages,
        autoupdate: plugins !== undefined,
        ...(year !== undefined ? { year } : {}),
      });
      const source = { runtime: packages.runtime, cli: packages.cli };
      if (flags.dryRun) {
        if (packages.note) out.info(packages.note);
        reportPlan(out, plan, { command: 'init', dryRun: true, packages: source });
        return;
      }
      const { applyPlan } = await import('../scaffold/apply.js');
      await applyPlan(plan);
      if (packages.note) out.info(packages.note);
      reportPlan(out, plan, {
        command: 'init',
        dryRun: false,
        installed: !flags.skipInstall,
        packages: source,
      });
      if (!flags.skipInstall) await npmInstall(cwd, out);
      out.info(`\nNext: npx kubesmith create api --group <group> --version v1 --kind <Kind>`);
    });
}

/** Runs `npm install` with its progress visible; with --json its output goes to stderr. */
async function npmInstall(cwd: string, out: Output): Promise<void> {
  const json = out.json;
  out.info('\ninstalling dependencies (npm install) ...');
  const started = Date.now();
  const { execa } = await import('execa');
  const result = await execa('npm', ['install', '--no-fund', '--no-audit'], {
    cwd,
    stdin: 'ignore',
    stdout: json ? 'pipe' : 'inherit',
    stderr: 'inherit',
    reject: false,
  });
  if (json && result.stdout) process.stderr.write(`${result.stdout}\n`);
  if (result.exitCode !== 0) {
    throw new KubesmithError(
      `npm install failed (exit code ${result.exitCode}); the project files are in place`,
      {
        hint: 'fix the problem npm reported, then run `npm install` in the project',
      },
    );
  }
  out.info(`installed dependencies in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
