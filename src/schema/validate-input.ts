/**
 * What `kubesmith validate` reads: YAML files (several documents each) of objects and of CRDs, each
 * document with its line, each field with its own where the YAML says it; and the index of CRD versions
 * by apiVersion and kind. Every problem of the input is one positioned KubesmithError.
 */
import fs from 'node:fs';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import { yaml } from '../lazy-yaml.js';
import type { JSONSchemaProps } from './types.js';
import type { CrdVersion } from './validate.js';
import type { PathStep } from './validate-values.js';

/** A file larger than this is refused: no manifest is that large. */
export const MAX_INPUT_BYTES = 16 * 1024 * 1024;

export interface Document {
  file: string;
  /** The 1-based line where the document starts. */
  line: number;
  value: unknown;
  /** The line of a field of the document, or the document's where the YAML does not say. */
  lineOf(steps: readonly PathStep[]): number;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The YAML files under `target` (itself when it is a file), in name order. */
export function yamlFiles(target: string, shownAs = target): string[] {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(target);
  } catch {
    throw new KubesmithError(`${shownAs}: no such file or directory`, {
      hint: 'give a YAML file or a directory of them',
    });
  }
  if (stat.isFile()) return [target];
  const out: string[] = [];
  for (const entry of fs
    .readdirSync(target, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const full = path.join(target, entry.name);
    if (entry.isDirectory()) out.push(...yamlFiles(full));
    // kustomize's own file sits among the samples; it is not an object of the API.
    else if (entry.isFile() && /\.ya?ml$/.test(entry.name) && !/^kustomization\.ya?ml$/i.test(entry.name))
      out.push(full);
  }
  return out;
}

/** The documents of a YAML file (empty ones left out), or a positioned error where it is not YAML. */
export function readDocuments(file: string, shownAs = file): Document[] {
  const size = fs.statSync(file).size;
  if (size > MAX_INPUT_BYTES)
    throw new KubesmithError(`${shownAs}:1: the file is larger than ${MAX_INPUT_BYTES} bytes`, {
      hint: 'split it into smaller files',
    });
  const text = fs.readFileSync(file, 'utf8');
  const Y = yaml();
  const counter = new Y.LineCounter();
  const docs = Y.parseAllDocuments(text, { lineCounter: counter, uniqueKeys: true });
  const out: Document[] = [];
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    const line = counter.linePos(doc.contents?.range[0] ?? doc.range[0]).line;
    const bad = doc.errors[0];
    if (bad) {
      const at = bad.linePos?.[0]?.line ?? line;
      throw new KubesmithError(`${shownAs}:${at}: not YAML: ${bad.message.split('\n')[0]}`, {
        hint: 'fix the YAML syntax',
      });
    }
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value === null || value === undefined) continue;
    out.push({
      file: shownAs,
      line,
      value,
      lineOf(steps) {
        // The line of the field's key (of the item, in a list), else its nearest parent's: a required
        // field that is absent is said where its object starts.
        for (let n = steps.length; n > 0; n--) {
          const parent = n === 1 ? doc.contents : doc.getIn(steps.slice(0, n - 1), true);
          const step = steps[n - 1];
          let node: unknown;
          if (Y.isMap(parent))
            node = parent.items.find((pair) => Y.isScalar(pair.key) && pair.key.value === step)?.key;
          else if (Y.isSeq(parent) && typeof step === 'number') node = parent.items[step];
          const range = (node as { range?: readonly number[] } | undefined)?.range;
          if (range) return counter.linePos(range[0]!).line;
        }
        return line;
      },
    });
  }
  return out;
}

/** The CRD versions, by `apiVersion` and `kind` (`example.com/v1 Kind`). */
export type CrdIndex = Map<string, CrdVersion & { crd: string }>;

export const crdKey = (apiVersion: string, kind: string): string => `${apiVersion} ${kind}`;

/** Adds the CRDs of `docs` to the index; a document that is not a CRD is a positioned error. */
export function indexCrds(docs: readonly Document[], index: CrdIndex = new Map()): CrdIndex {
  for (const doc of docs) {
    const v = doc.value;
    const where = `${doc.file}:${doc.line}`;
    if (!isObject(v) || v.kind !== 'CustomResourceDefinition' || v.apiVersion !== 'apiextensions.k8s.io/v1')
      throw new KubesmithError(`${where}: not a CustomResourceDefinition (apiextensions.k8s.io/v1)`, {
        hint: 'give --crd the CRD files (config/crd/bases), not objects',
      });
    const spec = isObject(v.spec) ? v.spec : {};
    const names = isObject(spec.names) ? spec.names : {};
    const versions = Array.isArray(spec.versions) ? spec.versions : [];
    if (typeof spec.group !== 'string' || typeof names.kind !== 'string' || versions.length === 0)
      throw new KubesmithError(`${where}: the CRD lacks spec.group, spec.names.kind or spec.versions`, {
        hint: 'regenerate it with kubesmith manifests',
      });
    const crdName = isObject(v.metadata) ? String(v.metadata.name) : `${names.kind}`;
    for (const version of versions) {
      if (!isObject(version) || typeof version.name !== 'string') continue;
      const schema = isObject(version.schema) ? version.schema.openAPIV3Schema : undefined;
      const subresources = isObject(version.subresources) ? version.subresources : undefined;
      index.set(crdKey(`${spec.group}/${version.name}`, names.kind), {
        crd: crdName,
        schema: (isObject(schema)
          ? schema
          : { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }) as JSONSchemaProps,
        statusSubresource: subresources !== undefined && 'status' in subresources,
      });
    }
  }
  return index;
}
