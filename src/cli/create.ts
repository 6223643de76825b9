/** `kubesmith create api` and `kubesmith create webhook`. */
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import type { DeployImageFlags } from '../project/deploy-image.js';
import type { CommandContext } from './main.js';
import { parseBoolean, planResult, printPlan, reportPlan } from './shared.js';

interface CreateWebhookFlags {
  group: string;
  version: string;
  kind: string;
  defaulting: boolean;
  programmaticValidation: boolean;
  conversion: boolean;
  spoke?: string;
  force: boolean;
  dryRun: boolean;
}

interface CreateApiFlags extends DeployImageFlags {
  group: string;
  version: string;
  kind: string;
  plural?: string;
  namespaced: boolean;
  resource: boolean;
  controller: boolean;
  force: boolean;
  dryRun: boolean;
}

export function registerCreate(program: Command, contextFor: (command: Command) => CommandContext): void {
  const create = program
    .command('create')
    .description('add an API or a webhook to the project')
    .addHelpText(
      'after',
      `
Examples:
  $ kubesmith create api --group webapp --version v1 --kind Guestbook
  $ kubesmith create webhook --group webapp --version v1 --kind Guestbook --defaulting --programmatic-validation`,
    );

  create
    .command('webhook')
    .description(
      'add admission webhooks (defaulting, validation) for a kind of the project or a built-in kind, or a conversion webhook between the versions of a kind of the project',
    )
    .requiredOption('--group <group>', 'API group of the kind (core, apps ... for built-in kinds)')
    .requiredOption('--version <version>', 'API version of the kind, e.g. v1')
    .requiredOption('--kind <kind>', 'the kind, e.g. Guestbook')
    .option('--defaulting', 'a defaulting (mutating) webhook', false)
    .option('--programmatic-validation', 'a validating webhook', false)
    .option('--conversion', 'a conversion webhook: this version is the hub, --spoke the others', false)
    .option(
      '--spoke <versions>',
      'with --conversion: the versions that convert to and from the hub, comma-separated (each made first with create api)',
    )
    .option('--force', 'scaffold again over existing files', false)
    .option('--dry-run', 'print the files that would be written, and write nothing', false)
    .addHelpText(
      'after',
      `
Examples:
  $ kubesmith create webhook --group webapp --version v1 --kind Guestbook --defaulting --programmatic-validation
  $ kubesmith create webhook --group core --version v1 --kind Pod --programmatic-validation
  $ kubesmith create webhook --group webapp --version v1 --kind Guestbook --conversion --spoke v2`,
    )
    .action(async (flags: CreateWebhookFlags, command: Command) => {
      const { out, cwd } = contextFor(command);
      // Flags first: a webhook of no type is a usage error even outside a project.
      checkWebhookFlags(flags);
      const { loadProject } = await import('../project/find.js');
      const project = await loadProject(cwd);
      const { planCreateWebhook } = await import('../scaffold/webhook.js');
      const plan = await planCreateWebhook(project, {
        group: flags.group,
        version: flags.version,
        kind: flags.kind,
        defaulting: flags.defaulting,
        validation: flags.programmaticValidation,
        conversion: flags.conversion,
        spoke: (flags.spoke ?? '')
          .split(',')
          .map((version) => version.trim())
          .filter((version) => version !== ''),
        force: flags.force,
      });
      if (flags.dryRun) {
        reportPlan(out, plan, { command: 'create webhook', dryRun: true });
        return;
      }
      const { applyPlan } = await import('../scaffold/apply.js');
      await applyPlan(plan);
      printPlan(out, plan);
      const { manifestsOf } = await import('../scaffold/manifests.js');
      out.result(
        planResult(plan, { command: 'create webhook', dryRun: false, manifests: manifestsOf(plan) }),
      );
      out.info(
        project.config.certProvider === 'self'
          ? '\nNext: fill in the webhook functions; the manager provides their serving certificate (src/webhook-certificates.ts).'
          : '\nNext: fill in the webhook functions; cert-manager must run in the cluster to deploy them.',
      );
    });

  create
    .command('api')
    .description(
      'add a custom resource (types, CRD sample, RBAC) and its controller, or a controller for a built-in kind',
    )
    .requiredOption(
      '--group <group>',
      'API group, qualified with the project domain (core, apps, batch ... for built-in kinds)',
    )
    .requiredOption('--version <version>', 'API version, e.g. v1, v1alpha1')
    .requiredOption('--kind <kind>', 'kind, in PascalCase, e.g. Guestbook')
    .option('--plural <plural>', 'plural resource name (default: the lower-case English plural of the kind)')
    .option('--namespaced [bool]', 'the resource is namespaced (false: cluster-scoped)', parseBoolean, true)
    .option(
      '--resource [bool]',
      'scaffold the API type (false: a controller only, e.g. for a built-in kind)',
      parseBoolean,
      true,
    )
    .option('--controller [bool]', 'scaffold a controller', parseBoolean, true)
    .option(
      '--image <image>',
      'deploy-image: a controller that runs this image as a Deployment and a Service it owns (e.g. nginx:1.27)',
    )
    .option('--image-container-port <port>', 'with --image: the port the container listens on (1-65535)')
    .option(
      '--image-container-command <command>',
      'with --image: the container command, comma-separated (e.g. memcached,-m=64,-v)',
    )
    .option('--run-as-user <uid>', 'with --image: the numeric user the container runs as (not 0)')
    .option('--service-type <type>', 'with --image: ClusterIP (default) or NodePort')
    .option(
      '--node-port <port>',
      'with --image --service-type NodePort: the node port of the sample (30000-32767)',
    )
    .option('--force', 'scaffold again over existing files', false)
    .option('--dry-run', 'print the files that would be written, and write nothing', false)
    .addHelpText(
      'after',
      `
Examples:
  $ kubesmith create api --group webapp --version v1 --kind Guestbook
  $ kubesmith create api --group demo --version v1 --kind DemoApplication --image nginx:1.27 \\
      --image-container-port 80 --service-type NodePort --node-port 30002
  $ kubesmith create api --group webapp --version v1 --kind Cluster --namespaced=false
  $ kubesmith create api --group core --version v1 --kind Pod --resource=false --controller
  $ kubesmith create api --group apps --version v1 --kind Deployment --resource=false`,
    )
    .action(async (flags: CreateApiFlags, command: Command) => {
      const { out, cwd } = contextFor(command);
      // Flags first: a bad --image value is a usage error even outside a project.
      const { resolveDeployImage } = await import('../project/deploy-image.js');
      const deployImage = resolveDeployImage(flags, { resource: flags.resource });
      const { loadProject } = await import('../project/find.js');
      const project = await loadProject(cwd);
      const { planCreateApi } = await import('../scaffold/api.js');
      const plan = await planCreateApi(project, { ...flags, ...(deployImage ? { deployImage } : {}) });
      if (flags.dryRun) {
        reportPlan(out, plan, { command: 'create api', dryRun: true });
        return;
      }
      const { applyPlan } = await import('../scaffold/apply.js');
      await applyPlan(plan);
      printPlan(out, plan);
      const { manifestsOf } = await import('../scaffold/manifests.js');
      out.result(planResult(plan, { command: 'create api', dryRun: false, manifests: manifestsOf(plan) }));
      if (deployImage)
        out.info(
          "\nNext: `npm test` proves the controller on envtest's cluster mode (`kubesmith envtest --with-controllers` provides it); `kubectl apply -k config/samples` runs the sample.",
        );
      else if (flags.resource)
        out.info('\nNext: edit the types, then run `npm run manifests` to regenerate the CRD.');
    });
}

/** The combinations of `create webhook` flags that name no webhook, refused as usage errors (exit 2). */
function checkWebhookFlags(flags: CreateWebhookFlags): void {
  if (!flags.defaulting && !flags.programmaticValidation && !flags.conversion)
    throw new UsageError(
      'kubesmith create webhook requires at least one of --defaulting, --programmatic-validation and --conversion',
      'add --defaulting and/or --programmatic-validation, or --conversion --spoke <versions>',
    );
  if (flags.spoke !== undefined && !flags.conversion)
    throw new UsageError(
      '--spoke names the versions of a conversion webhook',
      'add --conversion, or leave --spoke out',
    );
}
