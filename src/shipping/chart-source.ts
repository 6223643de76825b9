/**
 * The objects a chart is made from: config/default rendered by `kubectl kustomize`, plus the optional
 * parts that config/default leaves commented out (config/prometheus, config/network-policy) rendered with
 * config/default's namespace and name prefix, so that values can turn them on. kubebuilder's helm plugin
 * writes fixed templates for those two instead; rendering the project's own files keeps the user's edits
 * to them.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import { KubesmithError } from '../errors.js';
import { renderOverlay } from './installer.js';
import { CONFIG_DIR, DEFAULT_CONFIG_DIR, DEFAULT_KUSTOMIZATION_FILE } from '../project/layout.js';

/** The optional parts of config/ that the chart always carries, behind a value. */
const OPTIONAL_PARTS = ['prometheus', 'network-policy'];
/** The keys of config/default's kustomization that the optional parts get too. */
const SHARED_KEYS = ['namespace', 'namePrefix', 'nameSuffix', 'labels', 'commonLabels'];

export interface ChartSource {
  objects: Record<string, unknown>[];
  /** The optional parts added beside config/default (those it does not include itself). */
  added: string[];
}

export async function renderChartSource(root: string, kubectl: string): Promise<ChartSource> {
  const defaultDir = path.join(root, DEFAULT_CONFIG_DIR);
  const kustomizationFile = path.join(defaultDir, 'kustomization.yaml');
  let kustomization: Record<string, unknown>;
  try {
    kustomization = (parse(await readFile(kustomizationFile, 'utf8')) ?? {}) as Record<string, unknown>;
  } catch (error) {
    throw new KubesmithError(`${DEFAULT_KUSTOMIZATION_FILE}: ${(error as Error).message.split('\n')[0]}`, {
      hint: 'the chart is made from config/default; restore it (kubesmith init writes it); nothing was written',
    });
  }
  const included = new Set(
    ((kustomization['resources'] as unknown[] | undefined) ?? []).map((entry) =>
      path.resolve(defaultDir, String(entry)),
    ),
  );
  const added = OPTIONAL_PARTS.filter((part) => {
    const dir = path.join(root, CONFIG_DIR, part);
    return existsSync(path.join(dir, 'kustomization.yaml')) && !included.has(dir);
  });
  const files: Record<string, string> = {
    'kustomization.yaml': [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      'resources:',
      `- ../${DEFAULT_CONFIG_DIR}`,
      ...(added.length > 0 ? ['- optional'] : []),
      '',
    ].join('\n'),
  };
  if (added.length > 0) {
    const shared = Object.fromEntries(
      SHARED_KEYS.filter((key) => kustomization[key] !== undefined).map((key) => [key, kustomization[key]]),
    );
    files['optional/kustomization.yaml'] = JSON.stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      ...shared,
      resources: added.map((part) => `../../${CONFIG_DIR}/${part}`),
    });
  }
  const yaml = await renderOverlay(root, kubectl, files);
  return { objects: objectsOf(yaml), added };
}

/** The objects of kustomize's output, every key of theirs their own (`__proto__` too). */
export function objectsOf(yaml: string): Record<string, unknown>[] {
  return parseAllDocuments(yaml)
    .map((doc) => plain(doc.toJS({ mapAsMap: true })))
    .filter(
      (object): object is Record<string, unknown> =>
        object !== null && typeof object === 'object' && !Array.isArray(object),
    );
}

/** Maps as objects (toJS() would assign a key `__proto__`, replacing the object's prototype). */
function plain(value: unknown): unknown {
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), plain(v)]));
  if (Array.isArray(value)) return value.map(plain);
  return value;
}
