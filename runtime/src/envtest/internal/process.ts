/**
 * The control-plane processes: spawned in their own process groups, output to a log file, killed on stop,
 * and killed synchronously when the test process exits or is interrupted while they still run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import type { Guard } from './guard.js';

export class ControlPlaneProcess {
  readonly name: string;
  readonly logFile: string;
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;
  private status: string | undefined;

  constructor(
    name: string,
    binary: string,
    args: string[],
    logFile: string,
    guard: Guard,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.name = name;
    this.logFile = logFile;
    const log = openSync(logFile, 'a');
    try {
      // detached: a new session and process group, so the whole group can be killed at once.
      this.child = spawn(binary, args, { detached: true, stdio: ['ignore', log, log], env });
    } finally {
      closeSync(log);
    }
    const pid = this.child.pid;
    if (pid !== undefined) guard.watch(pid);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.status = signal ? `signal ${signal}` : `code ${code}`;
        if (pid !== undefined) guard.forget(pid);
        resolve();
      });
      // A spawn error (binary missing) emits 'error' and maybe no 'exit'.
      this.child.once('error', (error) => {
        this.status = error.message;
        resolve();
      });
    });
    // A forgotten stop() must not keep the test process alive: the exit handler and the guard clean up.
    this.child.unref();
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** How it ended, once it has: `code 1`, `signal SIGKILL`. */
  get exitStatus(): string | undefined {
    return this.status;
  }

  /** The last lines of its output, for error messages. */
  logTail(lines = 20): string {
    try {
      return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  /** SIGTERM, then SIGKILL after `timeoutMs`; resolves once the process has exited. */
  async stop(timeoutMs: number): Promise<void> {
    if (this.status !== undefined) return;
    this.child.ref();
    this.signal('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>(
      (resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)),
    );
    if ((await Promise.race([this.exited, timeout])) === 'timeout') {
      this.signal('SIGKILL');
      await this.exited;
    }
    clearTimeout(timer);
  }

  /** SIGKILL at once, as a crash; resolves once the process has exited. */
  async kill(): Promise<void> {
    if (this.status !== undefined) return;
    this.child.ref();
    this.signal('SIGKILL');
    await this.exited;
  }

  /** Synchronous, for process 'exit' and signal handlers: no waiting. */
  killNow(): void {
    if (this.status === undefined) this.signal('SIGKILL');
  }

  /** Resolves once the process has exited (and Node has reaped it). */
  waitExit(): Promise<void> {
    return this.exited;
  }

  private signal(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      try {
        process.kill(pid, signal);
      } catch {
        // already gone
      }
    }
  }
}

/** What the process-wide handlers clean up: one entry per running envtest. */
export interface Cleanup {
  /** Kills the processes and removes the directory, synchronously (for 'exit'). */
  cleanupNow(): void;
  /** Kills the processes, waits briefly until they have exited, removes the directory (for signals). */
  cleanupSoon(): Promise<void>;
}

const live = new Set<Cleanup>();
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function onExit(): void {
  for (const entry of live) entry.cleanupNow();
  live.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  const entries = [...live];
  live.clear();
  // A second Ctrl-C finds no handler of ours and ends the process at once.
  uninstall();
  // Waiting for the exits lets Node reap the processes: killed and left to pid 1, they may stay zombies.
  void Promise.allSettled(entries.map((entry) => entry.cleanupSoon())).then(() => {
    // Our listener kept the signal from ending the process; if nobody else handles it, end it as it would have.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  });
}

/**
 * The IPC channel to our parent closed: the parent died. A test worker forked by a runner (vitest's forks
 * pool) outlives a runner killed with SIGKILL, and would keep its control plane running for as long as the
 * test waits; clean up now. The worker process itself is left to the runner.
 */
function onDisconnect(): void {
  const entries = [...live];
  live.clear();
  uninstall();
  void Promise.allSettled(entries.map((entry) => entry.cleanupSoon()));
}

function install(): void {
  process.on('exit', onExit);
  for (const signal of SIGNALS) process.on(signal, onSignal);
  if (process.channel) process.on('disconnect', onDisconnect);
}

function uninstall(): void {
  process.off('exit', onExit);
  for (const signal of SIGNALS) process.off(signal, onSignal);
  process.off('disconnect', onDisconnect);
}

export function register(entry: Cleanup): void {
  if (live.size === 0) install();
  live.add(entry);
}

export function unregister(entry: Cleanup): void {
  if (live.delete(entry) && live.size === 0) uninstall();
}

/** Removes a directory tree, retrying while a just-killed process may still write into it. */
export function removeDirectory(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
}
