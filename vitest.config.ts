import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

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
    // Most of the suite waits (on npm install, on an apiserver, on a watch timeout) rather than computes:
    // two files at a time even on two cores (vitest's default there is one) cut the run by about a third.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
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
