/** Reading Kubernetes objects from YAML or JSON files and directories, as Go's envtest reads its paths. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

/**
 * The documents in `paths`: each path is a directory (its `.yaml`, `.yml` and `.json` files, not
 * recursive, in name order) or a file. `what` names the paths in errors ("CRD", "webhook").
 */
export function readDocuments(
  paths: readonly string[],
  errorIfPathMissing: boolean,
  what: string,
): unknown[] {
  const documents: unknown[] = [];
  for (const given of paths) {
    let files: string[];
    try {
      files = statSync(given).isDirectory()
        ? readdirSync(given)
            .filter((name) => /\.(ya?ml|json)$/.test(name))
            .sort()
            .map((name) => path.join(given, name))
        : [given];
    } catch (error) {
      if (errorIfPathMissing) throw new Error(`${what} path ${given} does not exist`, { cause: error });
      continue;
    }
    for (const file of files) {
      try {
        documents.push(...parseDocuments(readFileSync(file, 'utf8')));
      } catch (error) {
        throw new Error(`${file}: not valid YAML: ${(error as Error).message}`, { cause: error });
      }
    }
  }
  return documents;
}

/**
 * The documents of a YAML (or JSON) text as plain objects with the keys as written: `default`, `enum` and
 * `x-kubernetes-*` stay what the apiserver reads (client-node's loadAllYaml renames them to its model's
 * property names). Empty documents are skipped.
 */
function parseDocuments(text: string): unknown[] {
  const documents: unknown[] = [];
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0) throw document.errors[0]!;
    const value: unknown = document.toJS();
    if (value !== null && value !== undefined) documents.push(value);
  }
  return documents;
}

/** Whether `doc` is an object of `kind` in `group` (any version). */
export function isKind(doc: unknown, group: string, kind: string): boolean {
  const object = doc as { apiVersion?: unknown; kind?: unknown } | null;
  return (
    object?.kind === kind &&
    typeof object.apiVersion === 'string' &&
    object.apiVersion.startsWith(`${group}/`)
  );
}
