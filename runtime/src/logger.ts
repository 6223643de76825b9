/**
 * Structured logs. In production (stderr not a terminal) one JSON object a line, as controller-runtime's
 * zap logger writes; at a terminal a line for people, as zap's development encoder:
 *
 * ```
 * 2026-11-23T12:00:00.000Z  ERROR  Reconciler error  controller=guestbook namespace=default name=g reconcileID=... error="boom"
 *     Error: boom
 *         at ...
 * ```
 *
 * `LOG_FORMAT=json|text` overrides the choice, `LOG_LEVEL=debug|info|warn|error` sets the lowest level.
 */

export type Fields = Record<string, unknown>;
export type Level = 'debug' | 'info' | 'warn' | 'error';
/** `json`: one JSON object a line; `text`: time, level, message, then key=value fields. */
export type LogFormat = 'json' | 'text';

export interface Logger {
  debug(message: string, fields?: Fields): void;
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
  /** A logger that adds `fields` to every line. */
  child(fields: Fields): Logger;
  /**
   * Whether lines of `level` are written: lets a caller skip building the fields of a line that would be
   * dropped. Optional for your own Logger implementations (absent means yes).
   */
  enabled?(level: Level): boolean;
}

const ORDER: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export interface JsonLoggerOptions {
  /** The lowest level written. Default: LOG_LEVEL, else `info`. */
  level?: Level;
  /** Where lines go. Default: stderr. */
  write?: (line: string) => void;
  /** The clock. Default: Date.now. */
  now?: () => number;
  /**
   * The line format. Default: with `write`, `json`; otherwise `logFormat()`: LOG_FORMAT, else `text` when
   * stderr is a terminal and `json` when it is not.
   */
  format?: LogFormat;
}

/** The format of logs on stderr: LOG_FORMAT (`json` or `text`), else `text` at a terminal, else `json`. */
export function logFormat(
  env: Record<string, string | undefined> = process.env,
  terminal: boolean = process.stderr.isTTY === true,
): LogFormat {
  const chosen = env['LOG_FORMAT']?.toLowerCase();
  if (chosen === 'json' || chosen === 'text') return chosen;
  return terminal ? 'text' : 'json';
}

export function createLogger(options: JsonLoggerOptions = {}, fields: Fields = {}): Logger {
  const envLevel = process.env['LOG_LEVEL'] as Level | undefined;
  const level = options.level ?? (envLevel && envLevel in ORDER ? envLevel : 'info');
  const format = options.format ?? (options.write ? 'json' : logFormat());
  return new FieldLogger(
    {
      threshold: ORDER[level],
      write: options.write ?? ((line: string) => process.stderr.write(line)),
      now: options.now ?? Date.now,
      encode: format === 'text' ? textLine : jsonLine,
    },
    fields,
  );
}

/** Where the lines of a logger and all its children go; settled once, by createLogger. */
interface Sink {
  threshold: number;
  write: (line: string) => void;
  now: () => number;
  encode: (level: Level, ts: string, message: string, fields: Fields, extra?: Fields) => string;
}

/**
 * A logger with its fields. `child()` can run once per reconcile, so it only links to its parent: the
 * fields are merged when a line is written (most children write none at the default level).
 */
class FieldLogger implements Logger {
  constructor(
    private readonly sink: Sink,
    /** Its own fields, or (lazyChild) a function that makes them, called once, for the first line. */
    private own: Fields | (() => Fields),
    private readonly parent?: FieldLogger,
  ) {}

  debug = (message: string, extra?: Fields): void => this.log('debug', message, extra);
  info = (message: string, extra?: Fields): void => this.log('info', message, extra);
  warn = (message: string, extra?: Fields): void => this.log('warn', message, extra);
  error = (message: string, extra?: Fields): void => this.log('error', message, extra);

  child(fields: Fields | (() => Fields)): Logger {
    return new FieldLogger(this.sink, fields, this);
  }

  enabled(level: Level): boolean {
    return ORDER[level] >= this.sink.threshold;
  }

  private log(level: Level, message: string, extra?: Fields): void {
    const sink = this.sink;
    if (ORDER[level] < sink.threshold) return;
    sink.write(sink.encode(level, new Date(sink.now()).toISOString(), message, this.fields(), extra));
  }

  /** The fields of this logger's ancestors, then its own: a child's field overrides its parent's. */
  private fields(): Fields {
    if (typeof this.own === 'function') this.own = this.own();
    return this.parent ? { ...this.parent.fields(), ...this.own } : this.own;
  }
}

/**
 * `parent.child(fields())`, where `fields` runs only when the child writes its first line (for a logger of
 * createLogger's; others get their child at once): a reconcile's logger carries its reconcileID, which is
 * then made only if the reconcile logs.
 */
export function lazyChild(parent: Logger, fields: () => Fields): Logger {
  return parent instanceof FieldLogger ? parent.child(fields) : parent.child(fields());
}

function jsonLine(level: Level, ts: string, message: string, fields: Fields, extra?: Fields): string {
  const line: Fields = { level, ts, msg: message, ...fields };
  for (const [key, value] of Object.entries(extra ?? {})) line[key] = serialisable(value);
  return `${JSON.stringify(line)}\n`;
}

/** Errors do not survive JSON.stringify; keep their message and stack. */
function serialisable(value: unknown): unknown {
  if (value instanceof Error) return { message: value.message, name: value.name, stack: value.stack };
  return value;
}

/**
 * `time  LEVEL  message  key=value ...`, as zap's development (console) encoder, with the stacks of
 * errors on the lines after, indented.
 */
function textLine(level: Level, ts: string, message: string, fields: Fields, extra?: Fields): string {
  const all: Fields = { ...fields, ...extra };
  const pairs: string[] = [];
  const stacks: string[] = [];
  for (const [key, value] of Object.entries(all)) {
    if (value === undefined) continue;
    if (value instanceof Error) {
      pairs.push(`${key}=${JSON.stringify(value.message)}`);
      if (value.stack) stacks.push(value.stack.replace(/^/gm, '    '));
    } else {
      pairs.push(`${key}=${textValue(value)}`);
    }
  }
  const head = `${ts}  ${level.toUpperCase().padEnd(5)}  ${message}`;
  const line = pairs.length > 0 ? `${head}  ${pairs.join(' ')}` : head;
  return `${[line, ...stacks].join('\n')}\n`;
}

/** A bare word when it reads unambiguously, else JSON. */
function textValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=\\]+$/.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
