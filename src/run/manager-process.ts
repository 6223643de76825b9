/** The manager of `kubesmith run`: `node dist/main.js`, its output on run's, stopped as a Deployment stops it. */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { KubesmithError } from '../errors.js';

/** How long a manager may take to stop after SIGTERM (the runtime's graceful shutdown is 30 s) before SIGKILL. */
const STOP_TIMEOUT_MS = 35_000;

/** How long the manager may take to serve its webhooks once started. */
const SERVING_TIMEOUT_MS = 60_000;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class ManagerProcess {
  /** Settles when the process has exited, for whatever reason. */
  readonly exited: Promise<Exit>;
  private stopping = false;

  private constructor(private readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', () => resolve({ code: 127, signal: null }));
    });
  }

  static start(entry: string, args: readonly string[], env: NodeJS.ProcessEnv, cwd: string): ManagerProcess {
    const guard = new URL('./orphan-guard.js', import.meta.url).href;
    const child = spawn(process.execPath, ['--import', guard, entry, ...args], {
      cwd,
      env,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.channel?.unref();
    return new ManagerProcess(child);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether stop() was called: an exit then is not a crash. */
  get stopRequested(): boolean {
    return this.stopping;
  }

  /** SIGTERM, then SIGKILL if it has not exited within STOP_TIMEOUT_MS. */
  async stop(): Promise<Exit> {
    this.stopping = true;
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      const exit = await this.exited;
      clearTimeout(timer);
      return exit;
    }
    return this.exited;
  }

  /** Resolves once `port` accepts connections; throws if the manager exits first, or takes too long. */
  async waitServing(port: number): Promise<void> {
    const deadline = Date.now() + SERVING_TIMEOUT_MS;
    let exited: Exit | undefined;
    void this.exited.then((exit) => (exited = exit));
    for (;;) {
      if (exited)
        throw new KubesmithError(
          `the manager exited (${describeExit(exited)}) before it served its webhooks`,
          {
            hint: 'see its log above',
          },
        );
      if (await accepts(port)) return;
      if (Date.now() > deadline)
        throw new KubesmithError(
          `the manager did not serve its webhooks on port ${port} within ${SERVING_TIMEOUT_MS / 1000} s`,
          {
            hint: 'see its log above: does src/main.ts pass settings.webhookPort and webhookCertPath to the webhook server?',
          },
        );
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

export function describeExit(exit: Exit): string {
  return exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(1_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}
