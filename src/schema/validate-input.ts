/**
 * What `kubesmith validate` reads: YAML files (several documents each) of objects and of CRDs, each
 * document with its line, each field with its own where the YAML says it; and the index of CRD versions
 * by apiVersion and kind. Every problem of the input is one positioned KubesmithError.
 */
import fs from 'node:fs';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import { yaml } from '../lazy-yaml.js';
import { crdVersions, notACrd, type CrdVersion } from '#validation/crd.js';
import type { PathStep } from '#validation/values.js';

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
    const where = `${doc.file}:${doc.line}`;
    const why = notACrd(doc.value);
    if (why !== undefined)
      throw new KubesmithError(`${where}: ${why}`, {
        hint: why.startsWith('not a ')
          ? 'give --crd the CRD files (config/crd/bases), not objects'
          : 'regenerate it with kubesmith manifests',
      });
    const crd = crdVersions(doc.value);
    for (const [name, version] of crd.versions)
      index.set(crdKey(`${crd.group}/${name}`, crd.kind), { crd: crd.name, ...version });
  }
  return index;
}
