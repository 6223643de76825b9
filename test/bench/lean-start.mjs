/**
 * The lean-start rows of `npm run bench:runtime`: how long a process takes from its spawn to the point
 * where it can work, and its resident set there (after a GC). A bare Node start, Node importing
 * @kubesmith/runtime, Node importing @kubernetes/client-node, a runtime manager started to synced caches
 * with no objects (start-child.mjs), the floor under it (floor-start-child.mjs: the runtime imported and one
 * HTTPS list sent, nothing else) and controller-runtime's start (its Go binary with a count of 0).
 * Each child prints a first line when it is there (the parent stops its clock at that line), then
 * {"rssMiB": ..., "cpuMs": ...}: its RSS after a GC, and the CPU time (user and system, every thread) it
 * had used at that line, steadier than the wall time on a busy machine; and exits. Rounds are
 * interleaved; each figure is the median of the rounds. With `compare` (the dist/index.js of another
 * build of the runtime, such as the one before a change), its import and its manager's start are two
 * more rows of the same rounds.
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const START_CHILD = fileURLToPath(new URL('./start-child.mjs', import.meta.url));
const FLOOR_CHILD = fileURLToPath(new URL('./floor-start-child.mjs', import.meta.url));
const CHILD_TIMEOUT_MS = 120_000;

/** Node code that prints `ready`, then its resident set after a GC and its CPU time until `ready`. */
const REPORT =
  "const cpu = process.cpuUsage(); process.stdout.write('ready\\n'); globalThis.gc(); " +
  'process.stdout.write(JSON.stringify({ rssMiB: process.memoryUsage.rss() / 2 ** 20, ' +
  "cpuMs: (cpu.user + cpu.system) / 1000 }) + '\\n')";
const importing = (specifier) => `import(${JSON.stringify(specifier)}).then(() => { ${REPORT} })`;

/** Milliseconds from the spawn of `command` to its first line of output, and its reported RSS and CPU. */
function timeToFirstLine(command, args, env) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: CHILD_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    let firstLineMs;
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      if (firstLineMs === undefined && chunk.includes('\n')) firstLineMs = performance.now() - started;
      out += chunk;
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const report = out.trim().split('\n').at(-1);
      if (code !== 0 || firstLineMs === undefined || !report?.startsWith('{')) {
        reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? code}):\n${err}${out}`));
        return;
      }
      const { rssMiB, cpuMs } = JSON.parse(report);
      resolve({ ms: firstLineMs, rssMiB, cpuMs });
    });
  });
}

/**
 * The rows, in this order: each {start, ms, rssMiB, cpuMs} the medians of `rounds` spawns. The manager rows need
 * the Widget CRD installed and no Widget in the API server of `kubeconfigPath`.
 */
export async function leanStartTimes({ kubeconfigPath, controllerRuntime, rounds, compare }) {
  const env = { ...process.env, KUBECONFIG: kubeconfigPath };
  const node =
    (args, childEnv = env) =>
    () =>
      timeToFirstLine(process.execPath, ['--expose-gc', ...args], childEnv);
  const starts = {
    'bare node -e': node(['-e', REPORT]),
    "import('@kubesmith/runtime')": node(['-e', importing('@kubesmith/runtime')]),
    "import('@kubernetes/client-node')": node(['-e', importing('@kubernetes/client-node')]),
    'runtime manager, to caches synced at N=0': node([START_CHILD]),
    'the floor: import the runtime, one HTTPS list': node([FLOOR_CHILD]),
    'controller-runtime, to caches synced at N=0': () =>
      timeToFirstLine(controllerRuntime, [kubeconfigPath, '0'], env),
  };
  if (compare) {
    const url = pathToFileURL(compare).href;
    starts[`import(${compare})`] = node(['-e', importing(url)]);
    starts[`${compare}: manager, to caches synced at N=0`] = node([START_CHILD], {
      ...env,
      KUBESMITH_BENCH_RUNTIME: url,
    });
  }
  const names = Object.keys(starts);
  const runs = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) runs[name].push(await starts[name]());
  }
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  return names.map((start) => ({
    start,
    ms: median(runs[start].map((run) => run.ms)),
    rssMiB: median(runs[start].map((run) => run.rssMiB)),
    cpuMs: median(runs[start].map((run) => run.cpuMs)),
  }));
}
