/**
 * What `create api --image` changes beyond its own templates: the manager's Deployment gets the image's
 * environment variable, the project's tests get envtest's cluster mode (the controller's proof needs a
 * Deployment controller, a scheduler and nodes), and PROJECT records the options, as kubebuilder's
 * deploy-image plugin records its own.
 */
import { UsageError } from '../errors.js';
import type { ProjectConfig } from '../project/config.js';
import type { DeployImageOptions } from '../project/deploy-image.js';
import type { Resource } from '../project/resource.js';
import { ENVTEST_SETUP_FILE, MANAGER_FILE, PACKAGE_FILE, TEST_WORKFLOW_FILE } from '../project/layout.js';
import { addAtMarker } from './add-at-marker.js';
import { markerComment } from './insert.js';
import type { ApiContext, DeployImageContext } from './context.js';
import type { Tree } from './tree.js';

/** The key of the options in PROJECT's `plugins` (kubebuilder: `deploy-image.go.kubebuilder.io/v1-alpha`). */
export { DEPLOY_IMAGE_PLUGIN } from '../project/plugins.js';
import { DEPLOY_IMAGE_PLUGIN } from '../project/plugins.js';

const MANAGER = MANAGER_FILE;
const PACKAGE = PACKAGE_FILE;
const WORKFLOW = TEST_WORKFLOW_FILE;
/** The scripts that provide the envtest binaries, and the flag cluster mode needs. */
const ENVTEST_SCRIPTS = ['test', 'setup-envtest'];
const PLAIN_ENVTEST = /kubesmith envtest(?! --with-controllers)/;
const WITH_CONTROLLERS = 'kubesmith envtest --with-controllers';

/**
 * Kinds whose `<Kind>Kind` the deploy-image controller and its tests already declare or import for the
 * objects they own (DeploymentKind, ServiceKind, PodKind, ReplicaSetKind, runtime's ResourceKind).
 */
const DEPLOY_IMAGE_RESERVED_KINDS: readonly string[] = [
  'Deployment',
  'Service',
  'Pod',
  'ReplicaSet',
  'Resource',
];

export function checkDeployImage(
  options: { controller: boolean; resource: boolean },
  resource: Resource,
): void {
  if (!options.resource || resource.builtin)
    throw new UsageError(
      '--image scaffolds a custom resource and its controller; it cannot be used with --resource=false',
      'drop --resource=false, or drop --image to scaffold a controller for a built-in kind',
    );
  if (!options.controller)
    throw new UsageError(
      '--image scaffolds a controller; it cannot be used with --controller=false',
      'drop --controller=false',
    );
  if (DEPLOY_IMAGE_RESERVED_KINDS.includes(resource.kind))
    throw new UsageError(
      `--image cannot scaffold a kind named ${resource.kind}: its controller already names ${resource.kind}Kind (reserved with --image: ${DEPLOY_IMAGE_RESERVED_KINDS.join(', ')})`,
      `name the kind differently, e.g. --kind My${resource.kind}`,
    );
  if (!resource.namespaced)
    throw new UsageError(
      '--image needs a namespaced kind: its Deployment and Service live in the namespace of the object',
      'drop --namespaced=false',
    );
}

export async function addDeployImage(
  tree: Tree,
  config: ProjectConfig,
  context: ApiContext & { deployImage: DeployImageContext },
  options: DeployImageOptions,
): Promise<Record<string, unknown>> {
  const { imageEnvVar, image } = context.deployImage;
  const env = [
    `# The image a ${context.kind} runs when its spec names none.`,
    `- name: ${imageEnvVar}`,
    `  value: ${JSON.stringify(image)}`,
  ];
  const manager = await tree.read(MANAGER);
  if (manager === undefined) {
    tree.warnings.push(`${MANAGER} not found: add ${imageEnvVar} to the manager's env by hand`);
  } else if (!manager.includes(`name: ${imageEnvVar}\n`)) {
    // A YAML list item keeps its own indentation under the marker's (a line insert would flatten it).
    const marker = markerComment(MANAGER, 'env');
    const lines = manager.split('\n');
    const index = lines.findIndex((line) => line.trim() === marker);
    if (index < 0) {
      tree.warnings.push(
        `${MANAGER} has no "${marker}" marker: add this to the manager container's env by hand:\n  ${env.join('\n  ')}`,
      );
    } else {
      const indent = /^\s*/.exec(lines[index] ?? '')?.[0] ?? '';
      lines.splice(index, 0, ...env.map((line) => indent + line));
      await tree.write(MANAGER, lines.join('\n'));
    }
  }
  await useClusterMode(tree);
  return recordOptions(config, context, options);
}

/**
 * The shared envtest of the tests runs in cluster mode; npm test and setup-envtest provide cluster mode's
 * binaries too, and so does the CI workflow.
 */
async function useClusterMode(tree: Tree): Promise<void> {
  await addAtMarker(tree, ENVTEST_SETUP_FILE, 'envtestoptions', 'controllers: true,');
  const text = await tree.read(PACKAGE);
  let changed = false;
  if (text !== undefined) {
    const manifest = JSON.parse(text) as { scripts?: Record<string, string> };
    for (const name of ENVTEST_SCRIPTS) {
      const script = manifest.scripts?.[name];
      if (script !== undefined && PLAIN_ENVTEST.test(script)) {
        manifest.scripts![name] = script.replace(PLAIN_ENVTEST, WITH_CONTROLLERS);
        changed = true;
      }
    }
    if (changed) await tree.write(PACKAGE, `${JSON.stringify(manifest, null, 2)}\n`);
  }
  const provided = text !== undefined && text.includes(WITH_CONTROLLERS);
  if (!changed && !provided)
    tree.warnings.push(
      `${PACKAGE} has no script running \`kubesmith envtest\`: run \`npx ${WITH_CONTROLLERS}\` before the tests, or their cluster-mode tests are skipped`,
    );
  const workflow = await tree.read(WORKFLOW);
  if (workflow !== undefined && /run: npx kubesmith envtest\s*$/m.test(workflow))
    await tree.write(
      WORKFLOW,
      workflow.replace(/run: npx kubesmith envtest\s*$/m, `run: npx ${WITH_CONTROLLERS}`),
    );
}

function recordOptions(
  config: ProjectConfig,
  context: ApiContext,
  options: DeployImageOptions,
): Record<string, unknown> {
  const plugins = { ...((config.extra['plugins'] as Record<string, unknown> | undefined) ?? {}) };
  const plugin =
    (plugins[DEPLOY_IMAGE_PLUGIN] as { resources?: Record<string, unknown>[] } | undefined) ?? {};
  const same = (entry: Record<string, unknown>) =>
    entry['group'] === context.group &&
    entry['version'] === context.version &&
    entry['kind'] === context.kind;
  const entry = {
    domain: config.domain,
    group: context.group,
    kind: context.kind,
    options: {
      image: options.image,
      ...(options.containerPort !== undefined ? { containerPort: String(options.containerPort) } : {}),
      ...(options.containerCommand.length > 0
        ? { containerCommand: options.containerCommand.join(',') }
        : {}),
      ...(options.runAsUser !== undefined ? { runAsUser: String(options.runAsUser) } : {}),
      serviceType: options.serviceType,
      ...(options.nodePort !== undefined ? { nodePort: String(options.nodePort) } : {}),
    },
    version: context.version,
  };
  // PROJECT is anyone's to edit: entries that are not a list of mappings are left out.
  const recorded = Array.isArray(plugin.resources)
    ? plugin.resources.filter((r) => typeof r === 'object' && r !== null)
    : [];
  plugins[DEPLOY_IMAGE_PLUGIN] = { resources: [...recorded.filter((r) => !same(r)), entry] };
  return { ...config.extra, plugins };
}
