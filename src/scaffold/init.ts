/** `kubesmith init`: the plan that renders a new operator project. */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import { LAYOUT, serializeProject, type CertProvider, type ProjectConfig } from '../project/config.js';
import { BOILERPLATE_FILE, LICENSE_FILE, PROJECT_FILE } from '../project/layout.js';
import { kubesmithVersion } from '../version.js';
import { addAutoupdateWorkflow, withAutoupdate } from './autoupdate.js';
import { initContext, type License } from './context.js';
import type { KubesmithPackages } from './packages.js';
import type { Plan } from './plan.js';
import { addFolder, templatesDir } from './render.js';
import { Tree } from './tree.js';

export { BOILERPLATE_FILE } from '../project/layout.js';

export interface InitOptions {
  root: string;
  projectName: string;
  domain: string;
  owner: string;
  license: License;
  namespaced: boolean;
  multigroup: boolean;
  /** Who provides the webhook serving certificate. Default: cert-manager. */
  certProvider?: CertProvider;
  force: boolean;
  /** The copyright year. Default: this year. */
  year?: number;
  /** Where the project gets kubesmith's packages; tarballs among them are written into the project. */
  packages: KubesmithPackages;
  /** `--plugins autoupdate`: the weekly `alpha update` workflow, recorded in PROJECT. */
  autoupdate?: boolean;
}

export async function planInit(options: InitOptions): Promise<Plan> {
  const tree = new Tree(options.root, options.force);
  if ((await tree.exists(PROJECT_FILE)) && !options.force) {
    throw new KubesmithError(
      `${path.join(options.root, PROJECT_FILE)} exists: this directory is already a kubesmith project`,
      {
        hint: 'run `kubesmith create api` to add to it, or `kubesmith init --force` to scaffold it again over your files',
      },
    );
  }
  const context = initContext(options);
  await addFolder(tree, 'init', context);
  for (const file of options.packages.files) await tree.createBinary(file.path, file.bytes);
  await tree.create(BOILERPLATE_FILE, context.boilerplate);
  if (options.license === 'apache2') {
    await tree.create(
      LICENSE_FILE,
      await readFile(path.join(templatesDir, 'licenses', 'apache2.txt'), 'utf8'),
    );
  }
  const project: ProjectConfig = {
    version: '3',
    domain: options.domain,
    projectName: options.projectName,
    layout: [LAYOUT],
    // An unreleased build from a checkout: which commit made it, so its scaffold can be made again.
    cliVersion: options.packages.build ? `${kubesmithVersion}+${options.packages.build}` : kubesmithVersion,
    ...(options.owner ? { owner: options.owner } : {}),
    license: options.license,
    ...(options.multigroup ? { multigroup: true } : {}),
    ...(options.namespaced ? { namespaced: true } : {}),
    ...(options.certProvider === 'self' ? { certProvider: 'self' as const } : {}),
    resources: [],
    extra: options.autoupdate ? withAutoupdate({}) : {},
  };
  if (options.autoupdate) await addAutoupdateWorkflow(tree);
  await tree.write(PROJECT_FILE, serializeProject(project));
  return tree.plan();
}
