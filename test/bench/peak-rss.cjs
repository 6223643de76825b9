// Preloaded into every timed process (NODE_OPTIONS=--require): appends the process's peak resident set
// size (KiB) and CPU time (user + system, µs) to BENCH_RSS_FILE when it exits, so that every tool is
// measured the same way, with Node alone (no /usr/bin/time needed).
/* eslint-disable @typescript-eslint/no-require-imports, no-undef -- a CommonJS preload script */
const { appendFileSync } = require('node:fs');

const file = process.env.BENCH_RSS_FILE;
// Preloads run in worker threads too (kubesmith's parallel manifests): the process's usage is the main
// thread's to write, once, when the process exits.
if (file && require('node:worker_threads').isMainThread) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    appendFileSync(file, `${usage.maxRSS} ${usage.userCPUTime + usage.systemCPUTime}\n`);
  });
}
