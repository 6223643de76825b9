/**
 * `kubesmith helm-chart`: a Helm chart in dist/chart/ from the kustomize output of config/default.
 * `kubesmith edit --plugins helm` is the same command under kubebuilder's name
 * (`kubebuilder edit --plugins=helm/v2-alpha`), so that kubebuilder users find it where they look.
 */
import path from 'node:path';
import { Option, type Command } from 'commander';
import { KubesmithError, UsageError } from '../errors.js';
import type { CommandContext } from './main.js';
import { planResult, printPlan } from './shared.js';
import type { LoadedProject } from '../project/find.js';
import type { Plan } from '../scaffold/plan.js';
import { HELM_PLUGIN, type HelmOptions } from '../project/plugins.js';
import type { CertProvider } from '../project/config.js';
import { CHART_DIR, PROJECT_FILE } from '../project/layout.js';

interface HelmChartFlags {
  img?: string;
  output: string;
  force: boolean;
  dryRun: boolean;
}

const HELP = `
The chart's templates come from \`kubectl kustomize config/default\` (and config/prometheus and
config/network-policy, behind values): run \`kubesmith manifests\` first (the project's
\`npm run helm-chart\` does both). Run it again after \`create api\` or \`create webhook\`: new resources are
added, Chart.yaml stays yours, and values.yaml keeps your values of keys that still exist. The command
stops without writing when the chart directory holds a file it did not write, or a template you edited
(--force overwrites).

Examples:
  $ kubesmith helm-chart --img registry.example.com/guestbook-operator:v0.1.0
  $ kubesmith edit --plugins helm
  $ kubesmith edit --multigroup
  $ kubesmith edit --cert-provider self
  $ helm install guestbook dist/chart -n guestbook-system --create-namespace`;

export function registerHelmChart(program: Command, contextFor: (command: Command) => CommandContext): void {
  const options = (command: Command) =>
    command
      .option('--img <image>', "the manager image in values.yaml (default: $IMG, else config/manager's)")
      .option('--output <dir>', 'the chart directory, relative to the project root', CHART_DIR)
      .option('--force', 'overwrite templates edited by hand, and remove such stale ones', false)
      .option('--dry-run', 'print the files that would be written, and write nothing', false)
      .addHelpText('after', HELP);

  options(
    program
      .command('helm-chart')
      .description('write a Helm chart (dist/chart/) from the kustomize output of config/default'),
  ).action(async (flags: HelmChartFlags, command: Command) => {
    await helmChart(flags, contextFor(command));
  });

  options(
    program
      .command('edit')
      .description(
        "change a project-wide setting: `--plugins helm` writes the Helm chart (kubebuilder's name for helm-chart), `--plugins autoupdate` a weekly `alpha update` workflow, `--multigroup` allows APIs in several groups, `--cert-provider` says who provides the webhooks' certificate",
      )
      .option(
        '--plugins <plugins>',
        'the plugins to apply, comma-separated: helm (helm/v2-alpha, helm.kubebuilder.io/v2-alpha), autoupdate (autoupdate/v1-alpha)',
      )
      .option(
        '--multigroup',
        'allow APIs in several groups: controllers move to src/controllers/<group>/, RBAC roles to <group>_<kind>_*_role.yaml',
        false,
      )
      .addOption(
        new Option(
          '--cert-provider <provider>',
          "who provides the webhooks' serving certificate: cert-manager, or self (the manager makes and rotates its own)",
        ).choices(['cert-manager', 'self']),
      ),
  ).action(
    async (
      flags: HelmChartFlags & { plugins?: string; multigroup: boolean; certProvider?: CertProvider },
      command: Command,
    ) => {
      if (flags.plugins === undefined && !flags.multigroup && flags.certProvider === undefined)
        throw new UsageError(
          'kubesmith edit needs --plugins helm, --plugins autoupdate, --multigroup or --cert-provider',
          'e.g. kubesmith edit --multigroup, kubesmith edit --cert-provider self, or kubesmith edit --plugins helm',
        );
      const plugins = flags.plugins?.split(',').map((plugin) => plugin.trim()) ?? [];
      const helm = /^helm(?:\/v[12]-alpha|\.kubebuilder\.io\/v[12]-alpha)?$/;
      const { AUTOUPDATE_NAMES } = await import('../scaffold/autoupdate.js');
      const unknown = plugins.filter((plugin) => !helm.test(plugin) && !AUTOUPDATE_NAMES.test(plugin));
      if (unknown.length > 0 || (flags.plugins !== undefined && plugins.length === 0)) {
        throw new UsageError(
          `unknown plugin ${JSON.stringify((unknown[0] ?? '').slice(0, 80))} for edit`,
          'kubesmith edit knows two plugins: --plugins helm (the same as `kubesmith helm-chart`) and --plugins autoupdate',
        );
      }
      const context = contextFor(command);
      if (flags.multigroup) await editMultigroup(context, flags.dryRun);
      if (flags.certProvider !== undefined) await editCertProvider(context, flags.certProvider, flags.dryRun);
      if (plugins.some((plugin) => AUTOUPDATE_NAMES.test(plugin)))
        await editAutoupdate(context, flags.force, flags.dryRun);
      if (plugins.some((plugin) => helm.test(plugin))) await helmChart(flags, context);
    },
  );
}

/**
 * `edit --cert-provider`: PROJECT records who provides the webhook certificate, and a project with webhooks
 * is rewired (src/scaffold/cert-provider.ts); applied at once, nothing written on error.
 */
async function editCertProvider(
  context: CommandContext,
  provider: CertProvider,
  dryRun: boolean,
): Promise<void> {
  const { out, cwd } = context;
  const { loadProject } = await import('../project/find.js');
  const project = await loadProject(cwd);
  if ((project.config.certProvider ?? 'cert-manager') === provider) {
    out.info(`the webhook certificate's provider is ${provider} already: nothing to do`);
    return;
  }
  const { planCertProvider } = await import('../scaffold/cert-provider.js');
  const plan = await planCertProvider(project, provider);
  if (!dryRun) {
    const { applyPlan } = await import('../scaffold/apply.js');
    await applyPlan(plan);
  }
  printPlan(out, plan);
  out.result(planResult(plan, { command: 'edit', certProvider: provider, dryRun }));
}

/** `edit --plugins autoupdate`: the workflow and PROJECT's record, applied at once (nothing is written on error). */
async function editAutoupdate(context: CommandContext, force: boolean, dryRun: boolean): Promise<void> {
  const { out, cwd } = context;
  const { loadProject } = await import('../project/find.js');
  const { planAutoupdate } = await import('../scaffold/autoupdate.js');
  const plan = await planAutoupdate(await loadProject(cwd), force);
  // A workflow of the user's at that path is a conflict: applyPlan refuses it, naming --force.
  if (!dryRun) {
    const { applyPlan } = await import('../scaffold/apply.js');
    await applyPlan(plan);
  }
  printPlan(out, plan);
  out.result(planResult(plan, { command: 'edit', plugins: ['autoupdate'], dryRun }));
}

/** `edit --multigroup`: the plan of src/scaffold/multigroup.ts, applied at once (nothing is written on error). */
async function editMultigroup(context: CommandContext, dryRun: boolean): Promise<void> {
  const { out, cwd } = context;
  const { loadProject } = await import('../project/find.js');
  const project = await loadProject(cwd);
  if (project.config.multigroup) {
    out.info('the project is multigroup already: nothing to do');
    return;
  }
  const { planMultigroup } = await import('../scaffold/multigroup.js');
  const plan = await planMultigroup(project);
  if (!dryRun) {
    const { applyPlan } = await import('../scaffold/apply.js');
    await applyPlan(plan);
  }
  printPlan(out, plan);
  out.result(planResult(plan, { command: 'edit', multigroup: true, dryRun }));
}

async function helmChart(flags: HelmChartFlags, context: CommandContext): Promise<void> {
  const { out, cwd, env } = context;
  // Flags first: a bad image is a usage error even outside a project.
  const text = flags.img ?? (env['IMG'] || undefined);
  const { imageFlag } = await import('../project/image.js');
  if (text !== undefined) imageFlag(text);
  const { loadProject } = await import('../project/find.js');
  const project = await loadProject(cwd);
  const output = path.relative(project.root, path.resolve(cwd, flags.output));
  if (output === '' || output.split(path.sep)[0] === '..' || path.isAbsolute(output)) {
    throw new UsageError(
      `--output ${flags.output} is not below the project`,
      'give a directory such as dist/chart',
    );
  }
  const { plan, stale, added, chartDir } = await planHelmChart(project, {
    ...flags,
    output,
    env,
    debug: (line) => out.debug(line),
  });
  const { config } = project;

  const { conflicts } = await import('../scaffold/plan.js');
  const blocked = conflicts(plan);
  if (blocked.length > 0 && !flags.dryRun) {
    printPlan(out, plan);
    throw new KubesmithError(
      blocked.length === 1
        ? `${blocked[0]!.path} was edited since kubesmith wrote it`
        : `${blocked.length} files were edited since kubesmith wrote them: ${blocked.map((e) => e.path).join(', ')}`,
      {
        hint: 'make the change in config/ or values.yaml and run again, or pass --force to overwrite; nothing was written',
      },
    );
  }
  const result = { command: 'helm-chart', chart: chartDir, removed: stale, added };
  if (flags.dryRun) {
    printPlan(out, plan);
    out.result(planResult(plan, { ...result, ok: true, dryRun: true }));
    return;
  }
  const { applyPlan } = await import('../scaffold/apply.js');
  // The templates of the previous run that config/ no longer renders are removed by the same atomic write.
  await applyPlan(plan);
  printPlan(out, plan);
  out.info(
    `Next: helm lint ${chartDir} && helm install ${config.projectName} ${chartDir} -n ${config.projectName}-system --create-namespace`,
  );
  out.result(planResult(plan, { ...result, ok: true }));
}

export interface HelmChartOptions {
  img?: string;
  /** The chart directory, relative to the project root. */
  output: string;
  force: boolean;
  env: NodeJS.ProcessEnv;
  debug?: (line: string) => void;
}

/**
 * The plan of `helm-chart` in `project` (also run by `alpha generate`), with the options it records in
 * PROJECT's plugins so that the chart can be made again.
 */
export async function planHelmChart(
  project: LoadedProject,
  options: HelmChartOptions,
): Promise<{ plan: Plan; stale: string[]; added: string[]; chartDir: string }> {
  const { root, config } = project;
  const text = options.img ?? (options.env['IMG'] || undefined);
  const { imageFlag } = await import('../project/image.js');
  const image = text === undefined ? undefined : imageFlag(text);
  const chartDir = path.posix.normalize(options.output.split(path.sep).join('/')).replace(/\/$/, '');
  if (chartDir === '.' || chartDir === '..' || chartDir.startsWith('../') || path.isAbsolute(chartDir)) {
    throw new UsageError(
      `--output ${options.output} is not below the project`,
      'give a directory such as dist/chart',
    );
  }

  const { findKubectl } = await import('../shipping/kubectl.js');
  const kubectl = await findKubectl(options.env);
  options.debug?.(`rendering with ${kubectl}`);
  const { renderChartSource } = await import('../shipping/chart-source.js');
  const source = await renderChartSource(root, kubectl);
  const { renderChart } = await import('../shipping/chart.js');
  const chart = renderChart({
    projectName: config.projectName,
    objects: source.objects,
    ...(image ? { image } : {}),
  });
  const { generatedValues, mergeValues } = await import('../shipping/chart-values.js');
  const { chartSkeleton } = await import('../shipping/chart-skeleton.js');
  const { planChart, VALUES_FILE } = await import('../shipping/chart-files.js');
  // A part config/default already includes is on by default, as it is in install.yaml.
  const values = generatedValues(chart.features, chart.defaults, {
    prometheus: chart.features.prometheus && !source.added.includes('prometheus'),
    networkPolicy: chart.features.networkPolicy && !source.added.includes('network-policy'),
  });
  const overrides: [string[], unknown][] = image
    ? [
        [['manager', 'image', 'repository'], chart.defaults.image.repository],
        [['manager', 'image', 'tag'], chart.defaults.image.tag],
        [['manager', 'image', 'digest'], chart.defaults.image.digest],
      ]
    : [];
  const { plan, stale } = await planChart({
    root,
    chartDir,
    files: [
      ...chartSkeleton(config.projectName, chart.defaults.image.tag || '0.1.0'),
      { path: VALUES_FILE, content: values },
      ...chart.templates,
    ],
    values: (previous, file) => mergeValues(values, previous, file, overrides),
    force: options.force,
  });
  await recordHelmOptions(project, plan, {
    ...(chartDir !== CHART_DIR ? { output: chartDir } : {}),
    ...(text !== undefined ? { image: text } : {}),
  });
  return { plan, stale, added: source.added, chartDir };
}

/** Adds PROJECT to the plan, with this run's options under plugins (when they are not recorded yet). */
async function recordHelmOptions(project: LoadedProject, plan: Plan, options: HelmOptions): Promise<void> {
  const { serializeProject } = await import('../project/config.js');
  const { config } = project;
  const current = config.extra['plugins'];
  const plugins = {
    ...(typeof current === 'object' && current !== null ? current : {}),
    [HELM_PLUGIN]: options,
  };
  const content = serializeProject({ ...config, extra: { ...config.extra, plugins } });
  if (content === project.text) return;
  plan.entries.push({ action: 'update', path: PROJECT_FILE, content, previous: project.text });
  plan.entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
