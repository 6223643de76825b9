/**
 * One run of the generator passes (CRD, RBAC, webhooks) over one shared context, on one thread: over the
 * whole project, or over one thread's share of it (parallel.ts). Returns the files they produce with every
 * diagnostic. It never writes; the caller decides.
 */
import path from 'node:path';
import { sortDiagnostics, type Diagnostic } from '../markers/index.js';
import { ROLE_FILE, WEBHOOK_MANIFESTS_FILE } from '../project/layout.js';
import { kubesmithVersion } from '../version.js';
import { contextOf } from './context.js';
import { listingOf, type Share, type SourceListing } from './sources.js';
import { generateCrds, type GeneratedFile } from './crd.js';
import { rolesFromMarkers } from './rbac.js';
import { webhookConfigurations } from './webhook.js';
import { writeYamlDocuments } from './yaml.js';
import { compileCrdRules, hasRules } from './rules.js';

/** kubectl apply (client-side) stores the object in an annotation, limited to 256 KiB. */
const LAST_APPLIED_LIMIT = 262144;
/**
 * etcd refuses a request larger than its --max-request-bytes, 1.5 MiB by default, so the API server cannot
 * store a CRD larger than that (its own 3 MiB limit on a request body comes later). The CRD's JSON, what a
 * client sends, stands for its size.
 */
const ETCD_REQUEST_LIMIT = 1572864;

export interface GenerateOptions {
  /** The project root (the directory holding PROJECT). */
  root: string;
  /** Which outputs; when none is chosen, all of them. */
  crd?: boolean;
  rbac?: boolean;
  webhook?: boolean;
  /**
   * `manifests --paths DIR`: `root` is DIR, and its `<group>/<version>/*.ts` files hold the kinds (not
   * `src/api` of a project). Only CRDs are generated then. Default: false.
   */
  paths?: boolean;
  /**
   * `--output-dir`: the CRD files are named `<group>_<plural>.yaml`, relative to that directory (as
   * controller-gen's `output:crd:dir=`), not `config/crd/bases/...` relative to the root. Default: false.
   */
  flatCrds?: boolean;
  /** Cut descriptions longer than this (0 drops them). Default: no limit. */
  maxDescLen?: number;
  /** Written into the CRDs' `kubesmith.dev/version` annotation. Default: this kubesmith's version. */
  version?: string;
  /**
   * Sources not yet on disk (path relative to the root -> content), read instead of the disk: a scaffold's
   * plan. Default: none, the files on disk.
   */
  sources?: ReadonlyMap<string, string>;
  /**
   * Called with each file as soon as it is generated, before the diagnostics are complete: the CLI starts
   * writing it to a temporary name (StagedWrite), and renames it into place only if no error was found. The
   * event loop gets a turn after each CRD, so that those writes go on meanwhile. Default: none.
   */
  onFile?: (file: ManifestFile) => void;
}

export interface ManifestFile {
  /** Relative to the root, with `/`. */
  path: string;
  content: string;
}

export interface GenerateResult {
  files: ManifestFile[];
  diagnostics: Diagnostic[];
}

/**
 * The whole project's manifests, or with `share` only its kinds' CRDs (and, when the share has the other
 * sources, the role and the webhook configurations).
 */
export async function generate(
  options: GenerateOptions,
  listing: SourceListing = listingOf(options),
  share?: Share,
): Promise<GenerateResult> {
  const all = !options.paths && !options.crd && !options.rbac && !options.webhook;
  const handOver = (file: ManifestFile): ManifestFile => {
    options.onFile?.(file);
    return file;
  };
  const ctx = contextOf(listing, undefined, share);
  const files: ManifestFile[] = [];
  const withRules: GeneratedFile[] = [];
  if (all || options.crd || options.paths) {
    for (const file of generateCrds(ctx, {
      version: options.version ?? kubesmithVersion,
      ...(options.maxDescLen !== undefined ? { maxDescLen: options.maxDescLen } : {}),
    })) {
      if (hasRules(file)) withRules.push(file);
      const content = writeYamlDocuments(file.documents);
      files.push(handOver({ path: options.flatCrds ? path.posix.basename(file.path) : file.path, content }));
      // A turn of the event loop, in which the writes of the files handed over so far go on.
      if (options.onFile) await new Promise(setImmediate);
      const size = Buffer.byteLength(content);
      // The JSON is never more than twice the YAML (a tab, `"` or `\` in a string is two bytes in JSON,
      // one in YAML; every key, value and item costs YAML at least what it costs JSON, but two quotes):
      // a CRD under a quarter of the limit as YAML is not made JSON to be measured.
      const jsonSize =
        size * 4 <= ETCD_REQUEST_LIMIT
          ? 0
          : file.documents.reduce<number>(
              (total, document) => total + Buffer.byteLength(JSON.stringify(document)),
              0,
            );
      // At the kind's declaration, or at the top of the file for a CRD that comes from none.
      const at = file.source ?? { file: file.path, line: 1, col: 1 };
      if (jsonSize > ETCD_REQUEST_LIMIT) {
        ctx.report.error(
          at,
          'crd-too-large-for-etcd',
          `${file.path} is ${jsonSize} bytes as JSON, more than the ${ETCD_REQUEST_LIMIT} bytes etcd stores in one object (its --max-request-bytes): the API server would refuse it`,
          'drop descriptions with --max-desc-len 0 (or cut them shorter), or serve fewer versions of the kind',
        );
      } else if (size > LAST_APPLIED_LIMIT && file.source) {
        ctx.report.warning(
          file.source,
          'crd-too-large',
          `${file.path} is ${size} bytes, more than the ${LAST_APPLIED_LIMIT} bytes of the last-applied annotation of client-side kubectl apply`,
          'apply it with kubectl apply --server-side, or shorten descriptions with --max-desc-len',
        );
      }
    }
  }
  // Compiled after the CRDs are handed over (the writes go on meanwhile), and only on schemas the
  // structural checks found sound: a rule over a placeholder says nothing new.
  if (withRules.length > 0 && !ctx.report.hasErrors()) await compileCrdRules(withRules, ctx.report);
  // Collecting markers of every file also reports unknown and misplaced ones, whichever outputs run.
  const packageMarkers = ctx.packageMarkers();
  if (share && !share.others) return { files, diagnostics: sortDiagnostics(ctx.report.diagnostics) };
  if (all || options.rbac) {
    const roles = rolesFromMarkers(packageMarkers);
    if (roles.length > 0) files.push(handOver({ path: ROLE_FILE, content: writeYamlDocuments(roles) }));
  }
  if (all || options.webhook) {
    const documents = webhookConfigurations(packageMarkers, ctx.report);
    if (documents.length > 0) {
      files.push(handOver({ path: WEBHOOK_MANIFESTS_FILE, content: writeYamlDocuments(documents) }));
    }
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, diagnostics: sortDiagnostics(ctx.report.diagnostics) };
}
