/**
 * What the CLI prints. Results go to stdout (as JSON with --json), logs and errors to stderr,
 * colour only on a TTY and never with NO_COLOR or --no-color.
 */
import { styleText } from 'node:util';
import { printable } from '../printable.js';

export interface OutputOptions {
  /** Print a machine-readable result on stdout instead of human text. Default: false. */
  json?: boolean;
  /** Print debug lines and stack traces. Default: false. */
  verbose?: boolean;
  /** Use ANSI colours. Default: stderr is a TTY and NO_COLOR is unset. */
  color?: boolean;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

type Style = 'red' | 'green' | 'yellow' | 'cyan' | 'dim' | 'bold';

export class Output {
  readonly json: boolean;
  readonly verbose: boolean;
  readonly color: boolean;
  private readonly stdout: NodeJS.WritableStream;
  private readonly stderr: NodeJS.WritableStream;
  private transientShown = false;

  constructor(options: OutputOptions = {}) {
    this.json = options.json ?? false;
    this.verbose = options.verbose ?? false;
    this.stdout = options.stdout ?? process.stdout;
    this.stderr = options.stderr ?? process.stderr;
    this.color = options.color ?? defaultColor(this.stderr);
  }

  style(style: Style, text: string): string {
    return this.color ? styleText(style, text, { validateStream: false }) : text;
  }

  /** Whether stderr is a terminal, where a status line can be redrawn in place (see transient()). */
  get interactive(): boolean {
    return (this.stderr as { isTTY?: boolean }).isTTY === true;
  }

  /** A status line that replaces the previous one, for terminals only; '' clears it. */
  transient(message: string): void {
    this.stderr.write(`\r\x1b[2K${message}`);
    this.transientShown = message !== '';
  }

  /** A progress or information line for people; on stderr so stdout stays parseable. */
  info(message: string): void {
    this.clearTransient();
    this.stderr.write(`${message}\n`);
  }

  warn(message: string): void {
    this.clearTransient();
    this.stderr.write(`${this.style('yellow', 'warning:')} ${printable(message)}\n`);
  }

  debug(message: string): void {
    if (this.verbose) this.stderr.write(`${this.style('dim', message)}\n`);
  }

  error(message: string, hint?: string): void {
    this.clearTransient();
    this.stderr.write(`${this.style('red', 'error:')} ${printable(message)}\n`);
    if (hint) this.stderr.write(`${this.style('dim', 'hint:')} ${printable(hint)}\n`);
  }

  private clearTransient(): void {
    if (this.transientShown) this.transient('');
  }

  /** Human-readable result text, on stdout. Suppressed with --json. */
  print(text: string): void {
    if (!this.json) this.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** The machine-readable result, on stdout. Only with --json. */
  result(value: unknown): void {
    if (this.json) this.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }
}

function defaultColor(stream: NodeJS.WritableStream): boolean {
  if (process.env['NO_COLOR'] !== undefined && process.env['NO_COLOR'] !== '') return false;
  if (process.env['FORCE_COLOR'] !== undefined && process.env['FORCE_COLOR'] !== '0') return true;
  return (stream as { isTTY?: boolean }).isTTY === true;
}
