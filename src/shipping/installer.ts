/**
 * `dist/install.yaml`: config/default rendered by a real kustomize (`kubectl kustomize`) with the manager's
 * image set, as kubebuilder's `make build-installer`. kubebuilder edits config/manager/kustomization.yaml
 * (`kustomize edit set image`); this renders a throw-away overlay instead, so the user's files stay as they
 * are. The Helm chart (chart.ts) renders through the same overlay mechanism.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import { yaml } from '../lazy-yaml.js';
import type { ImageReference } from '../project/image.js';
import { checkKustomizeSources } from './kustomize-sources.js';
import { DEFAULT_CONFIG_DIR, TEMPORARY_PREFIX } from '../project/layout.js';

/** The image name config/manager/kustomization.yaml gives the manager container. */
const MANAGER_IMAGE = 'controller';
/** kubectl kustomize of a project takes well under a second; a hung one must not hang CI. */
const KUSTOMIZE_TIMEOUT_MS = 120_000;
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

export async function renderInstaller(root: string, kubectl: string, image: ImageReference): Promise<string> {
  const images = [
    `- name: ${MANAGER_IMAGE}`,
    `  newName: ${image.name}`,
    ...(image.tag ? [`  newTag: ${JSON.stringify(image.tag)}`] : []),
    ...(image.digest ? [`  digest: ${image.digest}`] : []),
  ];
  return renderOverlay(root, kubectl, {
    'kustomization.yaml': [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      'resources:',
      `- ../${DEFAULT_CONFIG_DIR}`,
      'images:',
      ...images,
      '',
    ].join('\n'),
  });
}

/**
 * The project's directories the overlay's kustomizations list (`../config/default` is `config/default`);
 * the overlay's own directories are not the project's.
 */
function overlaySources(files: Record<string, string>): string[] {
  const dirs: string[] = [];
  for (const [file, content] of Object.entries(files)) {
    if (path.posix.basename(file) !== 'kustomization.yaml') continue;
    const parsed = yaml().parse(content) as { resources?: unknown } | null;
    const resources = Array.isArray(parsed?.resources) ? parsed.resources : [];
    for (const entry of resources) {
      // The overlay stands one directory below the root.
      const target = path.posix.normalize(
        path.posix.join('overlay', path.posix.dirname(file), String(entry)),
      );
      if (!target.startsWith('overlay/') && target !== 'overlay') dirs.push(target);
    }
  }
  return dirs;
}

/**
 * Renders a throw-away kustomization (its files by path, `kustomization.yaml` at the top) with
 * `kubectl kustomize`. The overlay lives inside the project, so that kustomize's load restrictions allow
 * `../config/...`, and is removed afterwards.
 */
export async function renderOverlay(
  root: string,
  kubectl: string,
  files: Record<string, string>,
): Promise<string> {
  checkKustomizeSources(root, overlaySources(files));
  const overlay = await mkdtemp(path.join(root, `${TEMPORARY_PREFIX}installer-`));
  try {
    for (const [file, content] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(overlay, file)), { recursive: true });
      await writeFile(path.join(overlay, file), content);
    }
    const { execa } = await import('execa');
    const result = await execa(kubectl, ['kustomize', overlay], {
      reject: false,
      stdin: 'ignore',
      timeout: KUSTOMIZE_TIMEOUT_MS,
      maxBuffer: MAX_OUTPUT_BYTES,
    });
    if (result.exitCode !== 0) {
      const reason = String(result.stderr || result.message)
        .trim()
        .split('\n')
        .slice(0, 5)
        .join('\n');
      throw new KubesmithError(`kubectl kustomize config/default failed: ${reason}`, {
        hint: 'fix config/ (kubectl kustomize config/default shows the same error); nothing was written',
      });
    }
    return String(result.stdout);
  } finally {
    await rm(overlay, { recursive: true, force: true });
  }
}
