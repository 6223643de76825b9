/**
 * `kubesmith create webhook`: defaulting and validating admission webhooks for a kind of the project or a
 * built-in kind, and conversion webhooks between a project kind's versions (the hub, and its spokes). The
 * webhook file carries scaffold markers, so a second run adds a webhook type to it instead of replacing
 * it; the kustomize wiring (config/webhook, config/certmanager, the manager's certificate volume) is
 * written once per project, the CRD's conversion patch once per kind.
 */
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { KubesmithError } from '../errors.js';
import { serializeProject, type ProjectConfig, type ResourceConfig } from '../project/config.js';
import type { LoadedProject } from '../project/find.js';
import {
  BUILTIN_GROUPS,
  externalResource,
  findResource,
  resolveResource,
  type ResourceFlags,
} from '../project/resource.js';
import { apiContext, sampleFieldsOf, type ApiContext } from './context.js';
import { externalSample } from './external-sample.js';
import { isImportedKind, readImportedKind } from '../project/external.js';
import { addAtMarker } from './add-at-marker.js';
import type { Plan } from './plan.js';
import { addFolder, templateEngine, templatesDir } from './render.js';
import { formatTypeScript } from './format.js';
import { addManifests } from './manifests.js';
import { addSelfSignedCertificates } from './cert-provider.js';
import {
  BOILERPLATE_FILE,
  CRD_KUSTOMIZATION_FILE,
  DEFAULT_KUSTOMIZATION_FILE,
  importPath,
  kindLayout,
  MAIN_FILE,
  NETWORK_POLICY_KUSTOMIZATION_FILE,
  PROJECT_FILE,
  rootFrom,
} from '../project/layout.js';
import { Tree } from './tree.js';

export interface CreateWebhookOptions extends ResourceFlags {
  defaulting: boolean;
  validation: boolean;
  conversion: boolean;
  /** With conversion: the versions that convert to and from this one, the hub. */
  spoke: string[];
  force: boolean;
}

/**
 * Objects the API server accepts, for the generated webhook integration test of a built-in kind: the
 * fields besides apiVersion, kind and metadata. Kinds without an entry get no integration test.
 */
const BUILTIN_SAMPLES: Readonly<Record<string, string>> = {
  'v1/Pod': "spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },",
  'apps/v1/Deployment':
    "spec: { selector: { matchLabels: { app: 'sample' } }, template: { metadata: { labels: { app: 'sample' } }, " +
    "spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] } } },",
};

/** What the templates of one spoke version need. */
export interface SpokeContext extends WebhookContext {
  spokeVersion: string;
  spokeApiVersion: string;
  spokeConversionFile: string;
  spokeConversionTestFile: string;
  rootFromSpokeTest: string;
  hubTypesFromSpoke: string;
  spokeSampleFile: string;
  /** `guestbookV2Conversion`: the spoke's conversions, registered with the hub. */
  conversionName: string;
  /** `guestbookV2`: the spoke's conversion module in the integration test. */
  spokeModule: string;
  /** `GuestbookV2Kind`, `GuestbookV2`: the spoke's kind and type in the integration test. */
  spokeKind: string;
  spokeType: string;
  conversionImportFromHubWebhook: string;
  /** From the hub's webhook integration test to the spoke's types and conversion modules. */
  spokeTypesFromWebhookTest: string;
  spokeConversionFromWebhookTest: string;
}

export interface WebhookContext extends ApiContext {
  webhookFile: string;
  webhookTestFile: string;
  webhookIntegrationTestFile: string;
  /** The fields of a built-in kind's sample in the integration test; '' for project kinds. */
  builtinSampleFields: string;
  /** `guestbooks.webapp.example.com` */
  crdName: string;
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
  /** A kind imported into src/external: its types there, its tests' object from its CRD. */
  external: boolean;
  /** A kind of the project's own API (neither built in nor imported): it may have conversion webhooks. */
  ownKind: boolean;
  /** The TypeScript type of the kind: the kind itself, or `V1Pod` for a built-in. */
  typeName: string;
  rootFromWebhookTest: string;
  /** From the webhook's tests to the kind's types; '' for built-in kinds. */
  typesFromWebhookTest: string;
  /** An imported kind's tests' object: its required fields (externalSample); '' and true otherwise. */
  sampleFields: string;
  sampleComplete: boolean;
}

function webhookContext(
  base: ApiContext,
  builtin: boolean,
  sample: { fields: Record<string, unknown>; unsure: string | undefined } | undefined,
): WebhookContext {
  const external = sample !== undefined;
  const layout = kindLayout({ ...base, builtin, external }, base.multigroup);
  const { webhookFile, webhookTestFile, webhookIntegrationTestFile } = layout;
  const testDir = layout.webhookTestDir;
  const dashed = base.qualifiedGroup.replace(/\./g, '-');
  return {
    ...base,
    builtin,
    external,
    ownKind: !builtin && !external,
    typeName: builtin ? base.clientType : base.kind,
    rootFromWebhookTest: rootFrom(testDir),
    typesFromWebhookTest: builtin ? '' : importPath(testDir, layout.typesFile),
    sampleFields: sample ? sampleFieldsOf(sample.fields) : '',
    sampleComplete: sample ? sample.unsure === undefined : true,
    webhookFile,
    webhookTestFile,
    webhookIntegrationTestFile,
    builtinSampleFields: builtin ? (BUILTIN_SAMPLES[`${base.apiVersion}/${base.kind}`] ?? '') : '',
    crdName: `${base.plural}.${base.qualifiedGroup}`,
    typesImportFromWebhook: builtin ? '' : importPath(path.posix.dirname(webhookFile), layout.typesFile),
    webhookImportFromMain: importPath(path.posix.dirname(MAIN_FILE), webhookFile),
    webhookImportFromTest: importPath(testDir, webhookFile),
    setupFunction: `setup${base.kind}WebhookWithManager`,
    mutatePath: `/mutate-${dashed}-${base.version}-${base.kindLower}`,
    validatePath: `/validate-${dashed}-${base.version}-${base.kindLower}`,
    markerGroup: base.qualifiedGroup || '""',
    mutatingName: `m${base.kindLower}-${base.version}.kb.io`,
    validatingName: `v${base.kindLower}-${base.version}.kb.io`,
  };
}

function spokeContext(hub: WebhookContext, spoke: ApiContext): SpokeContext {
  const suffix = spoke.version.charAt(0).toUpperCase() + spoke.version.slice(1);
  const hubLayout = kindLayout({ ...hub, builtin: false }, hub.multigroup);
  const spokeLayout = kindLayout({ ...spoke, builtin: false }, spoke.multigroup);
  return {
    ...hub,
    spokeVersion: spoke.version,
    spokeApiVersion: spoke.apiVersion,
    spokeConversionFile: spokeLayout.conversionFile,
    spokeConversionTestFile: spokeLayout.conversionTestFile,
    rootFromSpokeTest: rootFrom(path.posix.dirname(spokeLayout.conversionTestFile)),
    hubTypesFromSpoke: importPath(spokeLayout.apiDir, hubLayout.typesFile),
    spokeSampleFile: spoke.sampleFile,
    conversionName: `${hub.kindCamel}${suffix}Conversion`,
    spokeModule: `${hub.kindCamel}${suffix}`,
    spokeKind: `${hub.kind}${suffix}Kind`,
    spokeType: `${hub.kind}${suffix}`,
    conversionImportFromHubWebhook: importPath(hubLayout.apiDir, spokeLayout.conversionFile),
    spokeTypesFromWebhookTest: importPath(hubLayout.webhookTestDir, spokeLayout.typesFile),
    spokeConversionFromWebhookTest: importPath(hubLayout.webhookTestDir, spokeLayout.conversionFile),
  };
}

const STORAGE_VERSION = '+kubebuilder:storageversion';

/**
 * Marks the hub `kind` in `content` (its types file) as the storage version: a line in the doc comment
 * right above `export interface <kind>`. Undefined when that comment cannot be found.
 */
function markStorageVersion(content: string, kind: string): string | undefined {
  const lines = content.split('\n');
  const declaration = lines.findIndex((line) => line.startsWith(`export interface ${kind} `));
  const end = declaration - 1;
  if (declaration < 1 || lines[end]?.trim() !== '*/') return undefined;
  lines.splice(end, 0, ` * ${STORAGE_VERSION}`);
  return lines.join('\n');
}

async function renderFragment(name: string, context: object): Promise<string> {
  const source = await readFile(path.join(templatesDir, 'webhook', 'fragments', name), 'utf8');
  return templateEngine().compile(source, { noEscape: true, strict: true })(context).replace(/\n$/, '');
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
  if (options.spoke.length > 0 && !options.conversion) {
    throw new KubesmithError('--spoke names the versions of a conversion webhook', {
      hint: 'add --conversion, or leave --spoke out',
    });
  }
  const existing = findResource(config, options);
  // A kind `import crd` wrote into src/external: its webhook goes to src/webhooks, typed with its type.
  const imported =
    !existing?.api && isImportedKind(project.root, options)
      ? readImportedKind(project.root, options)
      : undefined;
  const builtin = !existing?.api && imported === undefined;
  if (options.conversion && !existing?.api) {
    throw new KubesmithError(
      `conversion webhooks convert between the versions of the project's own kinds; ${options.kind} (${options.group}/${options.version}) is not one`,
      { hint: 'create the kind with `kubesmith create api` first, or leave --conversion out' },
    );
  }
  const spokes = options.conversion ? conversionSpokes(config, options) : [];
  if (builtin && BUILTIN_GROUPS[options.group] === undefined) {
    throw new KubesmithError(
      `API resource ${options.kind} (${options.group}/${options.version}) does not exist in PROJECT`,
      {
        hint: 'create it first with `kubesmith create api`, name a built-in kind (core, apps, batch ...), or import its CRD (`kubesmith import crd`, then --group <its whole group>)',
      },
    );
  }
  // The kind's recorded plural (`create api --plural`) names its resource in the webhook rules; an imported
  // kind's is its CRD's.
  const resource = imported ? externalResource(imported) : resolveResource(options, config, builtin);
  const hooks = existing?.webhooks;
  const wanted = [
    ...(options.defaulting ? [['defaulting', hooks?.defaulting] as const] : []),
    ...(options.validation ? [['validation', hooks?.validation] as const] : []),
  ];
  const checked = [...wanted, ...(options.conversion ? [['conversion', hooks?.conversion] as const] : [])];
  for (const [type, exists] of checked) {
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
  const context = webhookContext(
    apiContext(config, resource, boilerplate),
    resource.builtin,
    imported && externalSample(imported.schema),
  );
  await addFolder(tree, 'webhook/files', context);
  await addFolder(tree, 'webhook/manager-patch', context);
  // The serving certificate: cert-manager's Issuer and Certificate, or the manager's own (below).
  if (!context.selfCertificates) await addFolder(tree, 'webhook/certmanager', context);
  // Built-in kinds without a known valid object, and imported kinds whose CRD asks more than kubesmith can
  // fill in, get no test on the API server.
  const integration = imported
    ? context.sampleComplete
    : !context.builtin || context.builtinSampleFields !== '';
  if (integration) await addFolder(tree, 'webhook/integration', context);
  const block = async (file: string, point: string, fragment: string) =>
    addAtMarker(tree, file, point, await renderFragment(fragment, context), { block: true });
  if (wanted.length > 0) {
    // The admission webhooks' imports and unit tests: a conversion alone needs neither.
    await addFolder(tree, 'webhook/unit', context);
    const imports = await renderFragment('admission-imports.ts.hbs', context);
    await addAtMarker(tree, context.webhookFile, 'imports', imports);
  }
  for (const [type] of wanted) {
    await block(context.webhookFile, 'webhooks', `${type}.ts.hbs`);
    await block(context.webhookFile, 'register', `${type}-register.ts.hbs`);
    await block(context.webhookTestFile, 'webhooktests', `${type}.test.ts.hbs`);
    if (integration) {
      await block(
        context.webhookIntegrationTestFile,
        'webhookintegrationtests',
        `${type}.integration.test.ts.hbs`,
      );
    }
  }
  if (options.conversion) await addConversion(tree, config, context, spokes);
  await addAtMarker(
    tree,
    MAIN_FILE,
    'imports',
    `import { ${context.setupFunction} } from '${context.webhookImportFromMain}';`,
  );
  await addAtMarker(
    tree,
    MAIN_FILE,
    'builder',
    `if (process.env['ENABLE_WEBHOOKS'] !== 'false') ${context.setupFunction}(mgr);`,
  );
  await addAtMarker(
    tree,
    DEFAULT_KUSTOMIZATION_FILE,
    'webhook',
    context.selfCertificates ? '- ../webhook' : '- ../webhook\n- ../certmanager',
  );
  await addAtMarker(tree, DEFAULT_KUSTOMIZATION_FILE, 'webhookpatches', '- path: manager_webhook_patch.yaml');
  await addAtMarker(
    tree,
    NETWORK_POLICY_KUSTOMIZATION_FILE,
    'networkpolicies',
    '- allow-webhook-traffic.yaml',
  );

  const entry: ResourceConfig = {
    ...(existing ??
      (imported
        ? {
            group: resource.group,
            version: resource.version,
            kind: resource.kind,
            ...(resource.recordedPlural ? { plural: resource.recordedPlural } : {}),
            external: true,
            path: imported.typesFile,
            extra: {},
          }
        : {
            group: resource.group,
            version: resource.version,
            kind: resource.kind,
            path: '@kubernetes/client-node',
            extra: {},
          })),
    webhooks: {
      ...(hooks ?? { extra: {} }),
      ...(options.defaulting || hooks?.defaulting ? { defaulting: true } : {}),
      ...(options.validation || hooks?.validation ? { validation: true } : {}),
      ...(options.conversion || hooks?.conversion ? { conversion: true } : {}),
      ...(spokes.length > 0 || hooks?.spoke
        ? { spoke: [...new Set([...(hooks?.spoke ?? []), ...spokes.map((spoke) => spoke.version)])].sort() }
        : {}),
      webhookVersion: 'v1',
    },
  };
  const resources = existing
    ? config.resources.map((item) => (item === existing ? entry : item))
    : [...config.resources, entry];
  await tree.write(PROJECT_FILE, serializeProject({ ...config, resources }));
  // Written again from PROJECT: the provider's lists of webhook configurations and CRDs follow it.
  if (config.certProvider === 'self') await addSelfSignedCertificates(tree, { ...config, resources });
  await formatTypeScript(tree);
  await addManifests(tree);
  return tree.plan();
}

/**
 * The spoke versions of `options`, each an API of the project with the same group and kind, as
 * kubebuilder requires: the types of a spoke exist before its conversion does.
 */
function conversionSpokes(config: ProjectConfig, options: CreateWebhookOptions): ResourceConfig[] {
  if (options.spoke.length === 0) {
    throw new KubesmithError(
      `--conversion needs --spoke: the versions that convert to and from ${options.version}`,
      {
        hint: `name them, e.g. --spoke v2 (each made first with \`kubesmith create api --group ${options.group} --version v2 --kind ${options.kind} --controller=false\`)`,
      },
    );
  }
  return options.spoke.map((version) => {
    const spoke = config.resources.find(
      (r) => r.api && r.group === options.group && r.kind === options.kind && r.version === version,
    );
    if (version === options.version || spoke === undefined) {
      throw new KubesmithError(
        `invalid spoke version "${version}": ` +
          (version === options.version
            ? `${version} is the hub`
            : `${options.kind} has no version ${version} in PROJECT`),
        {
          hint:
            version === options.version
              ? 'name the other versions of the kind'
              : `create it first: kubesmith create api --group ${options.group} --version ${version} --kind ${options.kind} --controller=false`,
        },
      );
    }
    return spoke;
  });
}

/**
 * The conversion webhook of the hub `context`: a conversion module and test per spoke, their registration
 * in the hub's webhook setup, the hub marked as the storage version, and the CRD patch that sends
 * conversions to the webhook in a cluster.
 */
async function addConversion(
  tree: Tree,
  config: ProjectConfig,
  context: WebhookContext,
  spokes: ResourceConfig[],
): Promise<void> {
  await addFolder(tree, 'webhook/conversion', context);
  await addAtMarker(
    tree,
    CRD_KUSTOMIZATION_FILE,
    'crdkustomizewebhookpatch',
    `- path: patches/webhook_in_${context.plural}.yaml`,
  );
  await addAtMarker(tree, CRD_KUSTOMIZATION_FILE, 'crdkustomizeconfig', '- kustomizeconfig.yaml');
  await addAtMarker(tree, context.webhookIntegrationTestFile, 'conversioncrds', `'${context.crdName}',`);
  for (const spoke of spokes) {
    const spokeResource = resolveResource(
      {
        group: spoke.group,
        version: spoke.version,
        kind: spoke.kind,
        namespaced: spoke.api?.namespaced ?? true,
      },
      config,
      false,
    );
    const spokeApi = apiContext(config, spokeResource, context.boilerplate);
    const sc = spokeContext(context, spokeApi);
    await addFolder(tree, 'webhook/spoke', sc);
    await addAtMarker(
      tree,
      context.webhookFile,
      'imports',
      `import { registerConversion } from '@kubesmith/runtime';\n` +
        `import { ${sc.conversionName} } from '${sc.conversionImportFromHubWebhook}';`,
    );
    await addAtMarker(
      tree,
      context.webhookFile,
      'register',
      await renderFragment('conversion-register.ts.hbs', sc),
    );
    await addAtMarker(
      tree,
      context.webhookIntegrationTestFile,
      'imports',
      `import { ${context.kind}Kind as ${sc.spokeKind}, type ${context.kind} as ${sc.spokeType} } from '${sc.spokeTypesFromWebhookTest}';\n` +
        `import * as ${sc.spokeModule} from '${sc.spokeConversionFromWebhookTest}';`,
    );
    await addAtMarker(
      tree,
      context.webhookIntegrationTestFile,
      'webhookintegrationtests',
      await renderFragment('conversion.integration.test.ts.hbs', sc),
      { block: true },
    );
  }
  await markHubStorageVersion(tree, config, context);
}

/** Marks the hub the storage version, unless a version of the kind already is. */
async function markHubStorageVersion(
  tree: Tree,
  config: ProjectConfig,
  context: WebhookContext,
): Promise<void> {
  const typesFile = (version: string) =>
    kindLayout({ ...context, version, builtin: false }, context.multigroup).typesFile;
  const versions = config.resources.filter(
    (r) => r.api && r.group === context.group && r.kind === context.kind,
  );
  for (const { version } of versions) {
    if ((await tree.read(typesFile(version)))?.includes(STORAGE_VERSION)) return;
  }
  const hubFile = typesFile(context.version);
  const content = await tree.read(hubFile);
  const marked = content === undefined ? undefined : markStorageVersion(content, context.kind);
  if (marked === undefined) {
    tree.warnings.push(
      `${hubFile}: cannot find the doc comment of interface ${context.kind}: add ${STORAGE_VERSION} to it by hand`,
    );
    return;
  }
  await tree.write(hubFile, marked);
}
