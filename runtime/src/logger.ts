/** Structured logs: one JSON object a line, as controller-runtime's zap logger writes in production. */

export type Fields = Record<string, unknown>;
export type Level = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(message: string, fields?: Fields): void;
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
  /** A logger that adds `fields` to every line. */
  child(fields: Fields): Logger;
}

const ORDER: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export interface JsonLoggerOptions {
  /** The lowest level written. Default: LOG_LEVEL, else `info`. */
  level?: Level;
  /** Where lines go. Default: stderr. */
  write?: (line: string) => void;
  /** The clock. Default: Date.now. */
  now?: () => number;
}

export function createLogger(options: JsonLoggerOptions = {}, fields: Fields = {}): Logger {
  const envLevel = process.env['LOG_LEVEL'] as Level | undefined;
  const level = options.level ?? (envLevel && envLevel in ORDER ? envLevel : 'info');
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const now = options.now ?? Date.now;
  const log = (lineLevel: Level, message: string, extra?: Fields) => {
    if (ORDER[lineLevel] < ORDER[level]) return;
    const line: Fields = { level: lineLevel, ts: new Date(now()).toISOString(), msg: message, ...fields };
    for (const [key, value] of Object.entries(extra ?? {})) line[key] = serialisable(value);
    write(`${JSON.stringify(line)}\n`);
  };
  return {
    debug: (message, extra) => log('debug', message, extra),
    info: (message, extra) => log('info', message, extra),
    warn: (message, extra) => log('warn', message, extra),
    error: (message, extra) => log('error', message, extra),
    child: (more) => createLogger({ level, write, now }, { ...fields, ...more }),
  };
}

/** Errors do not survive JSON.stringify; keep their message and stack. */
function serialisable(value: unknown): unknown {
  if (value instanceof Error) return { message: value.message, name: value.name, stack: value.stack };
  return value;
}
