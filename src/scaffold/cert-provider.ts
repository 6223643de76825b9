/**
 * Who provides the webhook serving certificate (PROJECT's `certProvider`, `init --cert-provider`, `edit
 * --cert-provider`): cert-manager, the default (config/certmanager, whose CA injector fills the
 * caBundles), or the manager itself (`self`: src/webhook-certificates.ts runs the runtime's
 * SelfSignedCertificates, with the RBAC of config/rbac/webhook_certificates_role.yaml and no cert-manager
 * piece in config/default). The self-provided files are written again from PROJECT whenever the webhooks
 * change, so that their lists of names (webhook configurations, conversion CRDs) follow the project.
 */
import { KubesmithError } from '../errors.js';
import { serializeProject, type CertProvider, type ProjectConfig } from '../project/config.js';
import type { LoadedProject } from '../project/find.js';
import {
  BOILERPLATE_FILE,
  CERT_MANAGER_FILES,
  CRD_DIR,
  CRD_KUSTOMIZATION_FILE,
  DEFAULT_KUSTOMIZATION_FILE,
  MAIN_FILE,
  MANAGER_WEBHOOK_PATCH_FILE,
  PROJECT_FILE,
  RBAC_KUSTOMIZATION_FILE,
  WEBHOOK_CERTIFICATES_FILE,
  WEBHOOK_CERTIFICATES_ROLE_FILE,
  WEBHOOK_KUSTOMIZATION_FILE,
} from '../project/layout.js';
import { resolveResource } from '../project/resource.js';
import { addAtMarker } from './add-at-marker.js';
import { initContext, type InitContext } from './context.js';
import { tsStringArray } from './escape.js';
import { addManifests } from './manifests.js';
import { formatTypeScript } from './format.js';
import type { Plan, PlanEntry } from './plan.js';
import { addFolder, renderFolder } from './render.js';
import { Tree } from './tree.js';

const IMPORT_LINE = "import { provideWebhookCertificates } from './webhook-certificates.js';";
const CALL_LINE =
  "if (process.env['ENABLE_WEBHOOKS'] !== 'false') await provideWebhookCertificates(mgr, settings);";
const RUNTIME_IMPORT = "import { SELF_SIGNED_CERTIFICATE_KINDS } from '@kubesmith/runtime';";
const CACHE_LINE = '  client: { disableCacheFor: SELF_SIGNED_CERTIFICATE_KINDS },';
const MANAGER_CREATE = 'const mgr = Manager.create({\n';

/** Whether the project has webhooks (cert-manager or the manager must then provide a certificate). */
export function hasWebhooks(config: ProjectConfig): boolean {
  return config.resources.some(
    (r) => r.webhooks?.defaulting || r.webhooks?.validation || r.webhooks?.conversion,
  );
}

/** What the self-provided files name: the objects after config/default's namespace and namePrefix. */
function selfSignedContext(config: ProjectConfig, boilerplate: string) {
  const prefix = `${config.projectName}-`;
  const conversionCrds = config.resources
    .filter((r) => r.webhooks?.conversion && r.api)
    .map((r) => {
      const resource = resolveResource(
        {
          group: r.group,
          version: r.version,
          kind: r.kind,
          namespaced: r.api?.namespaced ?? true,
          ...(r.plural ? { plural: r.plural } : {}),
        },
        config,
        false,
      );
      return `${resource.plural}.${resource.qualifiedGroup}`;
    })
    .sort();
  const mutating = config.resources.some((r) => r.webhooks?.defaulting)
    ? [`${prefix}mutating-webhook-configuration`]
    : [];
  const validating = config.resources.some((r) => r.webhooks?.validation)
    ? [`${prefix}validating-webhook-configuration`]
    : [];
  return {
    ...apiContextless(config, boilerplate),
    secretName: `${prefix}webhook-server-cert`,
    serviceName: `${prefix}webhook-service`,
    mutating,
    validating,
    conversionCrds: [...new Set(conversionCrds)],
    mutatingTs: tsStringArray(mutating),
    validatingTs: tsStringArray(validating),
    conversionCrdsTs: tsStringArray([...new Set(conversionCrds)]),
  };
}

/** The init context's fields (boilerplate, project name...), without a resource. */
function apiContextless(config: ProjectConfig, boilerplate: string): InitContext {
  return initContext({
    projectName: config.projectName,
    domain: config.domain,
    owner: '',
    license: boilerplate === '' ? 'none' : 'apache2',
    namespaced: config.namespaced ?? false,
    multigroup: config.multigroup ?? false,
    ...(config.certProvider ? { certProvider: config.certProvider } : {}),
    boilerplate,
  });
}

/**
 * The self-provided certificate's files, written again from `config` (a project with webhooks): the
 * module that runs the provider, its RBAC, and the lines of src/main.ts and config/rbac that use them.
 */
export async function addSelfSignedCertificates(tree: Tree, config: ProjectConfig): Promise<void> {
  const boilerplate = (await tree.read(BOILERPLATE_FILE)) ?? '';
  await addFolder(tree, 'webhook/self-signed', selfSignedContext(config, boilerplate));
  const main = await tree.read(MAIN_FILE);
  if (main !== undefined) await tree.write(MAIN_FILE, withCacheLine(main, tree));
  await addAtMarker(tree, RBAC_KUSTOMIZATION_FILE, 'rbacresources', '- webhook_certificates_role.yaml');
  await addAtMarker(tree, MAIN_FILE, 'imports', IMPORT_LINE);
  await addAtMarker(tree, MAIN_FILE, 'builder', CALL_LINE);
}

/**
 * `edit --cert-provider`: PROJECT records the provider, and a project with webhooks is rewired: the
 * textual edits keep the user's other changes to the files they touch.
 */
export async function planCertProvider(project: LoadedProject, provider: CertProvider): Promise<Plan> {
  const { config, root } = project;
  const next: ProjectConfig = { ...config };
  if (provider === 'self') next.certProvider = 'self';
  else delete next.certProvider;
  const tree = new Tree(root, true);
  await tree.write(PROJECT_FILE, serializeProject(next));
  const removals: string[] = [];
  const edit = async (file: string, change: (text: string) => string) => {
    const text = await tree.read(file);
    if (text === undefined) return;
    const changed = change(text);
    if (changed !== text) await tree.write(file, changed);
  };
  // The manager reads the provider's kinds from the API server, as `init --cert-provider self` writes it.
  if (provider === 'self') await edit(MAIN_FILE, (text) => withCacheLine(text, tree));
  else
    await edit(MAIN_FILE, (text) => text.replace(`${RUNTIME_IMPORT}\n`, '').replace(`${CACHE_LINE}\n`, ''));
  if (hasWebhooks(config)) {
    const boilerplate = (await tree.read(BOILERPLATE_FILE)) ?? '';
    const context = { ...apiContextless(next, boilerplate), selfCertificates: provider === 'self' };
    if (provider === 'self') {
      await edit(DEFAULT_KUSTOMIZATION_FILE, (text) => text.replace(/^- \.\.\/certmanager\n/m, ''));
      await edit(WEBHOOK_KUSTOMIZATION_FILE, (text) =>
        text.replace(/\n(#[^\n]*\n)*commonAnnotations:\n {2}cert-manager\.io\/inject-ca-from: [^\n]*\n/, ''),
      );
      for (const file of await conversionPatches(tree)) {
        await edit(file, (text) =>
          text
            .replace(
              /^# cert-manager puts the CA[^\n]*\n/m,
              '# The manager puts the CA of its own serving certificate into caBundle (src/webhook-certificates.ts).\n',
            )
            .replace(/^ {2}annotations:\n {4}cert-manager\.io\/inject-ca-from: [^\n]*\n/m, ''),
        );
      }
      for (const file of CERT_MANAGER_FILES) if (await tree.exists(file)) removals.push(file);
      await addSelfSignedCertificates(tree, next);
    } else {
      await edit(DEFAULT_KUSTOMIZATION_FILE, (text) =>
        text.replace(/^- \.\.\/webhook\n(?!- \.\.\/certmanager)/m, '- ../webhook\n- ../certmanager\n'),
      );
      await addFolder(tree, 'webhook/certmanager', context);
      await edit(WEBHOOK_KUSTOMIZATION_FILE, (text) =>
        text.includes('commonAnnotations:')
          ? text
          : `${text.replace(/\n*$/, '\n')}\n# cert-manager puts the CA of the serving certificate (config/certmanager) into the webhook\n` +
            "# configurations. The name is the Certificate's after config/default's namespace and namePrefix.\n" +
            `commonAnnotations:\n  cert-manager.io/inject-ca-from: ${injectFrom(next)}\n`,
      );
      for (const file of await conversionPatches(tree)) {
        await edit(file, (text) =>
          text
            .replace(
              /^# The manager puts the CA[^\n]*\n/m,
              '# cert-manager puts the CA of the serving certificate (config/certmanager) into caBundle.\n',
            )
            .replace(
              /^( {2}name: [^\n]*\n)(?! {2}annotations:)/m,
              `$1  annotations:\n    cert-manager.io/inject-ca-from: ${injectFrom(next)}\n`,
            ),
        );
      }
      await edit(MAIN_FILE, (text) => text.replace(`${IMPORT_LINE}\n`, '').replace(`${CALL_LINE}\n`, ''));
      await edit(RBAC_KUSTOMIZATION_FILE, (text) =>
        text.replace(/^- webhook_certificates_role\.yaml\n/m, ''),
      );
      for (const file of [WEBHOOK_CERTIFICATES_FILE, WEBHOOK_CERTIFICATES_ROLE_FILE])
        if (await tree.exists(file)) removals.push(file);
    }
    // The manager's certificate volume: a Secret cert-manager fills, or a directory the manager writes.
    await tree.write(MANAGER_WEBHOOK_PATCH_FILE, await renderManagerPatch(context));
  }
  // As every command that writes TypeScript: Prettier on it, then the manifests of the sources as they will be.
  await formatTypeScript(tree);
  if (hasWebhooks(config)) await addManifests(tree);
  const plan = await tree.plan();
  const removed: PlanEntry[] = [];
  for (const file of removals) {
    removed.push({ action: 'remove', path: file, content: '', previous: (await tree.read(file)) ?? '' });
  }
  plan.entries = [...plan.entries.filter((e) => e.action !== 'unchanged'), ...removed].sort((a, b) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : 0,
  );
  return plan;
}

function injectFrom(config: ProjectConfig): string {
  return `${config.projectName}-system/${config.projectName}-serving-cert`;
}

/** The CRD patches that send conversions to the webhook (config/crd/kustomization.yaml lists them). */
async function conversionPatches(tree: Tree): Promise<string[]> {
  const kustomization = (await tree.read(CRD_KUSTOMIZATION_FILE)) ?? '';
  return [...kustomization.matchAll(/^- path: (patches\/webhook_in_[a-z0-9.-]+\.yaml)$/gm)].map(
    (match) => `${CRD_DIR}/${match[1]}`,
  );
}

/** src/main.ts with the manager reading the provider's kinds from the API server (not its cache). */
function withCacheLine(text: string, tree: Tree): string {
  if (text.includes(CACHE_LINE)) return text;
  if (!text.includes(MANAGER_CREATE)) {
    tree.warnings.push(
      `${MAIN_FILE} has no "${MANAGER_CREATE.trim()}": add this by hand:\n  ${RUNTIME_IMPORT}\n  ${CACHE_LINE.trim()} (in Manager.create's options)`,
    );
    return text;
  }
  const withImport = text.includes(RUNTIME_IMPORT)
    ? text
    : text.replace(/^(import \{ Manager \} from '@kubesmith\/runtime';\n)/m, `$1${RUNTIME_IMPORT}\n`);
  return withImport.replace(MANAGER_CREATE, `${MANAGER_CREATE}${CACHE_LINE}\n`);
}

async function renderManagerPatch(context: object): Promise<string> {
  const files = await renderFolder('webhook/manager-patch', context);
  const patch = files.find((file) => file.path === MANAGER_WEBHOOK_PATCH_FILE);
  if (!patch) throw new KubesmithError(`internal: no template for ${MANAGER_WEBHOOK_PATCH_FILE}`);
  return patch.content;
}
