/**
 * The worker of a run on two threads (parallel.ts): it loads the generator (TypeScript with it) as soon as
 * it starts, while the main thread makes the plan; then it parses the share it is sent, sends what its
 * files say (a Summary), and, once the main thread confirms the plan with the imports of all the API
 * files, generates its share and sends the files and diagnostics, or the message of what it threw.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { parseApiFiles } from '../typescript/api-program.js';
import { generate } from './generate.js';
import { listingOf } from './sources.js';
import type { FromWorker, ToWorker, WorkerOptions } from './parallel.js';
import { summarize } from './shares.js';

const options = workerData as WorkerOptions;
const port = parentPort!;
const send = (message: FromWorker) => port.postMessage(message);
const listing = listingOf(options);
let share: Extract<ToWorker, { share: unknown }>['share'];
let parsed: ReturnType<typeof parseApiFiles> | undefined;

port.on('message', (message: ToWorker) => {
  try {
    if ('share' in message) {
      share = message.share;
      if (!share) return port.close();
      parsed = parseApiFiles(listing.root, share.owned, listing.read);
      send({ summary: summarize(parsed.values()) });
      return;
    }
    if (!message.imports || !share) return port.close();
    generate(options, listing, { ...share, imports: message.imports, ...(parsed ? { parsed } : {}) }).then(
      (result) => send({ result }),
      (error: unknown) => send({ error: String(error) }),
    );
  } catch (error) {
    send({ error: String(error) });
  }
});
