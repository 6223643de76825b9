/**
 * `kubesmith create webhook`: defaulting and validating admission webhooks for a kind of the project or a
 * built-in kind. The webhook file carries scaffold markers, so a second run adds a webhook type to it
 * instead of replacing it; the kustomize wiring (config/webhook, config/certmanager, the manager's
 * certificate volume) is written once per project.
 */
import path from 'node:path';
import Handlebars from 'handlebars';
import { readFile } from 'node:fs/promises';
import { KubesmithError } from '../errors.js';
import { PROJECT_FILE, serializeProject, type ResourceConfig } from '../project/config.js';
import type { LoadedProject } from '../project/find.js';
import { BUILTIN_GROUPS, findResource, resolveResource, type ResourceFlags } from '../project/resource.js';
import { apiContext, type ApiContext } from './context.js';
import { BOILERPLATE_FILE } from './init.js';
import { addAtMarker } from './add-at-marker.js';
import type { Plan } from './plan.js';
import { addFolder, templatesDir } from './render.js';
import { Tree } from './tree.js';

export interface CreateWebhookOptions extends ResourceFlags {
  defaulting: boolean;
  validation: boolean;
  conversion: boolean;
  force: boolean;
}

export interface WebhookContext extends ApiContext {
  webhookFile: string;
  webhookTestFile: string;
  /** From the webhook file to the kind's TypeScript type; '' for built-in kinds (client-node). */
  typesImportFromWebhook: string;
  webhookImportFromMain: string;
  webhookImportFromTest: string;
  setupFunction: string;
  mutatePath: string;
  validatePath: string;
  /** `groups=` of the marker: the qualified group, `""` for core. */
  markerGroup: string;
  mutatingName: string;
  validatingName: string;
  builtin: boolean;
  /** The TypeScript type of the kind: the kind itself, or `V1Pod` for a built-in. */
  typeName: string;
  rootFromWebhookTest: string;
}

function webhookContext(base: ApiContext, builtin: boolean): WebhookContext {
  const dir = builtin ? 'src/webhooks' : `src/api/${base.group}/${base.version}`;
  const webhookFile = `${dir}/${base.kindLower}.webhook.ts`;
  const testDir = builtin ? 'test/webhooks' : `test/api/${base.group}/${base.version}`;
  const webhookTestFile = `${testDir}/${base.kindLower}.webhook.test.ts`;
  const dashed = base.qualifiedGroup.replace(/\./g, '-');
  const js = (file: string) => file.replace(/\.ts$/, '.js');
  return {
    ...base,
    builtin,
    typeName: builtin ? base.clientType : base.kind,
    rootFromWebhookTest: `${path.posix.relative(testDir, '.')}/`,
    webhookFile,
    webhookTestFile,
    typesImportFromWebhook: builtin ? '' : `./${base.kindLower}.types.js`,
    webhookImportFromMain: `./${js(path.posix.relative('src', webhookFile))}`,
    webhookImportFromTest: `${path.posix.relative(testDir, '.')}/${js(webhookFile)}`,
    setupFunction: `setup${base.kind}WebhookWithManager`,
    mutatePath: `/mutate-${dashed}-${base.version}-${base.kindLower}`,
    validatePath: `/validate-${dashed}-${base.version}-${base.kindLower}`,
    markerGroup: base.qualifiedGroup || '""',
    mutatingName: `m${base.kindLower}-${base.version}.kb.io`,
    validatingName: `v${base.kindLower}-${base.version}.kb.io`,
  };
}

async function renderFragment(name: string, context: object): Promise<string> {
  const source = await readFile(path.join(templatesDir, 'webhook', 'fragments', name), 'utf8');
  return Handlebars.create().compile(source, { noEscape: true, strict: true })(context).replace(/\n$/, '');
}

export async function planCreateWebhook(
  project: LoadedProject,
  options: CreateWebhookOptions,
): Promise<Plan> {
  const { config } = project;
  if (!options.defaulting && !options.validation && !options.conversion) {
    throw new KubesmithError(
      'kubesmith create webhook requires at least one of --defaulting, --programmatic-validation and --conversion',
      { hint: 'add --defaulting and/or --programmatic-validation' },
    );
  }
  if (options.conversion) {
    throw new KubesmithError('conversion webhooks are not supported by this version of kubesmith yet', {
      hint: 'scaffold --defaulting and --programmatic-validation now; conversion comes in a later release',
    });
  }
  const existing = findResource(config, options);
  const builtin = !existing?.api;
  if (builtin && BUILTIN_GROUPS[options.group] === undefined) {
    throw new KubesmithError(
      `API resource ${options.kind} (${options.group}/${options.version}) does not exist in PROJECT`,
      {
        hint: 'create it first with `kubesmith create api`, or name a built-in kind (core, apps, batch ...)',
      },
    );
  }
  // The kind's recorded plural (`create api --plural`) names its resource in the webhook rules.
  const resource = resolveResource(
    { ...options, ...(existing?.plural ? { plural: existing.plural } : {}) },
    config,
    builtin,
  );
  const hooks = existing?.webhooks;
  const wanted = [
    ...(options.defaulting ? [['defaulting', hooks?.defaulting] as const] : []),
    ...(options.validation ? [['validation', hooks?.validation] as const] : []),
  ];
  for (const [type, exists] of wanted) {
    if (exists && !options.force) {
      throw new KubesmithError(
        `${type} webhook for ${options.kind} (${options.group}/${options.version}) already exists`,
        {
          hint: 'pass --force to scaffold it again over your files',
        },
      );
    }
  }

  const tree = new Tree(project.root, options.force);
  const boilerplate = (await tree.read(BOILERPLATE_FILE)) ?? '';
  const context = webhookContext(apiContext(config, resource, boilerplate), resource.builtin);
  await addFolder(tree, 'webhook/files', context, () => 'skip');
  for (const [type] of wanted) {
    const block = async (file: string, point: string, fragment: string) =>
      addAtMarker(tree, file, point, await renderFragment(fragment, context), { block: true });
    await block(context.webhookFile, 'webhooks', `${type}.ts.hbs`);
    await block(context.webhookFile, 'register', `${type}-register.ts.hbs`);
    await block(context.webhookTestFile, 'webhooktests', `${type}.test.ts.hbs`);
  }
  await addAtMarker(
    tree,
    'src/main.ts',
    'imports',
    `import { ${context.setupFunction} } from '${context.webhookImportFromMain}';`,
  );
  await addAtMarker(
    tree,
    'src/main.ts',
    'builder',
    `if (process.env['ENABLE_WEBHOOKS'] !== 'false') ${context.setupFunction}(mgr);`,
  );
  await addAtMarker(tree, 'config/default/kustomization.yaml', 'webhook', '- ../webhook\n- ../certmanager');
  await addAtMarker(
    tree,
    'config/default/kustomization.yaml',
    'webhookpatches',
    '- path: manager_webhook_patch.yaml',
  );
  await addAtMarker(
    tree,
    'config/network-policy/kustomization.yaml',
    'networkpolicies',
    '- allow-webhook-traffic.yaml',
  );

  const entry: ResourceConfig = {
    ...(existing ?? {
      group: resource.group,
      version: resource.version,
      kind: resource.kind,
      path: '@kubernetes/client-node',
      extra: {},
    }),
    webhooks: {
      ...(hooks ?? { extra: {} }),
      ...(options.defaulting || hooks?.defaulting ? { defaulting: true } : {}),
      ...(options.validation || hooks?.validation ? { validation: true } : {}),
      webhookVersion: 'v1',
    },
  };
  const resources = existing
    ? config.resources.map((item) => (item === existing ? entry : item))
    : [...config.resources, entry];
  await tree.write(PROJECT_FILE, serializeProject({ ...config, resources }));
  return tree.plan();
}
