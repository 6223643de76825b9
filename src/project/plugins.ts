/**
 * PROJECT's `plugins`: the options of kubesmith's plugins, recorded as kubebuilder records its own
 * (`deploy-image.go.kubebuilder.io/v1-alpha`, `helm.kubebuilder.io/v2-alpha`), so that `alpha generate`
 * can run the same commands again. A pull request can edit them: every value replayed later meets the rules
 * of the flag it records, checked here when PROJECT is read. Keys of other tools' plugins are kept, not
 * checked (`alpha generate` refuses them: it cannot replay them).
 */
import { UsageError } from '../errors.js';
import { resolveDeployImage, type DeployImageFlags, type DeployImageOptions } from './deploy-image.js';
import { imageProblem } from './image.js';
import {
  validateDomain,
  validateGroup,
  validateKindName,
  validateResourcePath,
  validateVersion,
  type NameProblem,
} from './validation.js';

/** `create api --image` (kubebuilder: `deploy-image.go.kubebuilder.io/v1-alpha`). */
export const DEPLOY_IMAGE_PLUGIN = 'deploy-image.kubesmith.dev/v1-alpha';
/** `helm-chart` / `edit --plugins helm` (kubebuilder: `helm.kubebuilder.io/v2-alpha`). */
export const HELM_PLUGIN = 'helm.kubesmith.dev/v1-alpha';
/** `init` / `edit --plugins autoupdate` (kubebuilder: `autoupdate.kubebuilder.io/v1-alpha`); it has no options. */
export const AUTOUPDATE_PLUGIN = 'autoupdate.kubesmith.dev/v1-alpha';
export const KNOWN_PLUGINS: readonly string[] = [DEPLOY_IMAGE_PLUGIN, HELM_PLUGIN, AUTOUPDATE_PLUGIN];

/** The options of `helm-chart` that PROJECT records: those given, when they differ from the default. */
export interface HelmOptions {
  output?: string;
  image?: string;
}

/** A deploy-image option recorded in PROJECT, and the flag it comes from. */
const DEPLOY_IMAGE_OPTIONS: Readonly<Record<string, keyof DeployImageFlags>> = {
  image: 'image',
  containerPort: 'imageContainerPort',
  containerCommand: 'imageContainerCommand',
  runAsUser: 'runAsUser',
  serviceType: 'serviceType',
  nodePort: 'nodePort',
};

export interface PluginProblem {
  /** Below `plugins`. */
  path: (string | number)[];
  problem: NameProblem;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What is wrong with the options PROJECT records for kubesmith's plugins. */
export function pluginProblems(plugins: unknown): PluginProblem[] {
  if (plugins === undefined) return [];
  if (!isRecord(plugins))
    return [{ path: [], problem: { message: 'must be a mapping', hint: 'fix `plugins:` of PROJECT' } }];
  const problems: PluginProblem[] = [];
  const deployImage = plugins[DEPLOY_IMAGE_PLUGIN];
  if (deployImage !== undefined) {
    const resources = isRecord(deployImage) ? deployImage['resources'] : undefined;
    if (!Array.isArray(resources))
      problems.push({
        path: [DEPLOY_IMAGE_PLUGIN],
        problem: { message: 'must hold a list of resources', hint: 'fix `resources:` of the plugin' },
      });
    else
      resources.forEach((entry, index) => {
        const problem = deployImageEntryProblem(entry);
        if (problem) problems.push({ path: [DEPLOY_IMAGE_PLUGIN, 'resources', index], problem });
      });
  }
  const helm = plugins[HELM_PLUGIN];
  if (helm !== undefined && helm !== null) {
    const problem = helmProblem(helm);
    if (problem) problems.push({ path: [HELM_PLUGIN], problem });
  }
  const autoupdate = plugins[AUTOUPDATE_PLUGIN];
  if (
    autoupdate !== undefined &&
    autoupdate !== null &&
    !(isRecord(autoupdate) && Object.keys(autoupdate).length === 0)
  )
    problems.push({
      path: [AUTOUPDATE_PLUGIN],
      problem: {
        message: 'takes no options',
        hint: 'write it as `{}`, or run `kubesmith edit --plugins autoupdate` again to record it',
      },
    });
  return problems;
}

function deployImageEntryProblem(entry: unknown): NameProblem | undefined {
  const hint = 'fix the entry, or run `kubesmith create api --image ... --force` again to record it';
  if (!isRecord(entry)) return { message: 'must be a mapping', hint };
  for (const key of ['group', 'version', 'kind']) {
    if (typeof entry[key] !== 'string') return { message: `has no ${key}`, hint };
  }
  if (entry['domain'] !== undefined && typeof entry['domain'] !== 'string')
    return { message: 'domain must be a string', hint };
  const domain = (entry['domain'] as string | undefined) ?? '';
  const nameProblem =
    (domain ? validateDomain(domain) : undefined) ??
    validateGroup(entry['group'] as string, domain) ??
    validateVersion(entry['version'] as string) ??
    validateKindName(entry['kind'] as string);
  if (nameProblem) return nameProblem;
  const options = entry['options'];
  if (!isRecord(options)) return { message: 'has no options mapping', hint };
  const flags: DeployImageFlags = {};
  for (const [key, value] of Object.entries(options)) {
    const flag = DEPLOY_IMAGE_OPTIONS[key];
    if (flag === undefined)
      return {
        message: `unknown option ${JSON.stringify(key.slice(0, 80))}`,
        hint: `the options are ${Object.keys(DEPLOY_IMAGE_OPTIONS).join(', ')}`,
      };
    if (typeof value !== 'string')
      return { message: `option ${key} must be a string, as the flag's value`, hint };
    flags[flag] = value;
  }
  try {
    resolveDeployImage(flags, { resource: true });
  } catch (error) {
    if (error instanceof UsageError) return { message: error.message, hint: error.hint ?? hint };
    throw error;
  }
  return undefined;
}

function helmProblem(helm: unknown): NameProblem | undefined {
  const hint = 'fix the options, or run `kubesmith helm-chart` again to record them';
  if (!isRecord(helm)) return { message: 'must be a mapping of options', hint };
  for (const [key, value] of Object.entries(helm)) {
    if (key !== 'output' && key !== 'image')
      return {
        message: `unknown option ${JSON.stringify(key.slice(0, 80))}`,
        hint: 'the options are output and image',
      };
    if (typeof value !== 'string') return { message: `option ${key} must be a string`, hint };
  }
  const { output, image } = helm as HelmOptions;
  if (output !== undefined) {
    const problem = validateResourcePath(output);
    if (problem || output === '@kubernetes/client-node')
      return {
        message: `output ${JSON.stringify(output.slice(0, 80))} is not a directory below the project (a relative path without '..')`,
        hint: 'give the chart directory relative to the project root, e.g. dist/chart',
      };
  }
  if (image !== undefined) {
    const problem = imageProblem(image);
    if (problem)
      return {
        message: `image ${JSON.stringify(image.slice(0, 80))} is not a valid image reference: ${problem}`,
        hint: 'give [registry/]name[:tag][@digest], e.g. registry.example.com/guestbook-operator:v0.1.0',
      };
  }
  return undefined;
}

/** The deploy-image options PROJECT records for a kind, as `create api --image` resolved them. */
export function recordedDeployImage(
  plugins: unknown,
  resource: { group: string; version: string; kind: string },
): DeployImageOptions | undefined {
  const resources =
    isRecord(plugins) && isRecord(plugins[DEPLOY_IMAGE_PLUGIN])
      ? (plugins[DEPLOY_IMAGE_PLUGIN]['resources'] as unknown[])
      : [];
  const entry = (Array.isArray(resources) ? resources : []).find(
    (item): item is Record<string, unknown> =>
      isRecord(item) &&
      item['group'] === resource.group &&
      item['version'] === resource.version &&
      item['kind'] === resource.kind,
  );
  if (!entry || !isRecord(entry['options'])) return undefined;
  const flags: DeployImageFlags = {};
  for (const [key, value] of Object.entries(entry['options']))
    flags[DEPLOY_IMAGE_OPTIONS[key]!] = value as string;
  return resolveDeployImage(flags, { resource: true });
}

/** The `helm-chart` options PROJECT records, or undefined when the chart was never made. */
export function recordedHelm(plugins: unknown): HelmOptions | undefined {
  if (!isRecord(plugins) || !(HELM_PLUGIN in plugins)) return undefined;
  const helm = plugins[HELM_PLUGIN];
  return isRecord(helm) ? (helm as HelmOptions) : {};
}

/** Whether PROJECT records `--plugins autoupdate` (the weekly `alpha update` workflow). */
export function recordedAutoupdate(plugins: unknown): boolean {
  return isRecord(plugins) && AUTOUPDATE_PLUGIN in plugins;
}
