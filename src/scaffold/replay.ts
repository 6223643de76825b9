/**
 * `kubesmith alpha generate`: the commands that made a project, read back from its PROJECT, in the order
 * they are run again. PROJECT records each resource in the order `create api` (or `create webhook` of a
 * built-in kind) first named it, and what was scaffolded for it; it does not record when each webhook was
 * added, so the replay follows one rule (docs/upgrading.md): a resource's API and controller, then at once
 * its defaulting and validating webhooks, and its conversion webhook as soon as every spoke version
 * exists; the Helm chart last (the autoupdate workflow right after init). Anything PROJECT records that no command of this kubesmith makes (another
 * tool's plugin, an unknown key) is refused, since the project made again would silently lose it.
 */
import { KubesmithError } from '../errors.js';
import type { CertProvider, License, ProjectConfig, ResourceConfig } from '../project/config.js';
import type { DeployImageOptions } from '../project/deploy-image.js';
import {
  KNOWN_PLUGINS,
  recordedAutoupdate,
  recordedDeployImage,
  recordedHelm,
  type HelmOptions,
} from '../project/plugins.js';
import { validateOwner } from '../project/validation.js';
import { externalCrdFile } from '../project/layout.js';
import { defaultPlural } from '../project/resource.js';

export type ReplayStep =
  | {
      command: 'init';
      options: {
        projectName: string;
        domain: string;
        owner: string;
        license: License;
        namespaced: boolean;
        multigroup: boolean;
        certProvider?: CertProvider;
        year?: number;
      };
    }
  | {
      command: 'create api';
      options: {
        group: string;
        version: string;
        kind: string;
        plural?: string;
        namespaced: boolean;
        resource: boolean;
        controller: boolean;
        deployImage?: DeployImageOptions;
      };
    }
  | {
      command: 'create webhook';
      options: {
        group: string;
        version: string;
        kind: string;
        defaulting: boolean;
        validation: boolean;
        conversion: boolean;
        spoke: string[];
      };
    }
  | {
      command: 'import crd';
      options: {
        /** The copy of the CRD in the input project (config/crd/external/<group>_<plural>.yaml). */
        source: string;
        /** The versions of the kind PROJECT records. */
        version: string[];
      };
    }
  | { command: 'helm-chart'; options: HelmOptions }
  | { command: 'edit'; options: { plugins: 'autoupdate' } };

/** The one key of PROJECT's top level, beside those ProjectConfig reads, that the commands write. */
const KNOWN_TOP = ['plugins'];

/**
 * The steps that make `config`'s project again. `boilerplate` is the project's license header
 * (hack/boilerplate.ts.txt), whose copyright year the new scaffold keeps, and which tells the owner and
 * license of a PROJECT written before PROJECT recorded them.
 */
export function replaySteps(config: ProjectConfig, boilerplate: string | undefined): ReplayStep[] {
  refuseUnknown(config);
  const header = parseBoilerplate(boilerplate ?? '');
  const license: License = config.license ?? (header ? 'apache2' : 'none');
  const steps: ReplayStep[] = [
    {
      command: 'init',
      options: {
        projectName: config.projectName,
        domain: config.domain,
        owner: config.owner ?? header?.owner ?? '',
        license,
        namespaced: config.namespaced ?? false,
        multigroup: config.multigroup ?? false,
        ...(config.certProvider ? { certProvider: config.certProvider } : {}),
        ...(header ? { year: header.year } : {}),
      },
    },
  ];
  // The workflow depends on nothing the other steps make: it comes right after init, as `init --plugins` makes it.
  if (recordedAutoupdate(config.extra['plugins']))
    steps.push({ command: 'edit', options: { plugins: 'autoupdate' } });
  const made = new Set<string>();
  const pending: ResourceConfig[] = [];
  const key = (r: { group: string; version: string; kind: string }) => `${r.group}/${r.version}/${r.kind}`;
  const conversionsReady = () => {
    for (const resource of [...pending]) {
      const spokes = resource.webhooks?.spoke ?? [];
      if (!spokes.every((version) => made.has(key({ ...resource, version })))) continue;
      pending.splice(pending.indexOf(resource), 1);
      steps.push(webhookStep(resource, { conversion: true }));
    }
  };
  const imported = new Set<string>();
  for (const resource of config.resources) {
    // An imported kind: its CRD imported again, from the copy the project keeps, before its first command.
    const crd = `${resource.group}/${resource.kind}`;
    if (resource.external && !imported.has(crd)) {
      imported.add(crd);
      const versions = config.resources
        .filter((r) => r.external && r.group === resource.group && r.kind === resource.kind)
        .map((r) => r.version);
      steps.push({
        command: 'import crd',
        options: {
          source: externalCrdFile(resource.group, resource.plural ?? defaultPlural(resource.kind)),
          version: [...new Set(versions)],
        },
      });
    }
    if (resource.api || resource.controller) {
      const deployImage = recordedDeployImage(config.extra['plugins'], resource);
      steps.push({
        command: 'create api',
        options: {
          group: resource.group,
          version: resource.version,
          kind: resource.kind,
          ...(resource.plural !== undefined ? { plural: resource.plural } : {}),
          namespaced: resource.api?.namespaced ?? true,
          resource: resource.api !== undefined,
          controller: resource.controller ?? false,
          ...(deployImage ? { deployImage } : {}),
        },
      });
    }
    made.add(key(resource));
    const hooks = resource.webhooks;
    if (hooks?.defaulting || hooks?.validation) steps.push(webhookStep(resource, { conversion: false }));
    if (hooks?.conversion) pending.push(resource);
    conversionsReady();
  }
  // Spokes PROJECT does not record: the webhook's own step says which version is missing.
  for (const resource of pending) steps.push(webhookStep(resource, { conversion: true }));
  const helm = recordedHelm(config.extra['plugins']);
  if (helm) steps.push({ command: 'helm-chart', options: helm });
  return steps;
}

function webhookStep(resource: ResourceConfig, which: { conversion: boolean }): ReplayStep {
  const hooks = resource.webhooks ?? { webhookVersion: 'v1', extra: {} };
  return {
    command: 'create webhook',
    options: {
      group: resource.group,
      version: resource.version,
      kind: resource.kind,
      defaulting: !which.conversion && (hooks.defaulting ?? false),
      validation: !which.conversion && (hooks.validation ?? false),
      conversion: which.conversion,
      spoke: which.conversion ? (hooks.spoke ?? []) : [],
    },
  };
}

/** Refuses what PROJECT records that no kubesmith command writes: replaying would drop it. */
function refuseUnknown(config: ProjectConfig): void {
  const refuse = (what: string): never => {
    throw new KubesmithError(`PROJECT records ${what}, which kubesmith alpha generate cannot make again`, {
      hint: 'remove it from PROJECT (`git diff PROJECT` shows who added it), or make the project again by hand',
    });
  };
  const unknownTop = Object.keys(config.extra).find((key) => !KNOWN_TOP.includes(key));
  if (unknownTop !== undefined) refuse(`the key ${JSON.stringify(unknownTop.slice(0, 80))}`);
  const plugins = config.extra['plugins'];
  if (plugins !== undefined) {
    if (typeof plugins !== 'object' || plugins === null) refuse('plugins that are not a mapping');
    const unknown = Object.keys(plugins as object).find((name) => !KNOWN_PLUGINS.includes(name));
    if (unknown !== undefined) refuse(`the plugin ${JSON.stringify(unknown.slice(0, 80))}`);
  }
  config.resources.forEach((resource, index) => {
    const where = `resource ${index + 1} (${resource.group}/${resource.version} ${resource.kind})`;
    const unknown =
      Object.keys(resource.extra)[0] ??
      Object.keys(resource.api?.extra ?? {})[0] ??
      Object.keys(resource.webhooks?.extra ?? {})[0];
    if (unknown !== undefined) refuse(`the key ${JSON.stringify(unknown.slice(0, 80))} in ${where}`);
    if (!resource.api && !resource.controller && !resource.webhooks)
      refuse(`${where} with neither an API, a controller nor a webhook`);
    // create api qualifies a project's group with the project's domain, and records that domain (an
    // imported kind's group is whole, and records none).
    if (resource.external && (resource.domain !== undefined || resource.api))
      refuse(`${where}, an imported kind, with a domain or an API of the project`);
    if (resource.domain !== undefined && resource.domain !== config.domain)
      refuse(`${where} in domain ${resource.domain}, not the project's ${config.domain}`);
  });
}

/**
 * The year and owner of a license header kubesmith wrote (`Copyright 2026 The Authors.`), undefined for
 * none (license none) or one edited past recognition.
 */
export function parseBoilerplate(text: string): { year: number; owner?: string } | undefined {
  const match = /^\/\*\nCopyright ([0-9]{4})(?: ([^\n]{1,300}))?\.\n/.exec(text);
  if (!match) return undefined;
  const owner = match[2];
  // A PROJECT of kubesmith 0.1.0 does not record the owner: the header's is taken when it is one line.
  return {
    year: Number(match[1]),
    ...(owner !== undefined && validateOwner(owner) === undefined ? { owner } : {}),
  };
}
