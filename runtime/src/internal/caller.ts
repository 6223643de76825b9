/**
 * Where the runtime was called from: the first frame of the current stack outside the runtime's own
 * files (and Node's), such as `async WidgetReconciler.reconcile (file:///app/dist/widget.js:42:18)`. For
 * a warning that fires once and should point at the user's line; a stack costs microseconds, so it is not
 * for a hot path. V8's async stack traces carry the awaiting function across an await.
 */
import { nodeUrl } from './node-modules.js';

/** The directory of the runtime's modules: src/ in tests, dist/ when installed (this code is in dist/chunks/). */
const runtimeDir = nodeUrl.fileURLToPath(new URL('..', import.meta.url));
const runtimeUrl = nodeUrl.pathToFileURL(runtimeDir).href;

export function callerOutsideRuntime(): string | undefined {
  const frames = new Error().stack?.split('\n').slice(1) ?? [];
  for (const frame of frames) {
    if (frame.includes(runtimeDir) || frame.includes(runtimeUrl) || frame.includes('node:')) continue;
    return frame.trim().replace(/^at /, '');
  }
  return undefined;
}
