/** `kubesmith envtest`: makes sure etcd, kube-apiserver and kubectl exist for tests, and prints where. */
import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import type { CommandContext } from './main.js';

interface EnvtestFlags {
  k8sVersion?: string;
  binDir?: string;
  indexUrl?: string;
  allowInsecureIndex?: boolean;
  print: 'path' | 'env';
  withControllers?: boolean;
}

// Kept here rather than imported from ../envtest so `kubesmith --help` loads nothing of it.
const DEFAULT_VERSION = '1.37.2';

function parseVersion(value: string): string {
  if (!/^v?\d+\.\d+\.\d+$/.test(value)) throw new InvalidArgumentError('expected a version like 1.37.2.');
  return value.replace(/^v/, '');
}

export function registerEnvtest(program: Command, contextFor: (command: Command) => CommandContext): void {
  program
    .command('envtest')
    .description('provide etcd, kube-apiserver and kubectl for integration tests, and print where they are')
    .option(
      '--k8s-version <version>',
      `Kubernetes version of the binaries (default: ${DEFAULT_VERSION})`,
      parseVersion,
    )
    .option(
      '--bin-dir <dir>',
      'cache directory; the binaries go to <dir>/<version> (default: $XDG_CACHE_HOME/kubesmith/envtest)',
    )
    .option(
      '--with-controllers',
      'also provide kube-controller-manager, kube-scheduler and kwok, for startEnvtest({ controllers: true })',
    )
    .option(
      '--index-url <url>',
      "envtest release index to download from: an https: URL or a path (default: $KUBESMITH_ENVTEST_INDEX_URL, else controller-tools' envtest-releases.yaml)",
    )
    .option(
      '--allow-insecure-index',
      'accept an index and archives over plain http: (the SHA-512 digests of an http index prove nothing)',
    )
    .addOption(
      new Option('--print <what>', 'print the directory (path) or a shell line (env)')
        .choices(['path', 'env'])
        .default('path'),
    )
    .addHelpText(
      'after',
      `
Looks in KUBEBUILDER_ASSETS first (binaries from setup-envtest work), then in the per-version cache,
then downloads them from the envtest release index as setup-envtest does (SHA-512 checked, seconds),
and otherwise builds them from Go modules when go is on PATH (1.34.x to 1.37.x; a few minutes, once).
--with-controllers adds the programs of envtest's cluster mode to the same directory: the release index
has none of them, so they are built from Go modules (a few more minutes, once).
The index comes over https: or from disk, and links to https: URLs (an index on disk also to files in its
directory); --allow-insecure-index accepts plain http: for both, with a warning.

Examples:
  $ kubesmith envtest
  $ eval "$(kubesmith envtest --print env)"
  $ kubesmith envtest --with-controllers
  $ kubesmith envtest --k8s-version 1.34.2 --bin-dir .envtest
  $ kubesmith envtest --k8s-version 1.33.0 --index-url https://mirror.example.com/envtest-releases.yaml
  $ KUBESMITH_ENVTEST_INDEX_URL=/srv/envtest/envtest-releases.yaml kubesmith envtest`,
    )
    .action(async (flags: EnvtestFlags, command: Command) => {
      const { out, cwd } = contextFor(command);
      const path = await import('node:path');
      const { ensureClusterBinaries, ensureEnvtestBinaries } = await import('../envtest/index.js');
      const ensure = flags.withControllers ? ensureClusterBinaries : ensureEnvtestBinaries;
      const result = await ensure({
        version: flags.k8sVersion ?? DEFAULT_VERSION,
        ...(flags.binDir !== undefined ? { binDir: path.resolve(cwd, flags.binDir) } : {}),
        ...(flags.indexUrl !== undefined ? { indexUrl: flags.indexUrl } : {}),
        ...(flags.allowInsecureIndex ? { allowInsecureIndex: true } : {}),
        cwd,
        progress: (line) => out.info(line),
        warn: (line) => out.warn(line),
        ...(out.interactive ? { transient: (line: string) => out.transient(line) } : {}),
        detail: (line) => out.debug(line),
      });
      out.debug(`envtest binaries from ${result.source}: ${result.dir}`);
      out.print(flags.print === 'env' ? `export KUBEBUILDER_ASSETS=${shellQuote(result.dir)}` : result.dir);
      out.result({ command: 'envtest', ok: true, ...result });
    });
}

/** Quotes a path for a POSIX shell only when it needs it. */
function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
