/**
 * The kubesmith command line: commander wiring only. Each command lives in its own module and loads the
 * heavy layers (handlebars, ts-morph) lazily, inside its action, so `kubesmith --help` stays fast.
 */
import { Command, CommanderError, Option } from 'commander';
import { ExitCode, KubesmithError } from '../errors.js';
import { kubesmithVersion } from '../version.js';
import { Output } from './output.js';
import { printable } from '../printable.js';

type Register = (program: Command, contextFor: (command: Command) => CommandContext) => void;

/**
 * Each command's module, by the names it registers, in the order `--help` lists them. Loaded when needed:
 * a run of one command loads only its own (the others' modules are a third of the CLI's start-up).
 */
const COMMANDS: readonly { names: readonly string[]; load: () => Promise<Register> }[] = [
  { names: ['init'], load: async () => (await import('./init.js')).registerInit },
  { names: ['create'], load: async () => (await import('./create.js')).registerCreate },
  { names: ['manifests'], load: async () => (await import('./manifests.js')).registerManifests },
  { names: ['envtest'], load: async () => (await import('./envtest.js')).registerEnvtest },
  {
    names: ['build-installer'],
    load: async () => (await import('./build-installer.js')).registerBuildInstaller,
  },
  { names: ['helm-chart', 'edit'], load: async () => (await import('./helm-chart.js')).registerHelmChart },
  { names: ['alpha'], load: async () => (await import('./alpha.js')).registerAlpha },
  { names: ['import'], load: async () => (await import('./import.js')).registerImport },
  { names: ['validate'], load: async () => (await import('./validate.js')).registerValidate },
  { names: ['run'], load: async () => (await import('./run.js')).registerRun },
];

/** The options a program takes before its subcommand's name (withGlobalOptions); none takes a value. */
const GLOBAL_FLAGS = new Set(['--no-color', '--verbose', '--json']);

/**
 * The commands to register for `args` (the arguments after the script): only the one named, when the first
 * argument that is not a global flag names one; all of them otherwise (`--help`, `help`, `--version`, a
 * misspelled command that commander suggests a name for, no command at all).
 */
function commandsFor(args: readonly string[]): readonly { load: () => Promise<Register> }[] {
  const name = args.find((arg) => !GLOBAL_FLAGS.has(arg));
  const named = COMMANDS.find((command) => name !== undefined && command.names.includes(name));
  return named ? [named] : COMMANDS;
}

/** Options every command accepts. */
export interface GlobalOptions {
  color: boolean;
  verbose: boolean;
  json: boolean;
}

/** What a command's action receives besides its own flags. */
export interface CommandContext {
  out: Output;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** What `-` reads (import crd). */
  stdin: NodeJS.ReadableStream;
}

export interface MainIo {
  cwd?: string;
  /** Default: process.env. */
  env?: NodeJS.ProcessEnv;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  /** Default: process.stdin. */
  stdin?: NodeJS.ReadableStream;
}

/** Runs kubesmith with `argv` (as process.argv: node, script, args...) and returns the exit code. */
export async function main(argv: readonly string[], io: MainIo = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  // Until a command's own options are parsed (a usage error stops before), the raw flags decide.
  let out = new Output({
    stdout,
    stderr,
    verbose: argv.includes('--verbose'),
    json: argv.includes('--json'),
  });
  const contextFor = (command: Command): CommandContext => {
    const globals = globalOptions(command);
    out = new Output({
      stdout,
      stderr,
      json: globals.json,
      verbose: globals.verbose,
      ...(globals.color === false ? { color: false } : {}),
    });
    return {
      out,
      cwd: io.cwd ?? process.cwd(),
      env: io.env ?? process.env,
      // Only when asked (import crd -): Node makes process.stdin on first use, a stream over fd 0 (about
      // 5 ms), which no other command reads.
      get stdin() {
        return io.stdin ?? process.stdin;
      },
    };
  };

  try {
    const program = await buildProgram(argv.slice(2), contextFor, { stdout, stderr });
    await program.parseAsync(argv as string[]);
    return ExitCode.ok;
  } catch (error) {
    return report(error, out);
  }
}

async function buildProgram(
  args: readonly string[],
  contextFor: (command: Command) => CommandContext,
  streams: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream },
): Promise<Command> {
  const program = new Command('kubesmith')
    .description('Scaffold and generate Kubernetes operators written in TypeScript.')
    .version(kubesmithVersion, '-V, --version', 'print the kubesmith version')
    // Program options stop at the subcommand, so `create api --version v1` is the API version;
    // the global options are repeated on every command (withGlobalOptions) to work in either place.
    .enablePositionalOptions()
    .showSuggestionAfterError(true)
    .addHelpText(
      'after',
      `
Examples:
  $ kubesmith init --domain example.com
  $ kubesmith create api --group webapp --version v1 --kind Guestbook
  $ kubesmith manifests --check`,
    );
  configure(program, streams);
  withGlobalOptions(program);
  const registers = await Promise.all(commandsFor(args).map((command) => command.load()));
  for (const register of registers) register(program, contextFor);
  program
    .command('version')
    .description('print the kubesmith version')
    .addHelpText('after', '\nExamples:\n  $ kubesmith version\n  $ kubesmith version --json')
    .action((_options: unknown, command: Command) => {
      const { out } = contextFor(command);
      out.print(kubesmithVersion);
      out.result({ version: kubesmithVersion });
    });
  for (const command of leafCommands(program)) withGlobalOptions(command);
  return program;
}

/**
 * The global options of `command` and its ancestors. Commander's optsWithGlobals lets an ancestor's default
 * (`json: false`) hide the flag given after the subcommand, so a flag counts when set at any level.
 */
function globalOptions(command: Command): GlobalOptions {
  const chain: Command[] = [];
  for (let current: Command | null = command; current; current = current.parent) chain.push(current);
  const all = chain.map((item) => item.opts<Partial<GlobalOptions>>());
  return {
    json: all.some((options) => options.json === true),
    verbose: all.some((options) => options.verbose === true),
    color: !all.some((options) => options.color === false),
  };
}

/** --no-color, --verbose and --json, accepted before or after the subcommand name. */
function withGlobalOptions(command: Command): Command {
  return command
    .addOption(new Option('--no-color', 'disable colours (also when NO_COLOR is set)'))
    .option('--verbose', 'print debug output and stack traces', false)
    .option('--json', 'print a machine-readable result on stdout', false);
}

function leafCommands(command: Command): Command[] {
  return command.commands.flatMap((child) => (child.commands.length > 0 ? leafCommands(child) : [child]));
}

const USAGE_HINT = 'add --help for the flags and examples of this command';

/** Makes commander throw instead of exiting, and print through our streams; applies to every subcommand. */
export function configure(
  command: Command,
  streams: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream },
): Command {
  return command
    .exitOverride()
    .showHelpAfterError(`hint: ${USAGE_HINT}`)
    .configureOutput({
      writeOut: (text) => streams.stdout.write(text),
      writeErr: (text) => streams.stderr.write(text),
      // Commander's messages already start with "error:"; we print them as our one-line errors.
      // User text in them (an unknown command's name) is printed as part of that one line.
      outputError: (text, write) => write(`${printable(text.replace(/\n$/, ''))}\n`),
    });
}

/**
 * Prints a failure as one error line and a hint on stderr and, with --json, as
 * `{"ok": false, "error", "hint", "exitCode"}` on stdout; returns the exit code.
 */
function report(error: unknown, out: Output): number {
  if (error instanceof CommanderError) {
    // --help and --version end with a CommanderError whose exit code is 0.
    if (error.exitCode === 0) return ExitCode.ok;
    // Commander has printed its message and hint already.
    const message = error.message.replace(/^error: /, '');
    out.result({ ok: false, error: message, hint: USAGE_HINT, exitCode: ExitCode.usage });
    return ExitCode.usage;
  }
  const known = error instanceof KubesmithError;
  const message = error instanceof Error ? error.message : String(error);
  const hint = known ? error.hint : out.verbose ? undefined : 'run again with --verbose for details';
  const exitCode = known ? error.exitCode : ExitCode.error;
  out.error(message, hint);
  if (out.verbose && error instanceof Error && error.stack) out.debug(error.stack);
  const details = known ? error.details : undefined;
  out.result({ ...details, ok: false, error: message, ...(hint ? { hint } : {}), exitCode });
  return exitCode;
}
