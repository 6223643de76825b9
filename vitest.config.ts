import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take the longest (a minute or more on CI: each npm-installs or waits out a timeout; then
 * about 40 s). A fresh clone has no record of past durations, so vitest would start the largest files
 * first, and these could start last and keep one worker busy long after the other has finished: they
 * start first, in this order.
 */
const SLOW_FILES = [
  'test/cli/alpha-update.test.ts',
  'test/e2e/quickstart.test.ts',
  'test/e2e/tarball.test.ts',
  'test/run/run.integration.test.ts',
  'runtime/test/faults/watches.integration.test.ts',
  'runtime/test/webhook/self-signed.integration.test.ts',
  'test/shipping/cert-provider-self.integration.test.ts',
  'test/manifests/parallel.test.ts',
];

class SlowFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = SLOW_FILES.findIndex((slow) => file.moduleId.endsWith(`/${slow}`));
      return index === -1 ? SLOW_FILES.length : index;
    };
    // Array.prototype.sort is stable: the other files keep vitest's order (the slowest first when it knows).
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  resolve: {
    // src/typescript/compiler.cts only changes how Node loads @ts-morph/common (require, for speed); Vite
    // cannot transform its `import = require()`, so tests import @ts-morph/common directly.
    alias: [
      { find: /^.*\/compiler\.cjs$/, replacement: '@ts-morph/common' },
      // The CLI's `#validation/*.js` (package.json "imports"): the runtime's validator, from its sources
      // (as tsconfig.json's "kubesmith-source" condition reads them), not the copy `npm run build` makes.
      {
        find: /^#validation\/(.*)\.js$/,
        replacement: fileURLToPath(new URL('./runtime/src/validation/$1.ts', import.meta.url)),
      },
    ],
  },
  test: {
    name: 'kubesmith',
    include: [
      'src/**/*.test.ts',
      'test/**/*.test.ts',
      'runtime/src/**/*.test.ts',
      'runtime/test/**/*.test.ts',
    ],
    exclude: ['**/node_modules/**', '**/dist/**', 'test/fixtures/**'],
    testTimeout: 20_000,
    // The npm installs the tests run (init, npx of a packed CLI, alpha update, a Dockerfile's npm ci) take
    // what npm's cache has without asking the registry whether each package changed: one install of a
    // generated project took 39 s, 12 s with this. A package the cache lacks is still fetched.
    env: { npm_config_prefer_offline: 'true' },
    // Most of the suite waits (on npm install, on an apiserver, on a watch timeout) rather than computes:
    // two files at a time even on two cores (vitest's default there is one) cut the run by about a third.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    sequence: { sequencer: SlowFilesFirst },
    projects: [
      // This file: the tests of the CLI and the runtime.
      './vitest.config.ts',
      // The projects the CLI made run as a user's run, with their own vitest.config.ts: its global setup
      // starts the one envtest their integration tests share.
      'examples/*',
      'testdata/*',
    ],
  },
});
