/**
 * A cold `manifests` over many kinds on two threads: the main thread and one worker (worker.ts) each parse
 * a share of the API files, build a program over it and generate its kinds, as controller-gen spreads its
 * work over the cores. The result is the one thread's, byte for byte:
 *
 * - a share holds whole kinds, and reads the file-level markers of every API file that may hold one, so it
 *   knows the group, version and defaults of its directories (shares.ts); the main thread's share has the
 *   sources outside the API directory too (rbac, webhook);
 * - files are merged by path and diagnostics sorted without duplicates (sortDiagnostics), as one thread
 *   gives them. When a thread reports an error, the run is made again on one thread: some checks run only
 *   while no error was found (the structural check, CEL), so which errors one thread finds depends on the
 *   order of its work;
 * - only an API whose schemas cannot depend on the order in which the checker made its types is split
 *   (shares.ts, `oneProgramReason`): a union the checker computes (an indexed access, a mapped or
 *   conditional type, a generic instantiated with a union...) lists its members in the order the checker
 *   created them, which the other kinds of the program change. Written unions keep their source order.
 *
 * The exchange: the main thread starts the worker (which loads TypeScript meanwhile), makes the plan and
 * sends the worker its share; each parses its files and the worker sends what they say (a Summary); the
 * main thread confirms the plan and sends the imports of all the API files (the program's declarations of
 * the runtime depend on them), or nothing: then the worker stops, and the main thread runs alone.
 *
 * Off unless `KUBESMITH_MANIFESTS_THREADS=2` (then any project of two API files or more is split, and the
 * run says on stderr why it went back to one thread). Measured side by side on two CPUs shared with other
 * work (load average about 5), two threads cost 25 to 55% more CPU time (the worker's own start and
 * TypeScript, the runtime's declarations parsed again, code that runs cold in its isolate) and were not
 * faster: 1.53 s against 1.09 at 50 small kinds, 2.40 against 1.88 at 200, 2.34 against 2.45 at 200
 * realistic ones. Measured again after the one-thread work of branch genspeed (docs/benchmarks.md,
 * "Results"): 24 to 60% more CPU time and about 57 MiB more peak RSS, for about 3% less wall time on an
 * idle machine (1.46 s against 1.50 at 200 small kinds) and more on a busy one; so it stays opt-in. A
 * worker that fails or throws costs a run on one thread, which reports the error itself if there is one.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { isError, sortDiagnostics } from '../markers/diagnostics.js';
import type { Imports } from '../typescript/declarations.js';
import type { Share, SourceListing } from './sources.js';
import type { GenerateOptions, GenerateResult } from './generate.js';
import type { Summary } from './shares.js';

const WORKER = new URL('./worker.js', import.meta.url);

/** What the main thread sends the worker: first its share (or none: stop), then the imports (or none). */
export type ToWorker =
  { share: Omit<Share, 'imports' | 'parsed'> | undefined } | { imports: Imports | undefined };
/** What the worker sends back: its summary, then its result (or the message of what it threw). */
export type FromWorker = { summary: Summary } | { result: GenerateResult } | { error: string };

/** The options a worker gets (structured-cloneable: no callback). */
export type WorkerOptions = Omit<GenerateOptions, 'onFile'>;

/** `KUBESMITH_MANIFESTS_THREADS`: `2` splits a run over two threads; anything else keeps it on one. */
export const forcedThreads = (): string | undefined => process.env['KUBESMITH_MANIFESTS_THREADS'];

/** Whether to split this run: asked for, with two API files or more, and a compiled worker to start. */
export function wantsThreads(listing: SourceListing): boolean {
  if (forcedThreads() !== '2' || listing.apiFiles.length < 2) return false;
  // Run from the sources (tests), there is no compiled worker to start.
  return existsSync(fileURLToPath(WORKER));
}

/**
 * The run on two threads, or why it must run on one (then the caller runs `generate`): no plan, a plan
 * the syntax does not confirm, a failed worker, or an error reported.
 */
export async function generateOnTwoThreads(
  options: GenerateOptions,
  listing: SourceListing,
): Promise<{ result: GenerateResult } | { oneThread: string }> {
  const { Worker } = await import('node:worker_threads');
  const { onFile, ...workerOptions } = options;
  // Started first: it loads TypeScript while this thread makes the plan.
  // Without the main thread's Node options: some are refused in a worker (`--input-type` of `node -e`).
  const worker = new Worker(WORKER, { workerData: workerOptions satisfies WorkerOptions, execArgv: [] });
  const messages = inbox(worker);
  const send = (message: ToWorker) => worker.postMessage(message);
  try {
    const { generate } = await import('./generate.js');
    const { parseApiFiles } = await import('../typescript/api-program.js');
    const { defaultRegistry } = await import('./registry.js');
    const { confirm, planShares, summarize } = await import('./shares.js');
    const plan = planShares(listing, defaultRegistry());
    if (!plan) {
      send({ share: undefined });
      return { oneThread: 'fewer than two groups of API files' };
    }
    const { packageFiles } = plan;
    send({ share: { owned: plan.owned[1], packageFiles, others: false } });
    const parsed = parseApiFiles(listing.root, plan.owned[0], listing.read);
    const mine = summarize(parsed.values());
    const theirs = await messages.next();
    const imports = theirs && 'summary' in theirs ? confirm([mine, theirs.summary]) : undefined;
    send({ imports });
    if (!imports) {
      const reason = theirs && 'summary' in theirs ? (mine.reason ?? theirs.summary.reason) : undefined;
      if (reason !== undefined) return { oneThread: reason };
      return {
        oneThread: theirs ? 'a name declared in both shares' : `the worker failed: ${messages.failure()}`,
      };
    }
    const own = await generate(workerOptions, listing, {
      owned: plan.owned[0],
      packageFiles,
      others: true,
      imports,
      parsed,
    });
    const other = await messages.next();
    if (!other || !('result' in other))
      return {
        oneThread: `the worker failed: ${other && 'error' in other ? other.error : messages.failure()}`,
      };
    const diagnostics = sortDiagnostics([...own.diagnostics, ...other.result.diagnostics]);
    if (diagnostics.some(isError)) return { oneThread: 'an error was reported' };
    const files = [...own.files, ...other.result.files].sort((a, b) =>
      a.path < b.path ? -1 : a.path > b.path ? 1 : 0,
    );
    for (const file of files) onFile?.(file);
    return { result: { files, diagnostics } };
  } finally {
    void worker.terminate();
  }
}

/** The worker's messages one at a time; undefined once it failed or ended. */
function inbox(worker: Worker): { next(): Promise<FromWorker | undefined>; failure(): string | undefined } {
  const queue: FromWorker[] = [];
  let waiting: ((message: FromWorker | undefined) => void) | undefined;
  let ended = false;
  let failure: string | undefined;
  const end = () => {
    ended = true;
    waiting?.(undefined);
    waiting = undefined;
  };
  worker.on('message', (message: FromWorker) => {
    if (waiting) {
      waiting(message);
      waiting = undefined;
    } else queue.push(message);
  });
  worker.once('error', (error) => {
    failure = error.message;
    end();
  });
  worker.once('exit', end);
  return {
    failure: () => failure,
    next: () =>
      queue.length > 0
        ? Promise.resolve(queue.shift())
        : ended
          ? Promise.resolve(undefined)
          : new Promise((resolve) => (waiting = resolve)),
  };
}
