/**
 * `kubesmith run`: the project built and its manager run on this machine against the kubeconfig's current
 * context; with --install-crds the CRDs applied first; with --webhooks its webhooks served from a local port
 * with a certificate made for the run, and the cluster's webhook configurations and conversion CRDs pointed
 * there; with --watch rebuilt and restarted on every change. Every object run changes in the cluster is
 * recorded first (changes.ts) and put back when run ends: Ctrl-C, SIGTERM, a crash of the manager or of
 * run itself; after a run killed outright, by the next one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import type { ProjectConfig } from '../project/config.js';
import { buildProject, type BuildResult, type ProjectBuild } from './build.js';
import { Changes, restore } from './changes.js';
import { Cluster } from './cluster.js';
import { installCrds } from './crds.js';
import { describeExit, ManagerProcess, type Exit } from './manager-process.js';
import { conversionCrds, namePrefix, readCrds, readWebhookConfigurations } from './manifests.js';
import { loadRuntime, loadTypeScript } from './project-modules.js';
import { prepareRunDir, readState, STATE_FILE } from './state.js';
import { freePort, makeServing, pointAtLocalServer, type Serving } from './webhooks.js';

export interface RunOptions {
  root: string;
  config: ProjectConfig;
  env: NodeJS.ProcessEnv;
  webhooks: boolean;
  watch: boolean;
  installCrds: boolean;
  /** WATCH_NAMESPACE of the manager. */
  namespace?: string;
  /** The host the API server calls the webhooks on. */
  webhookHost: string;
  webhookPort?: number;
  /** The manager's own flags (after `--`). */
  args: readonly string[];
  log: RunLog;
}

export interface RunLog {
  info(line: string): void;
  warn(line: string): void;
  error(line: string, hint?: string): void;
}

/** Ended by a signal: what is running is stopped and the cluster put back. */
class Stopped extends Error {}

/** Runs until a signal or the manager's end; resolves with the exit code, throws a KubesmithError. */
export async function runProject(options: RunOptions): Promise<number> {
  const { root, config, log } = options;
  let stopRequested: (signal: NodeJS.Signals) => void = () => {};
  const stopSignal = new Promise<NodeJS.Signals>((resolve) => (stopRequested = resolve));
  let signalled: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    signalled ??= signal;
    stopRequested(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const checkStopped = () => {
    if (signalled) throw new Stopped();
  };

  let cluster: Cluster | undefined;
  let changes: Changes | undefined;
  let build: ProjectBuild | undefined;
  let manager: ManagerProcess | undefined;
  let runDir: string | undefined;
  let failed = false;
  try {
    // Everything that can be refused is, before the cluster is changed.
    const crds = options.installCrds || options.webhooks ? readCrds(root) : [];
    const configurations = options.webhooks ? readWebhookConfigurations(root, namePrefix(root, config)) : [];
    const conversions = options.webhooks ? conversionCrds(config, crds) : [];
    if (options.webhooks && configurations.length === 0 && conversions.length === 0)
      throw new KubesmithError(
        '--webhooks: the project has no webhooks (none in config/webhook/manifests.yaml, no conversion in PROJECT)',
        {
          hint: 'add one with `kubesmith create webhook`, then `kubesmith manifests`; or run without --webhooks',
        },
      );
    if (options.installCrds && crds.length === 0)
      throw new KubesmithError('--install-crds: the project has no CRDs in config/crd/bases', {
        hint: 'create an API with `kubesmith create api` and run `kubesmith manifests`; or leave out --install-crds',
      });
    const port = options.webhooks ? await freePort(options.webhookPort) : undefined;

    const runtime = await loadRuntime(root);
    cluster = await Cluster.connect(runtime, options.env);
    log.info(`context ${cluster.context ?? '(in-cluster)'}, server ${cluster.server}`);
    checkStopped();

    runDir = prepareRunDir(root);
    await restoreLeftovers(root, cluster, log);
    checkStopped();

    const ts = await loadTypeScript(root);
    const builds = new BuildQueue();
    build = buildProject(ts, root, options.watch, (result) => builds.push(result));
    const first = await Promise.race([builds.next(), stopSignal]);
    if (typeof first === 'string') throw new Stopped();
    if (first.errors.length > 0) {
      for (const error of first.errors) log.info(error);
      throw new KubesmithError(
        `the build failed with ${first.errors.length} error${first.errors.length === 1 ? '' : 's'}`,
        {
          hint: 'fix them (above) and run again',
        },
      );
    }
    log.info(`built in ${first.ms} ms`);

    changes = new Changes(root, cluster);
    if (options.installCrds) await installCrds(cluster, crds, log.info);
    checkStopped();

    const serving =
      port === undefined ? undefined : await makeServing(runtime, root, options.webhookHost, port);
    const managerArgs = [
      ...(serving ? ['--webhook-cert-path', serving.certDir, '--webhook-port', String(serving.port)] : []),
      ...options.args,
    ];
    const managerEnv = {
      // Without --webhooks nothing serves them: the manager is told to leave them out (the generated
      // main.ts reads ENABLE_WEBHOOKS, kubebuilder's), unless the environment says otherwise. With them, no
      // drain when it stops: the API server calls this port alone, and the restarted manager needs it at
      // once (a project scaffolded before WEBHOOK_SHUTDOWN_DELAY_MS ignores it).
      ...(serving ? { WEBHOOK_SHUTDOWN_DELAY_MS: '0' } : { ENABLE_WEBHOOKS: 'false' }),
      ...options.env,
      ...(options.namespace ? { WATCH_NAMESPACE: options.namespace } : {}),
    };
    const startManager = async (entry: string): Promise<ManagerProcess> => {
      const started = ManagerProcess.start(entry, managerArgs, managerEnv, root);
      if (serving) await started.waitServing(serving.port);
      return started;
    };

    manager = await startManager(first.entry);
    if (serving) {
      await pointAtLocalServer(changes, serving, configurations, conversions);
      log.info(
        `webhooks served at ${urlOf(serving)}: ${[
          ...configurations.map((c) => c.name),
          ...conversions.map((name) => `${name} (conversion)`),
        ].join(', ')}`,
      );
    }
    log.info(
      `manager running (pid ${manager.pid})${options.watch ? '; watching src/ for changes' : ''}; Ctrl-C stops it`,
    );

    // Until a signal, or the manager's end (without --watch), restarting it after each good build.
    for (;;) {
      const current: ManagerProcess = manager;
      const event = await Promise.race([
        stopSignal.then(() => ({ type: 'signal' as const })),
        current.exited.then((exit) => ({ type: 'exit' as const, exit })),
        builds.next().then((result) => ({ type: 'build' as const, result })),
      ]);
      if (event.type === 'signal') throw new Stopped();
      if (event.type === 'exit') {
        if (!options.watch) throw crashed(event.exit);
        log.warn(`the manager exited (${describeExit(event.exit)}); it starts again after the next change`);
        for (;;) {
          const result = await Promise.race([builds.next(), stopSignal]);
          if (typeof result === 'string') throw new Stopped();
          if (reportedFailure(result, log, 'the manager starts after a build without errors')) continue;
          manager = await startManager(result.entry);
          log.info(`rebuilt in ${result.ms} ms, manager started (pid ${manager.pid})`);
          break;
        }
        continue;
      }
      const result = event.result;
      if (reportedFailure(result, log, 'the manager keeps running the previous build')) continue;
      const restartStarted = performance.now();
      await current.stop();
      manager = await startManager(result.entry);
      log.info(
        `rebuilt in ${result.ms} ms, manager restarted in ${Math.round(performance.now() - restartStarted)} ms (pid ${manager.pid})`,
      );
    }
  } catch (error) {
    if (error instanceof Stopped) return 0;
    failed = true;
    throw error;
  } finally {
    build?.close();
    await manager?.stop();
    let notPutBack: unknown;
    try {
      if (changes && cluster) await changes.restore(log.info);
    } catch (error) {
      notPutBack = error;
    }
    if (runDir) fs.rmSync(path.join(runDir, 'certs'), { recursive: true, force: true });
    cluster?.close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (notPutBack) {
      const message = `could not put everything back: ${(notPutBack as Error).message}`;
      const hint = `run kubesmith run again: it puts back what ${STATE_FILE} lists first`;
      // The run's own failure is the error; this one is said before it. Otherwise it is the error.
      if (failed) log.error(message, hint);
      else throw new KubesmithError(message, { hint }); // eslint-disable-line no-unsafe-finally
    }
  }
}

/** Prints a failed build's errors and what happens now; whether it failed. */
function reportedFailure(result: BuildResult, log: RunLog, consequence: string): boolean {
  if (result.errors.length === 0) return false;
  for (const error of result.errors) log.info(error);
  log.warn(
    `the build failed with ${result.errors.length} error${result.errors.length === 1 ? '' : 's'}: ${consequence}`,
  );
  return true;
}

function crashed(exit: Exit): KubesmithError {
  return new KubesmithError(`the manager exited (${describeExit(exit)})`, {
    hint: 'see its log above; the cluster was put back as it was',
  });
}

function urlOf(serving: Serving): string {
  return `https://${serving.host.includes(':') ? `[${serving.host}]` : serving.host}:${serving.port}`;
}

/** What a previous run killed outright left changed, put back before this run changes anything. */
async function restoreLeftovers(root: string, cluster: Cluster, log: RunLog): Promise<void> {
  const previous = readState(root);
  if (!previous) return;
  if (previous.pid !== process.pid && isAlive(previous.pid))
    throw new KubesmithError(`another kubesmith run (pid ${previous.pid}) is running in this project`, {
      hint: `stop it first; if there is none, delete ${STATE_FILE}`,
    });
  if (previous.server !== cluster.server)
    throw new KubesmithError(
      `a previous run left changes on ${previous.server}${previous.context ? ` (context ${previous.context})` : ''}, not this cluster`,
      {
        hint: `switch back to that context and run again (it puts them back first), or delete ${STATE_FILE}`,
      },
    );
  log.info(`putting back what the previous run (pid ${previous.pid}) left changed`);
  await restore(root, cluster, previous, log.info);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Build results in order; next() waits for one. */
class BuildQueue {
  private readonly results: BuildResult[] = [];
  private waiting: ((result: BuildResult) => void) | undefined;
  private pending: Promise<BuildResult> | undefined;

  push(result: BuildResult): void {
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      this.pending = undefined;
      resolve(result);
    } else this.results.push(result);
  }

  next(): Promise<BuildResult> {
    const queued = this.results.shift();
    if (queued) return Promise.resolve(queued);
    this.pending ??= new Promise((resolve) => (this.waiting = resolve));
    return this.pending;
  }
}
