// Preloaded into every timed process (NODE_OPTIONS=--require): writes the process's peak resident set
// size in KiB to BENCH_RSS_FILE when it exits, so every tool is measured the same way, with Node alone.
/* eslint-disable @typescript-eslint/no-require-imports, no-undef -- a CommonJS preload script */
const { appendFileSync } = require('node:fs');

const file = process.env.BENCH_RSS_FILE;
if (file) {
  process.on('exit', () => appendFileSync(file, `${process.resourceUsage().maxRSS}\n`));
}
