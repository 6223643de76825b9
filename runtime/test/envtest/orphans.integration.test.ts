/**
 * The test process dies with a control plane running: SIGKILL (no handler can run; the guard process
 * cleans up) and SIGINT (Ctrl-C; the signal handler cleans up). Afterwards no etcd or kube-apiserver may run
 * and the temporary directory must be gone.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBinaryAssets, type Envtest } from '../../src/envtest/index.js';
import { compileEnvtest, isGone, isRunning, waitFor } from './helpers.js';

const assets = findBinaryAssets();
let compiled: Awaited<ReturnType<typeof compileEnvtest>>;
let script: string;

beforeAll(async () => {
  compiled = await compileEnvtest();
  script = path.join(compiled.dir, 'start-and-wait.js');
  // Starts envtest, reports what it started, then waits to be killed.
  await writeFile(
    script,
    [
      "import { startEnvtest } from './envtest/index.js';",
      'const env = await startEnvtest({ binaryAssetsDirectory: process.argv[2] });',
      'process.stdout.write(JSON.stringify({ pids: env.pids, directory: env.directory }) + "\\n");',
      // 'exit': the test process ends normally but forgot stop().
      'if (process.argv[3] === "exit") setTimeout(() => process.exit(0), 100);',
      'else setInterval(() => {}, 60_000);',
    ].join('\n'),
  );
});
afterAll(async () => {
  await compiled?.remove();
});

describe.each(['SIGKILL', 'SIGINT', 'exit'] as const)('a test process ended by %s', (signal) => {
  it('leaves no etcd, no kube-apiserver and no directory', async () => {
    const child = spawn(process.execPath, [script, assets, signal], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once('exit', (_code, sig) => resolve(sig)),
    );
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', () => reject(new Error(`the child exited before starting envtest:\n${stderr}`)));
    });
    const started = JSON.parse(line) as Pick<Envtest, 'pids' | 'directory'>;
    expect(isRunning(started.pids.etcd)).toBe(true);
    expect(isRunning(started.pids.apiServer)).toBe(true);
    expect(existsSync(started.directory)).toBe(true);

    const killedAt = Date.now();
    if (signal === 'exit') expect(await exited).toBe(null);
    else {
      child.kill(signal);
      expect(await exited).toBe(signal);
    }
    await waitFor(
      () => !isRunning(started.pids.etcd) && !isRunning(started.pids.apiServer),
      5_000,
      'etcd and kube-apiserver to die',
    );
    const stoppedMs = Date.now() - killedAt;
    await waitFor(() => !existsSync(started.directory), 5_000, `${started.directory} to be removed`);
    const removedMs = Date.now() - killedAt;
    await waitFor(() => !isRunning(started.pids.guard), 5_000, 'the guard to exit');
    const reaped = isGone(started.pids.etcd) && isGone(started.pids.apiServer);
    console.info(
      `${signal}: processes dead ${stoppedMs} ms after the kill (${reaped ? 'reaped' : 'zombies left for pid 1 to reap'}), ` +
        `directory removed after ${removedMs} ms`,
    );
  }, 90_000);
});

describe('a vitest runner killed with SIGKILL while a test holds a control plane', () => {
  it('leaves no etcd, no kube-apiserver and no directory, although its worker outlives it', async () => {
    const report = path.join(compiled.dir, 'runner-report.json');
    const vitest = fileURLToPath(new URL('../../../node_modules/vitest/vitest.mjs', import.meta.url));
    const config = fileURLToPath(new URL('./fixtures/runner/vitest.config.ts', import.meta.url));
    const runner = spawn(process.execPath, [vitest, 'run', '--config', config], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ENVTEST_REPORT: report, KUBEBUILDER_ASSETS: assets },
    });
    let output = '';
    runner.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    runner.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      runner.once('exit', (_code, sig) => resolve(sig)),
    );
    await waitFor(
      () => existsSync(report) || runner.exitCode !== null,
      60_000,
      `the runner to start envtest:\n${output}`,
    );
    expect(existsSync(report), output).toBe(true);
    const started = JSON.parse(await readFile(report, 'utf8')) as Pick<Envtest, 'pids' | 'directory'> & {
      worker: number;
    };
    expect(isRunning(started.pids.apiServer)).toBe(true);

    const killedAt = Date.now();
    runner.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    try {
      await waitFor(
        () => !isRunning(started.pids.etcd) && !isRunning(started.pids.apiServer),
        5_000,
        'etcd and kube-apiserver to die',
      );
      const stoppedMs = Date.now() - killedAt;
      await waitFor(() => !existsSync(started.directory), 5_000, `${started.directory} to be removed`);
      console.info(
        `runner SIGKILL: processes dead ${stoppedMs} ms after the kill, directory removed after ${Date.now() - killedAt} ms; ` +
          `the vitest worker ${isRunning(started.worker) ? 'still runs (vitest does not stop it)' : 'has exited'}`,
      );
    } finally {
      // The orphaned worker is vitest's, not envtest's, but this test started it.
      try {
        process.kill(started.worker, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }, 90_000);
});
