/**
 * The helm binary of the chart tests: KUBESMITH_HELM, else the one `npm run helm` (scripts/helm.mjs)
 * builds into the cache. Missing: undefined after one skip line, or, where envtest is required (CI), an
 * error, so a skip never passes for green in CI.
 */
import { accessSync, constants } from 'node:fs';
import { envtestRequired } from '../../runtime/src/envtest/index.js';
// @ts-expect-error -- a plain .mjs script without types
import { helmCachePath } from '../../scripts/helm.mjs';

export function helmOrSkip(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const helm = env['KUBESMITH_HELM'] || (helmCachePath(env) as string);
  try {
    accessSync(helm, constants.X_OK);
    return helm;
  } catch {
    if (envtestRequired(env)) {
      throw new Error(`no helm at ${helm}: run \`npm run helm\` before the tests (npm test does)`);
    }
    console.warn(`skipping the helm chart tests: no helm at ${helm}; run \`npm run helm\``);
    return undefined;
  }
}
