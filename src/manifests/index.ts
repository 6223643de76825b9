/**
 * `kubesmith manifests` without the CLI: the generator passes (CRD, RBAC, webhooks, generate.ts) over the
 * project, on two threads when `KUBESMITH_MANIFESTS_THREADS=2` asks (parallel.ts), with the same result as on one. Returns
 * the files they produce with every diagnostic. It never writes; the caller decides. The compiler loads
 * only once a worker, if any, is started (parallel.ts).
 */
import type { GenerateOptions, GenerateResult } from './generate.js';
import { forcedThreads, generateOnTwoThreads, wantsThreads } from './parallel.js';
import { listingOf } from './sources.js';

export { formatDiagnostic, isError, type Diagnostic } from '../markers/diagnostics.js';
export type { GenerateOptions, GenerateResult, ManifestFile } from './generate.js';

export async function generateManifests(options: GenerateOptions): Promise<GenerateResult> {
  const listing = listingOf(options);
  if (wantsThreads(listing)) {
    const run = await generateOnTwoThreads(options, listing);
    if ('result' in run) return run.result;
    if (forcedThreads() === '2')
      process.stderr.write(`kubesmith manifests: on one thread: ${run.oneThread}\n`);
  }
  const { generate } = await import('./generate.js');
  return generate(options, listing);
}
