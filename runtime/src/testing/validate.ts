/**
 * `validate(kind, object, { old })`: would the API server take this object? The checks kube-apiserver 1.36
 * makes on a create of a custom resource (or an update, from `old`), in process: defaults and null
 * pruning, the structural schema (types, formats, enums, bounds, RE2 patterns, required, list types...),
 * then the CEL rules (transition rules with `oldSelf`, ratcheting), with the API server's field errors
 * word for word. It is the engine of `kubesmith validate`, held to recorded kube-apiserver verdicts.
 *
 * The engine (runtime/src/validation) and the CEL and RE2 libraries load on the first call, never with
 * the runtime: they are optional peers (@marcbachmann/cel-js, re2js) a project has through kubesmith, its
 * dev dependency, and an operator's image does without.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ResourceKind } from '../kinds.js';
import type { CrdVersion } from '../validation/crd.js';
import type * as Validator from '../validation/validate.js';
import type { FieldProblem } from '../validation/values.js';

/** Where a project's CRDs are, from its root: what `kubesmith manifests` writes. */
const CRD_BASES_DIR = 'config/crd/bases';

/** CRD versions by `apiVersion` and kind, as loadCrds reads them. */
export class Crds {
  /** @internal */
  constructor(
    /** `group/version Kind` -> the version's schema, and the CRD's `Kind.group` for messages. */
    private readonly versions: ReadonlyMap<string, CrdVersion & { qualifiedKind: string }>,
  ) {}

  /** The `apiVersion Kind` pairs these CRDs serve, for messages and assertions. */
  kinds(): string[] {
    return [...this.versions.keys()].sort();
  }

  /** @internal */
  versionOf(apiVersion: string, kind: string): (CrdVersion & { qualifiedKind: string }) | undefined {
    return this.versions.get(`${apiVersion} ${kind}`);
  }
}

/**
 * The CRDs of `sources`: each a YAML (or JSON) file or a directory of them (not recursive, as envtest reads
 * its CRD paths), as a path or a file URL (`new URL('../../config/crd/bases/', import.meta.url)`), or a
 * CRD object. Anything else in them is an error.
 */
export async function loadCrds(...sources: (string | URL | object)[]): Promise<Crds> {
  const [{ readDocuments }, { crdVersions, notACrd }] = await Promise.all([
    import('../envtest/internal/manifests.js'),
    import('../validation/crd.js'),
  ]);
  const versions = new Map<string, CrdVersion & { qualifiedKind: string }>();
  for (const given of sources) {
    const source = given instanceof URL ? fileURLToPath(given) : given;
    const documents = typeof source === 'string' ? readDocuments([source], true, 'CRD') : [source];
    for (const document of documents) {
      const why = notACrd(document);
      if (why !== undefined)
        throw new Error(
          `loadCrds: ${typeof source === 'string' ? `${source}: ` : ''}${why}; give the CRDs kubesmith manifests writes (${CRD_BASES_DIR})`,
        );
      const crd = crdVersions(document);
      for (const [name, version] of crd.versions)
        versions.set(`${crd.group}/${name} ${crd.kind}`, {
          ...version,
          qualifiedKind: `${crd.kind}.${crd.group}`,
        });
    }
  }
  return new Crds(versions);
}

/** The project's CRDs, read once per directory. */
const projectCrds = new Map<string, Promise<Crds>>();

/** The API server's cause of a field error: the field, its reason, and the message after the field. */
export interface FieldCause {
  /** `spec.replicas`; `<nil>` where the API server names no field. */
  field: string;
  /** `FieldValueInvalid`, `FieldValueRequired`, `FieldValueNotSupported`, `FieldValueTooLong`... */
  reason: string;
  /** `Invalid value: 0: spec.replicas in body should be greater than or equal to 1` */
  message: string;
}

export interface Validation<T> {
  /** Whether the API server would take the object. */
  valid: boolean;
  /** Each field error as the API server says it: `spec.replicas: Invalid value: 0: spec.replicas in body ...`. */
  errors: string[];
  /** The same errors as the Status's `details.causes`. */
  causes: FieldCause[];
  /** The Status message of the 422 Invalid answer (`Guestbook.webapp.example.com "a" is invalid: ...`). */
  message?: string;
  /** The API server's warnings: unknown fields it prunes (`unknown field "spec.colour"`), failing rules it ratchets. */
  warnings: string[];
  /** The object as the API server would store it: defaults applied, unknown fields and nulls pruned. */
  object: T;
}

export interface ValidateOptions {
  /** The stored object: check an update from it (transition rules see `oldSelf`; unchanged values ratchet). */
  old?: object;
  /** The CRDs (loadCrds). Default: the project's config/crd/bases, from the working directory. */
  crds?: Crds;
}

/** The reason of a Status cause, from the message field.Error made (k8s.io/apimachinery field.ErrorType). */
const REASONS: [string, string][] = [
  ['Invalid value', 'FieldValueInvalid'],
  ['Required value', 'FieldValueRequired'],
  ['Unsupported value', 'FieldValueNotSupported'],
  ['Duplicate value', 'FieldValueDuplicate'],
  ['Forbidden', 'FieldValueForbidden'],
  ['Too long', 'FieldValueTooLong'],
  ['Too many', 'FieldValueTooMany'],
];

function causeOf(problem: FieldProblem): FieldCause {
  const reason = REASONS.find(([prefix]) => problem.message.startsWith(prefix))?.[1] ?? 'FieldValueInvalid';
  return { field: problem.path, reason, message: problem.message };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The object with the kind's apiVersion and kind where it has none; an error where it names another. */
function asKind(kind: ResourceKind<unknown>, object: unknown, what: string): Record<string, unknown> {
  if (!isObject(object)) throw new Error(`validate: the ${what} is not an object`);
  for (const [key, expected] of [
    ['apiVersion', kind.apiVersion],
    ['kind', kind.kind],
  ] as const) {
    if (object[key] !== undefined && object[key] !== expected)
      throw new Error(`validate: the ${what} is ${key} ${String(object[key])}, not ${expected}`);
  }
  return { ...object, apiVersion: kind.apiVersion, kind: kind.kind };
}

/** The validator, loaded on first use; a clear error when its optional peers are not installed. */
async function loadValidator(): Promise<typeof Validator> {
  try {
    return await import('../validation/validate.js');
  } catch (error) {
    const missing = /Cannot find (?:module|package) '(@marcbachmann\/cel-js|re2js)'/.exec(String(error))?.[1];
    if (missing === undefined) throw error;
    throw new Error(
      `validate() needs ${missing}, an optional peer of @kubesmith/runtime: npm install --save-dev @marcbachmann/cel-js re2js`,
      { cause: error },
    );
  }
}

/**
 * The API server's verdict on `object` as a new object of `kind` (or, with `old`, as an update of the
 * stored `old`), against the kind's CRD: `expect((await validate(GuestbookKind, obj)).errors).toEqual([...])`.
 * `object` is not changed. Objects without apiVersion and kind get the kind's.
 */
export async function validate<T>(
  kind: ResourceKind<T>,
  object: object,
  options: ValidateOptions = {},
): Promise<Validation<T>> {
  const obj = asKind(kind, object, 'object');
  const old = options.old === undefined ? undefined : asKind(kind, options.old, 'old object');
  const nameOf = (o: Record<string, unknown>) => (isObject(o.metadata) ? o.metadata.name : undefined);
  // An update names its object in the URL: the stored object is that one.
  if (old !== undefined && nameOf(old) !== nameOf(obj))
    throw new Error(
      `validate: the old object is ${JSON.stringify(nameOf(old))}, not ${JSON.stringify(nameOf(obj))}: give the stored version of the same object`,
    );
  let crds = options.crds;
  if (crds === undefined) {
    const dir = path.resolve(CRD_BASES_DIR);
    let loading = projectCrds.get(dir);
    if (loading === undefined) projectCrds.set(dir, (loading = loadCrds(dir)));
    crds = await loading;
  }
  const version = crds.versionOf(kind.apiVersion, kind.kind);
  if (version === undefined)
    throw new Error(
      `validate: no CRD for ${kind.kind} (${kind.apiVersion}) among ${crds.kinds().join(', ') || 'none'}; run kubesmith manifests, or give loadCrds(...) the CRD`,
    );
  const { validateObject } = await loadValidator();
  const verdict = validateObject(obj, version, old);
  const causes = verdict.errors.map(causeOf);
  const errors = causes.map((c) => `${c.field}: ${c.message}`);
  const name = String(nameOf(obj) ?? '');
  return {
    valid: errors.length === 0,
    errors,
    causes,
    ...(errors.length > 0
      ? {
          message: `${version.qualifiedKind} ${JSON.stringify(name)} is invalid: ${errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}`,
        }
      : {}),
    warnings: verdict.warnings.map((w) => w.message),
    object: verdict.object as T,
  };
}
