/**
 * `npm run build -w @kubesmith/runtime`: dist/ from scratch. tsc writes the declarations, one .d.ts per
 * module as before, each with its map into src/ (the types a user's editor follows); rolldown bundles the
 * JavaScript: an entry file each for index, testing and envtest, the code they share in one chunk
 * (dist/chunks/runtime-*.js: one copy of each class for all three), and the modules loaded on demand
 * (certificates, the proxy agent) in chunks of their own. Source maps point into src/, which ships.
 *
 * Why a bundle: Node's ES module loader resolves, reads and compiles each file on its own, in turn; with
 * the ~45 files of tsc's output that was most of what `import('@kubesmith/runtime')` cost a process (a
 * CPU profile shows the loader's resolve and file reads, not the runtime's code). The bundle takes that
 * down to three files (the entry, the shared chunk, rolldown's helpers). Packages (client-node,
 * prom-client, yaml, OpenTelemetry) and Node's own modules stay imports: they are the user's to install
 * and to share.
 *
 * dist/ is removed first: tsc never cleans its outDir, and a stale chunk would ship.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

/**
 * Modules the main entry imports when they are first needed (`await import(...)`): named here so that
 * they stay out of the shared chunk even when another entry imports them outright (envtest imports the
 * certificates), as they load node:crypto's whole ES face.
 */
const ON_DEMAND = ['src/internal/certs.ts', 'src/webhook/internal/certs.ts', 'src/internal/proxy-agent.ts'];

const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
const dist = path.join(root, 'dist');

const posix = (id) => id.split(path.sep).join('/');
/** A module of the runtime's own, outside the testing and envtest entries. */
const isRuntimeSource = (id) =>
  posix(id).startsWith(`${posix(root)}/src/`) && !/\/src\/(testing|envtest)\//.test(posix(id));
const isOnDemand = (id) => ON_DEMAND.some((file) => posix(id) === `${posix(root)}/${file}`);

rmSync(dist, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [
    createRequire(import.meta.url).resolve('typescript/bin/tsc'),
    '-p',
    'tsconfig.build.json',
    '--emitDeclarationOnly',
  ],
  { cwd: root, stdio: 'inherit' },
);
await build({
  cwd: root,
  input: {
    index: 'src/index.ts',
    'testing/index': 'src/testing/index.ts',
    'envtest/index': 'src/envtest/index.ts',
  },
  platform: 'node',
  tsconfig: 'tsconfig.build.json',
  // Every bare specifier (a package or node:*) stays an import; only the runtime's own files are bundled.
  external: (id) => !id.startsWith('.') && !path.isAbsolute(id),
  logLevel: 'warn',
  output: {
    dir: dist,
    format: 'esm',
    sourcemap: true,
    // src/ ships beside dist/: the maps point at it rather than carry a second copy of every source.
    sourcemapExcludeSources: true,
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name]-[hash].js',
    codeSplitting: {
      groups: [
        {
          // What an import of the main entry loads, in one chunk that testing and envtest import too.
          // (dist/index.js re-exports it: a chunk of its own keeps the entry's exports to its own names.)
          name: 'runtime',
          tags: ['$initial'],
          test: (id) => isRuntimeSource(id) && !isOnDemand(id),
        },
      ],
    },
    // No comments: Node reads and parses every byte at the import, and the source maps lead to src/.
    comments: false,
    // Class and function names as written: error names, stack frames and logs show them.
    keepNames: true,
  },
});
