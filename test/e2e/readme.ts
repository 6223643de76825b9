/** The end-to-end tests' view of README.md and of a generated project: commands run the way a user runs them. */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type Options, type Result } from 'execa';

export const repo = fileURLToPath(new URL('../..', import.meta.url));

/** The `sh` blocks of a section of README.md, one array of lines per block. */
export async function readmeBlocks(heading: string): Promise<string[][]> {
  const readme = await readFile(path.join(repo, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README.md has no "## ${heading}" section`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) =>
    match[1]!.split('\n').filter((line) => line.trim() !== ''),
  );
}

/**
 * The environment of a user's shell: this process's, without any KUBESMITH_* variable. `npm link` writes
 * into npm's global prefix; the tests give it one of their own (npm_config_prefix) so that they neither
 * need nor change the machine's.
 */
export function userEnv(globalPrefix: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, npm_config_prefix: globalPrefix, NO_COLOR: '1' };
  for (const name of Object.keys(env)) if (name.startsWith('KUBESMITH_')) delete env[name];
  // Whatever ran the tests (npm test) must not leak into the user's commands: its package's variables, and
  // the node_modules/.bin directories npm put on PATH.
  for (const name of Object.keys(env)) {
    if (name.startsWith('npm_package_') || name.startsWith('npm_lifecycle_')) delete env[name];
  }
  env['PATH'] = (env['PATH'] ?? '')
    .split(path.delimiter)
    .filter((dir) => !/node_modules[\\/]\.bin|node-gyp-bin/.test(dir))
    .join(path.delimiter);
  return env;
}

export interface Step {
  line: string;
  seconds: number;
  output: string;
}

/**
 * A shell session: each line runs in bash, in the directory the previous line left (so `cd` works), and
 * must exit 0. The steps record the time and output of each line.
 */
export class Shell {
  readonly steps: Step[] = [];
  constructor(
    public cwd: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  async run(line: string, timeoutMs: number): Promise<Step> {
    const marker = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-shell-'));
    const pwdFile = path.join(marker, 'pwd');
    const started = Date.now();
    try {
      const result = await this.exec('bash', ['-eo', 'pipefail', '-c', `${line}\npwd > '${pwdFile}'`], {
        timeout: timeoutMs,
      });
      const step = { line, seconds: (Date.now() - started) / 1000, output: String(result.all) };
      this.steps.push(step);
      if (result.exitCode !== 0) {
        throw new Error(`\`${line}\` in ${this.cwd} exited with ${result.exitCode}:\n${step.output}`);
      }
      this.cwd = (await readFile(pwdFile, 'utf8')).trim();
      return step;
    } finally {
      await rm(marker, { recursive: true, force: true });
    }
  }

  /** One command in the session's directory and environment, allowed to fail. */
  exec(command: string, args: string[], options: Options = {}): Promise<Result> {
    return execa(command, args, {
      cwd: this.cwd,
      env: this.env,
      extendEnv: false,
      all: true,
      reject: false,
      stdin: 'ignore',
      ...options,
    });
  }

  timings(): string {
    return this.steps.map((step) => `${step.seconds.toFixed(1).padStart(6)} s  ${step.line}`).join('\n');
  }
}
