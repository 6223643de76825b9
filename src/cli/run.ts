/** `kubesmith run`: the manager on this machine against the current kubeconfig context (docs/run.md). */
import { isIP } from 'node:net';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { CommandContext } from './main.js';

interface RunFlags {
  webhooks: boolean;
  watch: boolean;
  installCrds: boolean;
  namespace?: string;
  webhookHost: string;
  webhookPort?: number;
}

const HELP = `
Builds the project (tsconfig.build.json) and runs dist/main.js against the kubeconfig's current context,
printing the context and server. Flags after -- go to the manager.

With --webhooks, a CA and serving certificate are made for the run, the manager serves its webhooks on a
local port, and the cluster's webhook configurations (config/webhook/manifests.yaml) and the conversion of
the CRDs PROJECT records with a conversion webhook point at https://<webhook-host>:<port>. Every object run
changes is put back when it ends (Ctrl-C, SIGTERM, the manager's exit); after a run killed with SIGKILL,
the next run puts them back first. The record is .kubesmith/run/state.json.

--webhook-host: 127.0.0.1 suits a control plane on this machine (envtest, kind, k3d with host networking);
give the address the API server reaches this machine on otherwise, such as host.docker.internal.

Examples:
  $ kubesmith run
  $ kubesmith run --install-crds --webhooks --watch
  $ kubesmith run --namespace shop -- --leader-elect --health-probe-bind-address=:9081
  $ kubesmith run --webhooks --webhook-host host.docker.internal`;

function parsePort(value: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) < 1 || Number(value) > 65535)
    throw new InvalidArgumentError('expected a port number from 1 to 65535.');
  return Number(value);
}

function parseNamespace(value: string): string {
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(value))
    throw new InvalidArgumentError(
      'expected a namespace name (lower-case letters, digits and -, at most 63).',
    );
  return value;
}

function parseHost(value: string): string {
  const hostname =
    /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/i;
  if (isIP(value) === 0 && !hostname.test(value))
    throw new InvalidArgumentError('expected a host name or an IP address.');
  return value;
}

export function registerRun(program: Command, contextFor: (command: Command) => CommandContext): void {
  program
    .command('run')
    .description('build and run the manager against the current kubeconfig context (--webhooks, --watch)')
    .argument('[args...]', 'flags for the manager, after --')
    .option('--webhooks', 'serve the webhooks locally and point the cluster at them for the run', false)
    .option('--watch', 'rebuild and restart the manager when a source changes', false)
    .option('--install-crds', 'server-side apply the CRDs of config/crd/bases first', false)
    .option('--namespace <ns>', 'watch only this namespace (WATCH_NAMESPACE)', parseNamespace)
    .option('--webhook-host <host>', 'the host the API server calls the webhooks on', parseHost, '127.0.0.1')
    .option('--webhook-port <port>', 'the local port of the webhooks (default: a free one)', parsePort)
    .addHelpText('after', HELP)
    .action(async (args: string[], flags: RunFlags, command: Command) => {
      const { out, cwd, env } = contextFor(command);
      const { loadProject } = await import('../project/find.js');
      const { runProject } = await import('../run/index.js');
      const { root, config } = await loadProject(cwd);
      const code = await runProject({
        root,
        config,
        env,
        webhooks: flags.webhooks,
        watch: flags.watch,
        installCrds: flags.installCrds,
        ...(flags.namespace ? { namespace: flags.namespace } : {}),
        webhookHost: flags.webhookHost,
        ...(flags.webhookPort ? { webhookPort: flags.webhookPort } : {}),
        args,
        log: {
          info: (line) => out.info(line),
          warn: (line) => out.warn(line),
          error: (line, hint) => out.error(line, hint),
        },
      });
      out.result({ command: 'run', ok: true, exitCode: code });
    });
}
