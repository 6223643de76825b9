/**
 * The guard: a tiny Node process that outlives the test process just long enough to clean up after it.
 *
 * The test process keeps the write end of the guard's stdin. When the test process ends in any way, SIGKILL
 * included, the kernel closes that pipe; the guard reads end-of-file, kills the process groups it was told
 * about (`pid N` lines) and removes the temporary directory. A normal stop() says `release` first, and the
 * guard exits without touching anything. The guard runs in its own session (detached), so Ctrl-C in the
 * terminal reaches the test process, not the guard.
 */
import { spawn, type ChildProcess } from 'node:child_process';

// CommonJS for `node -e`; argv[1] is the directory to remove.
const GUARD_SOURCE = `
const fs = require('node:fs');
const dir = process.argv[1];
const pids = new Set();
let released = false;
let buffer = '';
function alive(pid) {
  try {
    // A zombie (state Z) is dead for our purpose: in a container nobody may ever reap it.
    return !/^\\d+ \\(.*\\) Z/s.test(fs.readFileSync('/proc/' + pid + '/stat', 'utf8'));
  } catch {
    try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; }
  }
}
function cleanup() {
  if (released) process.exit(0);
  for (const pid of pids) {
    try { process.kill(-pid, 'SIGKILL'); } catch {}
    try { process.kill(pid, 'SIGKILL'); } catch {}
  }
  const deadline = Date.now() + 10000;
  (function wait() {
    if ([...pids].some(alive) && Date.now() < deadline) return void setTimeout(wait, 25);
    try { fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 }); } catch {}
    process.exit(0);
  })();
}
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  let newline;
  while ((newline = buffer.indexOf('\\n')) >= 0) {
    const line = buffer.slice(0, newline);
    buffer = buffer.slice(newline + 1);
    if (line.startsWith('pid ')) pids.add(Number(line.slice(4)));
    else if (line.startsWith('forget ')) pids.delete(Number(line.slice(7)));
    else if (line === 'release') released = true;
  }
});
process.stdin.on('end', cleanup);
process.stdin.on('error', cleanup);
`;

export class Guard {
  private readonly process: ChildProcess;

  constructor(directory: string) {
    this.process = spawn(process.execPath, ['-e', GUARD_SOURCE, directory], {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    // Neither the guard nor its pipe may keep the test process alive.
    this.process.unref();
    (this.process.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    this.process.stdin?.on('error', () => {});
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  /** Kill this process group too if the test process dies. */
  watch(pid: number): void {
    this.process.stdin?.write(`pid ${pid}\n`);
  }

  /** The process has exited and was reaped: its pid may be reused, so never kill it. */
  forget(pid: number): void {
    if (this.process.stdin?.writable) this.process.stdin.write(`forget ${pid}\n`);
  }

  /** Everything was cleaned up: the guard exits and does nothing. */
  release(): void {
    if (this.process.stdin?.writable) this.process.stdin.end('release\n');
  }
}
