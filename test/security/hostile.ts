/**
 * The pieces of the hostile-input property tests: a sandbox with a project and files beside it that no
 * command may touch, text an attacker's pull request would write, and the checks every run must pass.
 *
 * Layout of a sandbox (every run gets a fresh copy of the project, `work/deep/case`):
 *   <root>/victim.txt, <root>/outside/victim.yaml, <root>/outside/g.yaml ...  files outside the project
 *   <root>/work/deep/base/                                                    the project, as scaffolded
 *   <root>/work/deep/case/                                                    the copy a run changes
 * Each victim holds a secret that must never appear in a command's output (`manifests --check` once
 * printed a foreign file in its diff).
 */
import { createHash, randomUUID } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile, lstat, readlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { expect } from 'vitest';
import { HOSTILE } from '../helpers/hostile.js';
import { run, type RunResult } from '../helpers/run.js';

export interface Sandbox {
  root: string;
  base: string;
  secret: string;
  /** Paths of the victims, relative to the root, and their contents. */
  victims: Record<string, string>;
}

/** Files outside the project named the way a computed path would name them. */
const VICTIMS = [
  'victim.txt',
  'victim.yaml',
  'outside/victim.yaml',
  'outside/victim.txt',
  'outside/g.yaml',
  'work/victim.yaml',
  'work/deep/victim.yaml',
  // TypeScript with the secret in a marker: a generator that read it would print the secret in a diagnostic.
  'outside/victim.ts',
];

/** A project made by `init` and `create api` (no npm install), with victims around it. */
export async function makeSandbox(): Promise<Sandbox> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-hostile-'));
  const secret = `SECRET${randomUUID().replaceAll('-', '')}`;
  const victims: Record<string, string> = {};
  for (const victim of VICTIMS) {
    const content = victim.endsWith('.ts')
      ? `/**\n * +kubebuilder:object:root=true\n */\nexport interface Victim {\n  apiVersion: 'x';\n  kind: 'Victim';\n  /** +kubebuilder:validation:MaxLength=${secret} */\n  spec?: string;\n}\n`
      : `${secret} ${victim}\n`;
    await mkdir(path.join(root, path.dirname(victim)), { recursive: true });
    await writeFile(path.join(root, victim), content);
    victims[victim] = content;
  }
  const base = path.join(root, 'work', 'deep', 'base');
  await mkdir(base, { recursive: true });
  await expectOk(run(base, 'init', '--domain', 'example.com', '--skip-install', '--owner', 'The Authors'));
  await expectOk(run(base, 'create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook'));
  return { root, base, secret, victims };
}

async function expectOk(result: Promise<RunResult>): Promise<void> {
  const { code, stderr } = await result;
  expect(code, stderr).toBe(0);
}

/** A fresh copy of the project for one run. */
export async function freshCase(sandbox: Sandbox): Promise<string> {
  const dir = path.join(path.dirname(sandbox.base), 'case');
  await rm(dir, { recursive: true, force: true });
  await cp(sandbox.base, dir, { recursive: true, verbatimSymlinks: true });
  return dir;
}

/** Every file and link below `dir` but `skip` (a directory), by relative path: a hash or a link target. */
export async function fingerprint(dir: string, skip: string): Promise<Map<string, string>> {
  const result = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name);
    if (full === skip || full.startsWith(skip + path.sep)) continue;
    const relative = path.relative(dir, full);
    if (entry.isSymbolicLink()) result.set(relative, `link ${await readlink(full)}`);
    else if (entry.isDirectory()) result.set(relative, 'dir');
    else {
      const info = await lstat(full);
      const hash = createHash('sha256')
        .update(await readFile(full))
        .digest('hex');
      result.set(relative, `${hash} ${info.mode.toString(8)}`);
    }
  }
  return result;
}

/**
 * What every run must satisfy, accepted or refused: nothing outside the case directory changed, no
 * secret in its output, a documented exit code, and output made of whole lines of our own (a diagnostic,
 * an `error:`/`warning:`/`hint:` line, a plan line) with no stack trace.
 */
export function expectContained(
  sandbox: Sandbox,
  before: Map<string, string>,
  after: Map<string, string>,
  result: RunResult,
  what: string,
): void {
  const changed = [...new Set([...before.keys(), ...after.keys()])].filter(
    (key) => before.get(key) !== after.get(key),
  );
  expect(changed, `${what}: files outside the project changed`).toEqual([]);
  expect(result.stdout + result.stderr, `${what}: a file outside the project was printed`).not.toContain(
    sandbox.secret,
  );
  expect([0, 1, 2, 3], `${what}: exit code ${result.code}\n${result.stderr}`).toContain(result.code);
  expectCleanErrors(result, what);
}

/** A line kubesmith prints on stderr: a diagnostic, an error, warning or hint line, or a hint below one. */
const STDERR_LINE = new RegExp(
  [
    String.raw`^(error|warning|hint|note): \S`,
    String.raw`^  hint: \S`,
    // A diagnostic: file:line:col: severity: message
    String.raw`^[^\s:][^:]*:\d+:\d+: (error|warning): \S`,
    // A line of the plan (`create     config/...`), and what to do next.
    String.raw`^(create|created|overwrite|update|updated|remove|removed|unchanged|conflict|skip|insert) +\S`,
    String.raw`^Next: \S`,
    String.raw`^manifests are up to date \(\d+ files?\)$`,
  ].join('|'),
);

export function expectCleanErrors(result: RunResult, what: string): void {
  const lines = result.stderr.split('\n').filter((line) => line !== '');
  for (const line of lines) {
    expect(
      line,
      `${what}: a stray stderr line (user text printed raw, or a stack trace)\n${result.stderr}`,
    ).toMatch(STDERR_LINE);
  }
  expect(result.stderr, `${what}: an unexpected failure`).not.toMatch(/run again with --verbose for details/);
  // eslint-disable-next-line no-control-regex -- a control character of the input printed raw
  expect(result.stderr, `${what}: a raw control character`).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  if (result.code !== 0) {
    expect(
      lines.filter((line) => line.startsWith('error: ')),
      `${what}: a failure ends with exactly one error line\n${result.stderr}`,
    ).toHaveLength(1);
  }
}

/** Runs `args` in a fresh case after `prepare`, and checks it kept to the case directory. */
export async function runContained(
  sandbox: Sandbox,
  prepare: (dir: string) => Promise<void>,
  args: readonly string[],
  what: string,
): Promise<RunResult> {
  const dir = await freshCase(sandbox);
  await prepare(dir);
  const before = await fingerprint(sandbox.root, dir);
  const result = await run(dir, ...args);
  const after = await fingerprint(sandbox.root, dir);
  expectContained(sandbox, before, after, result, `${what} (kubesmith ${args.join(' ')})`);
  return result;
}

/**
 * Text an attacker would try where a name is expected: path climbs, absolute paths, separators of both
 * systems, URL escapes, template and comment delimiters, YAML indicators, line breaks, and a little of
 * anything, joined into one string.
 */
export function hostileText(sandbox: Sandbox): fc.Arbitrary<string> {
  const piece = fc.oneof(
    fc.constantFrom(
      '..',
      '.',
      '../',
      '../../',
      '../../../../../../../../',
      '/',
      '\\',
      '..\\',
      '%2e%2e%2f',
      '~',
      '\0',
      '\n',
      '\r\n',
      '\u001b[2J',
      '\u2028',
      '*/',
      '/*',
      '${',
      '`',
      ': ',
      '&a',
      '*a',
      '!!js',
      ',',
      '=',
      ';',
      'victim',
      'victim.yaml',
      'outside/victim',
      'outside/g',
      'g',
      'Guestbook',
      'webapp',
      path.join(sandbox.root, 'outside', 'victim'),
      // What means something to Go templates, YAML and the chart writer (the chart tests' vocabulary).
      ...HOSTILE,
    ),
    fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/),
    fc.string({ maxLength: 6 }),
  );
  // A climb to a victim: a few pieces rarely line up into one, and it is the attack that matters most.
  const climb = fc
    .tuple(
      fc.constantFrom('', 'a/', './', 'a\\'),
      fc.integer({ min: 1, max: 9 }),
      fc.constantFrom('/', '\\'),
      fc.constantFrom('victim', 'outside/victim', 'outside/g', 'work/victim'),
    )
    .map(([prefix, depth, separator, name]) => `${prefix}${`..${separator}`.repeat(depth)}${name}`);
  return fc.oneof(
    {
      weight: 3,
      arbitrary: fc.array(piece, { minLength: 1, maxLength: 6 }).map((pieces) => pieces.join('')),
    },
    { weight: 1, arbitrary: climb },
  );
}

/** The number of cases each property tries: KUBESMITH_PROPERTY_RUNS, else `fallback`. */
export function propertyRuns(fallback: number): number {
  const value = Number(process.env['KUBESMITH_PROPERTY_RUNS']);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

/** Tells how many cases a property tried: the closing note of a run quotes it. */
export function logRuns(name: string, runs: number): void {
  console.log(`property "${name}": ${runs} generated cases, nothing outside the project changed`);
}
