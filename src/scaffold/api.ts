/** `kubesmith create api`: the plan that adds a custom resource and/or a controller to a project. */
import { KubesmithError } from '../errors.js';
import { serializeProject, type ResourceConfig } from '../project/config.js';
import {
  BOILERPLATE_FILE,
  CRD_KUSTOMIZATION_FILE,
  DEFAULT_KUSTOMIZATION_FILE,
  kindLayout,
  MAIN_FILE,
  PROJECT_FILE,
  RBAC_KUSTOMIZATION_FILE,
  SAMPLES_KUSTOMIZATION_FILE,
} from '../project/layout.js';
import type { LoadedProject } from '../project/find.js';
import { isImportedKind, readImportedKind } from '../project/external.js';
import {
  checkSingleGroup,
  externalResource,
  findResource,
  resolveResource,
  type ResourceFlags,
} from '../project/resource.js';
import type { DeployImageOptions } from '../project/deploy-image.js';
import { apiContext, deployImageContext, externalContext, type ApiContext } from './context.js';
import { externalSample } from './external-sample.js';
import { addDeployImage, checkDeployImage } from './deploy-image.js';
import { addAtMarker } from './add-at-marker.js';
import type { Plan } from './plan.js';
import { addFolder, renderFolder } from './render.js';
import { formatTypeScript } from './format.js';
import { addManifests } from './manifests.js';
import { Tree } from './tree.js';

export interface CreateApiOptions extends ResourceFlags {
  resource: boolean;
  controller: boolean;
  force: boolean;
  /** `--image`: the deploy-image scaffold (a controller that runs the image as a Deployment and a Service). */
  deployImage?: DeployImageOptions;
}

export async function planCreateApi(project: LoadedProject, options: CreateApiOptions): Promise<Plan> {
  const { config } = project;
  if (!options.resource && !options.controller) {
    throw new KubesmithError('nothing to do: --resource=false and --controller=false', {
      hint: 'create the API type (--resource), its controller (--controller), or both',
    });
  }
  const existing = findResource(config, options);
  // A controller for a kind `import crd` wrote into src/external: typed with the imported type.
  const imported =
    !options.resource && !existing?.api && isImportedKind(project.root, options)
      ? readImportedKind(project.root, options)
      : undefined;
  if (imported && options.plural !== undefined && options.plural !== imported.plural)
    throw new KubesmithError(
      `--plural ${options.plural}: ${options.kind} is imported, and its CRD names it ${imported.plural}`,
      { hint: 'leave --plural out: an imported kind takes its plural from its CRD' },
    );
  if (options.resource && isImportedKind(project.root, options))
    throw new KubesmithError(
      `${options.kind} (${options.group}/${options.version}) is imported into src/external: its owner ships its CRD, the project cannot own it too`,
      { hint: 'pass --resource=false to scaffold a controller for the imported kind' },
    );
  // A controller for an API this project already has is a controller for a custom kind, not a built-in.
  const builtin = !options.resource && !existing?.api && imported === undefined;
  const resource = imported ? externalResource(imported) : resolveResource(options, config, builtin);
  if (!options.resource && !resource.builtin && !existing?.api && !imported) {
    throw new KubesmithError(
      `${options.group} is neither a built-in API group, nor the group of an API in this project, nor of a kind imported into src/external`,
      {
        hint: 'create the API too (drop --resource=false), use a built-in group such as core, apps, batch or networking, or import the CRD first (`kubesmith import crd`, then --group <its whole group>)',
      },
    );
  }
  if (options.resource && existing?.api && !options.force) {
    throw new KubesmithError('API resource already exists', {
      hint: `${options.kind} (${options.group}/${options.version}) is in PROJECT; pass --force to scaffold it again over your files`,
    });
  }
  if (!options.resource && existing?.controller && !options.force) {
    throw new KubesmithError('controller already exists', {
      hint: `${options.kind} (${options.group}/${options.version}) already has a controller; pass --force to scaffold it again`,
    });
  }
  // One controller reconciles a kind in every version (it reads the storage version); a second version
  // of a kind comes without one, as in kubebuilder's multi-version tutorial.
  const otherController = config.resources.find(
    (r) =>
      r.controller && r.group === options.group && r.kind === options.kind && r.version !== options.version,
  );
  if (options.controller && otherController && !options.force) {
    throw new KubesmithError(
      `${options.kind} already has a controller, in version ${otherController.version}; one controller reconciles every version of a kind`,
      { hint: `add version ${options.version} without one: pass --controller=false` },
    );
  }
  if (options.resource) checkSingleGroup(config, resource);
  if (options.deployImage) checkDeployImage(options, resource);

  const tree = new Tree(project.root, options.force);
  const boilerplate = (await tree.read(BOILERPLATE_FILE)) ?? '';
  const context = apiContext(config, resource, boilerplate);

  // --image: its own types, sample, controller and tests replace those of the plain scaffold.
  const deployImage = options.deployImage
    ? { ...context, deployImage: deployImageContext(context, options.deployImage) }
    : undefined;
  const replaced = new Set<string>();
  if (deployImage) {
    for (const file of await renderFolder('api/deploy-image', deployImage)) {
      replaced.add(file.path);
      await tree.create(file.path, file.content, file.ifExists);
    }
  }
  if (options.resource) {
    await addFolder(tree, 'api/resource', context, replaced);
    await insertResourceEntries(tree, context);
  }
  if (options.controller) {
    if (imported) {
      const sample = externalSample(imported.schema);
      await addFolder(tree, 'api/external-controller', {
        ...context,
        ...externalContext(context, imported, sample),
      });
    } else
      await addFolder(
        tree,
        resource.builtin ? 'api/builtin-controller' : 'api/controller',
        context,
        replaced,
      );
    await addAtMarker(
      tree,
      MAIN_FILE,
      'imports',
      `import { ${context.reconcilerClass} } from '${context.controllerImportFromMain}';`,
    );
    await addAtMarker(
      tree,
      MAIN_FILE,
      'builder',
      `new ${context.reconcilerClass}(mgr.client).setupWithManager(mgr);`,
    );
  }

  const entry: ResourceConfig = {
    ...(existing ?? { extra: {} }),
    group: resource.group,
    version: resource.version,
    kind: resource.kind,
    ...(resource.builtin || imported ? {} : { domain: config.domain }),
    ...(resource.recordedPlural ? { plural: resource.recordedPlural } : {}),
    ...(imported ? { external: true } : {}),
    path: resource.builtin
      ? '@kubernetes/client-node'
      : kindLayout(resource, config.multigroup ?? false).typesFile,
  };
  if (options.resource)
    entry.api = { crdVersion: 'v1', namespaced: resource.namespaced, extra: existing?.api?.extra ?? {} };
  if (options.controller || existing?.controller) entry.controller = true;
  const resources = existing
    ? config.resources.map((item) => (item === existing ? entry : item))
    : [...config.resources, entry];
  const extra = deployImage
    ? await addDeployImage(tree, config, deployImage, options.deployImage!)
    : config.extra;
  await tree.write(PROJECT_FILE, serializeProject({ ...config, resources, extra }));
  await formatTypeScript(tree);
  await addManifests(tree);
  return tree.plan();
}

async function insertResourceEntries(tree: Tree, context: ApiContext): Promise<void> {
  await addAtMarker(tree, CRD_KUSTOMIZATION_FILE, 'crdkustomizeresource', `- bases/${context.crdFile}`);
  await addAtMarker(tree, DEFAULT_KUSTOMIZATION_FILE, 'crd', '- ../crd');
  await addAtMarker(tree, SAMPLES_KUSTOMIZATION_FILE, 'manifestskustomizesamples', `- ${context.sampleFile}`);
  await addAtMarker(
    tree,
    RBAC_KUSTOMIZATION_FILE,
    'rbacresources',
    ['admin', 'editor', 'viewer'].map((role) => `- ${context.rolePrefix}_${role}_role.yaml`).join('\n'),
  );
}
