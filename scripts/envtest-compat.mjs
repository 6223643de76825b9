#!/usr/bin/env node
/**
 * The compatibility suite (`npm run test:compat`, the last step of `npm test`): the runtime's core
 * integration tests and the golden project's integration tests, on Kubernetes releases besides the default,
 * while the whole suite runs on the default (1.37). `npm test` runs it on the oldest supported release
 * (`compatibilityVersions()` of src/envtest/versions.ts: 1.34), the largest gap from the default;
 * `--versions all` runs it on every supported minor's verified patch (1.34 to 1.37), `--versions
 * 1.35.4,1.36.3` on those named.
 *
 * For each version, `kubesmith envtest --k8s-version <v>` provides etcd, kube-apiserver and kubectl (from the
 * cache, else built from Go modules: one build at a time, since Go's compiler already keeps both cores of a
 * CI machine busy), then one vitest run takes them through KUBEBUILDER_ASSETS. A feature an older server
 * lacks is to be skipped inside its test with the reason (`ctx.skip(condition, note)` on the server's
 * version), never by leaving a file out here.
 *
 *   node scripts/envtest-compat.mjs [--versions all|1.35.4,1.36.3] [--build-only]
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * What the compatibility suite covers: envtest itself (CRDs, defaults, CEL), the client (CRUD, patches,
 * server-side apply), informers (list, watch, streamed lists), field indexes and metadata-only informers
 * (PartialObjectMetadata lists and watches), the priority queue, read-your-own-writes (through the fault
 * proxy delaying the watch), controllers, the manager (probes, leader election), the admission and
 * conversion webhooks called by kube-apiserver, and a generated project's integration tests (the golden
 * project's controller and webhook tests, on its own shared envtest).
 */
export const COMPAT_TESTS = [
  'runtime/test/envtest/envtest.integration.test.ts',
  'runtime/test/integration/client.integration.test.ts',
  'runtime/test/integration/cache-client.integration.test.ts',
  'runtime/test/integration/cache-index.integration.test.ts',
  'runtime/test/integration/priority.integration.test.ts',
  'runtime/test/faults/read-your-writes.integration.test.ts',
  'runtime/test/integration/controller.integration.test.ts',
  'runtime/test/integration/manager.integration.test.ts',
  'runtime/test/webhook/webhook.integration.test.ts',
  'testdata/project/test/',
];

/** Each step's bound: a cold Go build is minutes; a hung proxy or apiserver must not hang CI. */
const BUILD_TIMEOUT_MS = 30 * 60 * 1000;
const TEST_TIMEOUT_MS = 15 * 60 * 1000;

function parseArgs(argv) {
  const options = { versions: undefined, buildOnly: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--build-only') options.buildOnly = true;
    else if (arg === '--versions' && argv[i + 1] !== undefined) options.versions = argv[++i];
    else if (arg.startsWith('--versions=')) options.versions = arg.slice('--versions='.length);
    else {
      console.error(`envtest-compat: unknown argument ${JSON.stringify(arg)}`);
      console.error('hint: node scripts/envtest-compat.mjs [--versions all|1.35.4,1.36.3] [--build-only]');
      process.exit(2);
    }
  }
  return options;
}

/** Runs a command with inherited output; resolves to its exit code (a timeout kills it and counts as 124). */
function run(command, args, { env = process.env, timeoutMs, stdout = 'inherit' }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: repo, env, stdio: ['ignore', stdout, 'inherit'] });
    let out = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk) => (out += chunk));
    const timer = setTimeout(() => {
      console.error(
        `envtest-compat: ${command} ${args.join(' ')} took over ${timeoutMs / 60000} min: stopping it`,
      );
      child.kill('SIGTERM');
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      console.error(`envtest-compat: cannot run ${command}: ${error.message}`);
      resolve({ code: 127, out });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: signal ? 124 : (code ?? 1), out });
    });
  });
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const { compatibilityRun } = await import(path.join(repo, 'dist/envtest/versions.js'));
  let versions;
  try {
    versions = compatibilityRun(options.versions);
  } catch (error) {
    console.error(`envtest-compat: ${error.message}`);
    console.error(
      'hint: pass --versions all, or some of the versions above separated by commas (--versions 1.35.4,1.36.3)',
    );
    process.exit(2);
  }
  const cli = path.join(repo, 'bin/kubesmith.js');

  const dirs = new Map();
  for (const version of versions) {
    const started = Date.now();
    console.error(`envtest-compat: providing the Kubernetes ${version} binaries`);
    const result = await run(
      process.execPath,
      [cli, 'envtest', '--k8s-version', version, '--print', 'path'],
      {
        timeoutMs: BUILD_TIMEOUT_MS,
        stdout: 'pipe',
      },
    );
    if (result.code !== 0) {
      console.error(`envtest-compat: no binaries for Kubernetes ${version} (exit ${result.code})`);
      process.exit(1);
    }
    dirs.set(version, result.out.trim());
    console.error(`envtest-compat: Kubernetes ${version} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  if (options.buildOnly) return;

  const vitest = path.join(repo, 'node_modules/vitest/vitest.mjs');
  const failed = [];
  for (const version of versions) {
    const started = Date.now();
    console.error(`\nenvtest-compat: the compatibility suite on Kubernetes ${version}`);
    const { code } = await run(
      process.execPath,
      [vitest, 'run', '--project', 'kubesmith', '--project', 'project', ...COMPAT_TESTS],
      {
        // The binaries of this version, found first (runtime/src/envtest/binaries.ts); a missing one fails.
        env: { ...process.env, KUBEBUILDER_ASSETS: dirs.get(version), KUBESMITH_REQUIRE_ENVTEST: '1' },
        timeoutMs: TEST_TIMEOUT_MS,
      },
    );
    console.error(
      `envtest-compat: Kubernetes ${version}: ${code === 0 ? 'passed' : `failed (exit ${code})`} in ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    if (code !== 0) failed.push(version);
  }
  if (failed.length > 0) {
    console.error(`envtest-compat: the compatibility suite failed on Kubernetes ${failed.join(', ')}`);
    process.exit(1);
  }
}

await main();
