/**
 * The errors kubesmith reports to its users. Each carries the exit code of the CLI contract
 * (DESIGN §6): 1 for a problem in the user's project or input, 2 for a usage error, 3 for drift.
 */

export const ExitCode = {
  ok: 0,
  error: 1,
  usage: 2,
  drift: 3,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** An error the user can fix: printed as one line, plus a hint saying what to do. */
export class KubesmithError extends Error {
  readonly exitCode: ExitCode;
  readonly hint: string | undefined;
  /** More of the failure for `--json` (the stale files of `manifests --check`, diagnostics). */
  readonly details: Record<string, unknown> | undefined;

  constructor(
    message: string,
    options: { hint?: string; exitCode?: ExitCode; cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'KubesmithError';
    this.hint = options.hint;
    this.exitCode = options.exitCode ?? ExitCode.error;
    this.details = options.details;
  }
}

/** The command line itself is wrong: an unknown flag, a missing value, a bad combination. */
export class UsageError extends KubesmithError {
  constructor(message: string, hint?: string) {
    super(message, { hint, exitCode: ExitCode.usage });
    this.name = 'UsageError';
  }
}
