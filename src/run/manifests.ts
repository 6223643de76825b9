/**
 * What run installs, read from the project's generated manifests: the CRDs of config/crd/bases, the webhook
 * configurations of config/webhook/manifests.yaml, and which CRDs convert through the webhook (the
 * resources PROJECT records with a conversion webhook). Each file is read bounded and inside the project.
 */
import fs from 'node:fs';
import { KubesmithError } from '../errors.js';
import { yaml } from '../lazy-yaml.js';
import type { ProjectConfig } from '../project/config.js';
import { containedPath } from '../project/contained.js';
import { CRD_BASES_DIR, DEFAULT_KUSTOMIZATION_FILE, WEBHOOK_MANIFESTS_FILE } from '../project/layout.js';
import type { KindName } from './cluster.js';
import type { KubeObject } from './project-modules.js';

/** A generated manifest is far smaller; a larger file is not one. */
const MAX_MANIFEST_BYTES = 8 * 2 ** 20;

/** A DNS subdomain: a webhook configuration's and a CRD's name. */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export interface WebhookConfiguration {
  kind: Extract<KindName, 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration'>;
  /** The name in the cluster: the project's name prefix (config/default's namePrefix) and the file's. */
  name: string;
  webhooks: WebhookEntry[];
}

export interface WebhookEntry {
  name: string;
  clientConfig?: { service?: { path?: string }; url?: string };
  [field: string]: unknown;
}

export interface CrdManifest {
  name: string;
  group: string;
  kind: string;
  object: KubeObject;
}

function readDocuments(root: string, relative: string): unknown[] {
  const file = containedPath(root, relative);
  const size = fs.statSync(file).size;
  if (size > MAX_MANIFEST_BYTES)
    throw new KubesmithError(`${relative} is ${size} bytes, more than a generated manifest`, {
      hint: 'run `kubesmith manifests` to generate it again',
    });
  const documents = yaml().parseAllDocuments(fs.readFileSync(file, 'utf8'), { prettyErrors: false });
  return (Array.isArray(documents) ? documents : [documents]).flatMap((document) => {
    const error = document.errors[0];
    if (error)
      throw new KubesmithError(`${relative}: not YAML: ${error.message.split('\n')[0]}`, {
        hint: 'run `kubesmith manifests` to generate it again',
      });
    const value: unknown = document.toJS({ maxAliasCount: 100 });
    return value === null || value === undefined ? [] : [value];
  });
}

function badManifest(relative: string, why: string): KubesmithError {
  return new KubesmithError(`${relative}: ${why}`, {
    hint: 'run `kubesmith manifests` to generate it again',
  });
}

/** The project's CRDs (config/crd/bases/*.yaml). */
export function readCrds(root: string): CrdManifest[] {
  const dir = containedPath(root, CRD_BASES_DIR);
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((file) => /\.ya?ml$/.test(file)) : [];
  const crds: CrdManifest[] = [];
  for (const file of files.sort()) {
    const relative = `${CRD_BASES_DIR}/${file}`;
    for (const document of readDocuments(root, relative)) {
      const object = document as KubeObject & { spec?: { group?: unknown; names?: { kind?: unknown } } };
      if (object.kind !== 'CustomResourceDefinition') continue;
      const name = object.metadata?.name;
      const group = object.spec?.group;
      const kind = object.spec?.names?.kind;
      if (
        typeof name !== 'string' ||
        !OBJECT_NAME.test(name) ||
        typeof group !== 'string' ||
        typeof kind !== 'string'
      )
        throw badManifest(relative, 'a CRD without a valid name, group or kind');
      crds.push({ name, group, kind, object });
    }
  }
  return crds;
}

/**
 * The names of the CRDs whose versions convert through the webhook: those of the resources PROJECT
 * records with `webhooks.conversion`.
 */
export function conversionCrds(config: ProjectConfig, crds: readonly CrdManifest[]): string[] {
  const names = new Set<string>();
  for (const resource of config.resources) {
    if (!resource.webhooks?.conversion) continue;
    const group = resource.domain ? `${resource.group}.${resource.domain}` : resource.group;
    const crd = crds.find((candidate) => candidate.group === group && candidate.kind === resource.kind);
    if (crd) names.add(crd.name);
  }
  return [...names];
}

/**
 * The webhook configurations of config/webhook/manifests.yaml (none when the file is absent), named as
 * config/default names them in a cluster (`<namePrefix><name>`), so that run takes the place of a deployed
 * operator's configurations rather than adding to them, and two projects' runs do not share a name.
 */
export function readWebhookConfigurations(root: string, namePrefix: string): WebhookConfiguration[] {
  if (!fs.existsSync(containedPath(root, WEBHOOK_MANIFESTS_FILE))) return [];
  const configurations: WebhookConfiguration[] = [];
  for (const document of readDocuments(root, WEBHOOK_MANIFESTS_FILE)) {
    const object = document as KubeObject & { webhooks?: unknown };
    if (object.kind !== 'MutatingWebhookConfiguration' && object.kind !== 'ValidatingWebhookConfiguration')
      continue;
    const name = `${namePrefix}${object.metadata?.name ?? ''}`;
    const webhooks = object.webhooks;
    if (!OBJECT_NAME.test(name) || !Array.isArray(webhooks))
      throw badManifest(WEBHOOK_MANIFESTS_FILE, `a ${object.kind} without a valid name or webhooks`);
    for (const webhook of webhooks as WebhookEntry[]) {
      if (typeof webhook?.name !== 'string')
        throw badManifest(WEBHOOK_MANIFESTS_FILE, `a webhook of ${name} without a name`);
    }
    configurations.push({ kind: object.kind, name, webhooks: webhooks as WebhookEntry[] });
  }
  return configurations;
}

/** config/default's namePrefix when it has a valid one, else `<projectName>-` as init writes it. */
export function namePrefix(root: string, config: ProjectConfig): string {
  const fallback = `${config.projectName}-`;
  try {
    const [document] = readDocuments(root, DEFAULT_KUSTOMIZATION_FILE);
    const prefix = (document as { namePrefix?: unknown } | undefined)?.namePrefix;
    if (typeof prefix === 'string' && (prefix === '' || /^[a-z0-9][-a-z0-9.]*$/.test(prefix))) return prefix;
    return fallback;
  } catch {
    return fallback;
  }
}
