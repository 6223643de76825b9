/**
 * Projects the CLI made, kept in this repository (examples/, testdata/): each is made again from its commands
 * with the CLI of this checkout (build it first: npm run build), in a temporary directory, and compared with
 * the committed copy or written over it. scripts/examples.mjs and scripts/golden.mjs hold the commands;
 * this module does the rest for both:
 *
 *   node scripts/<set>.mjs             writes the result over <dir>/NAME
 *   node scripts/<set>.mjs --check     writes nothing; exit 3 and a list of the files that differ
 *   --dir DIR                          work on DIR instead of <dir> (the tests use a copy)
 *   --only NAME                        one project
 *
 * Only the files a user edits after scaffolding (USER_FILES of each project) may differ from what the CLI
 * makes: they are kept, and copied into the fresh project before its manifests are generated (their markers
 * count). Every other file must be the CLI's, byte for byte, and a file the CLI does not make is drift too.
 * The projects depend on the registry's packages (KUBESMITH_*_SPEC = ^<version>), not on the `.kubesmith/`
 * tarballs a checkout would give them: in this repository they use the workspace runtime. SOURCE_DATE_EPOCH
 * pins their copyright year. No network is used.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(repo, 'bin', 'kubesmith.js');
/** 2026-01-01T00:00:00Z: the copyright year of the projects. */
const SOURCE_DATE_EPOCH = '1767225600';
/** Never compared or copied: what installing, building and testing leave behind. */
const IGNORED = new Set(['node_modules', 'dist', 'package-lock.json', 'coverage', '.kubesmith']);

/**
 * @typedef {{ init: string[], commands: string[][], USER_FILES: string[] }} MadeProject
 *   `init` flags (the project is made in a directory named after it), then each `kubesmith` command.
 * @typedef {{
 *   script: string,
 *   dir: string,
 *   regenerate: string,
 *   projects: Record<string, MadeProject>,
 * }} ProjectSet
 *   `script` and `regenerate` (the npm script) are named in messages; `dir` is relative to the repository.
 */

function fail(message, hint, code = 1) {
  process.stderr.write(`error: ${message}\nhint: ${hint}\n`);
  process.exit(code);
}

function parseArgs(set, argv) {
  const options = { check: false, dir: path.join(repo, set.dir), only: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--check') options.check = true;
    else if (arg === '--dir') options.dir = path.resolve(argv[++i] ?? '');
    else if (arg === '--only') options.only = argv[++i];
    else fail(`unknown argument ${arg}`, `usage: node ${set.script} [--check] [--dir DIR] [--only NAME]`, 2);
  }
  if (options.only !== undefined && !(options.only in set.projects)) {
    fail(`no project named ${options.only}`, `the projects are ${Object.keys(set.projects).join(', ')}`, 2);
  }
  return options;
}

async function kubesmith(cwd, args, env) {
  try {
    await run(process.execPath, [cli, ...args], { cwd, env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    fail(
      `kubesmith ${args.join(' ')} failed: ${
        String(error.stderr || error.message)
          .trim()
          .split('\n')[0]
      }`,
      'build the CLI first (npm run build), then run this again',
    );
  }
}

/** Every file under dir, as relative POSIX paths, leaving out IGNORED directories and files. */
async function files(dir, prefix = '') {
  let entries;
  try {
    entries = await readdir(path.join(dir, prefix), { withFileTypes: true });
  } catch (error) {
    if (error.code === 'ENOENT') return [];
    throw error;
  }
  const found = [];
  for (const entry of entries) {
    if (IGNORED.has(entry.name)) continue;
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) found.push(...(await files(dir, relative)));
    else found.push(relative);
  }
  return found.sort();
}

async function readOptional(file) {
  try {
    return await readFile(file);
  } catch (error) {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Makes the project again in a temporary directory, with the user's files of the existing one. */
async function generate(name, project, dir, temp) {
  const { version } = JSON.parse(await readFile(path.join(repo, 'package.json'), 'utf8'));
  const fresh = path.join(temp, name);
  await mkdir(fresh, { recursive: true });
  const env = {
    ...process.env,
    KUBESMITH_RUNTIME_SPEC: `^${version}`,
    KUBESMITH_CLI_SPEC: `^${version}`,
    SOURCE_DATE_EPOCH,
    NO_COLOR: '1',
  };
  await kubesmith(fresh, ['init', ...project.init, '--skip-install'], env);
  for (const command of project.commands) await kubesmith(fresh, command, env);
  let userFiles = 0;
  for (const file of project.USER_FILES) {
    const content = await readOptional(path.join(dir, name, file));
    if (content === undefined) continue;
    await mkdir(path.dirname(path.join(fresh, file)), { recursive: true });
    await writeFile(path.join(fresh, file), content);
    userFiles++;
  }
  // The user's sources carry markers (RBAC of an edited controller): the manifests follow them.
  if (userFiles > 0) await kubesmith(fresh, ['manifests'], env);
  return fresh;
}

/** The first line (1-based) where two texts differ. */
function firstDifferentLine(a, b) {
  const left = a.toString('utf8').split('\n');
  const right = b.toString('utf8').split('\n');
  let line = 0;
  while (line < left.length && left[line] === right[line]) line++;
  return line + 1;
}

/** The files that differ between the fresh project and the committed one, user files aside. */
async function compare(fresh, current, userFiles) {
  const user = new Set(userFiles);
  const wanted = (await files(fresh)).filter((f) => !user.has(f));
  const have = new Set((await files(current)).filter((f) => !user.has(f)));
  const drift = [];
  for (const file of wanted) {
    const a = await readFile(path.join(fresh, file));
    const b = await readOptional(path.join(current, file));
    if (b === undefined) drift.push({ file, what: 'missing' });
    else if (!a.equals(b)) drift.push({ file, what: `differs from line ${firstDifferentLine(a, b)}` });
  }
  for (const file of have) if (!wanted.includes(file)) drift.push({ file, what: 'not made by the CLI' });
  return { drift, wanted };
}

/** Writes the CLI's files over the committed project's, keeping the user's files (or making them, the first time). */
async function write(fresh, target, project, drift, wanted) {
  for (const { file, what } of drift) {
    if (what === 'not made by the CLI') await rm(path.join(target, file));
  }
  for (const file of [...wanted, ...project.USER_FILES]) {
    const destination = path.join(target, file);
    if (project.USER_FILES.includes(file) && (await readOptional(destination)) !== undefined) continue;
    if ((await readOptional(path.join(fresh, file))) === undefined) continue;
    await mkdir(path.dirname(destination), { recursive: true });
    await cp(path.join(fresh, file), destination);
  }
}

/** The command line of scripts/<set>.mjs: make every project of the set again, then check or write. */
export async function main(set, argv = process.argv.slice(2)) {
  const options = parseArgs(set, argv);
  try {
    await stat(path.join(repo, 'dist', 'cli', 'main.js'));
  } catch {
    fail('the CLI is not built', 'run npm run build first');
  }
  const temp = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-made-projects-'));
  let drifted = 0;
  try {
    for (const [name, project] of Object.entries(set.projects)) {
      if (options.only && options.only !== name) continue;
      const started = Date.now();
      const fresh = await generate(name, project, options.dir, temp);
      const target = path.join(options.dir, name);
      const { drift, wanted } = await compare(fresh, target, project.USER_FILES);
      if (options.check) {
        for (const { file, what } of drift) process.stdout.write(`${set.dir}/${name}/${file}: ${what}\n`);
        drifted += drift.length;
        continue;
      }
      await write(fresh, target, project, drift, wanted);
      process.stderr.write(
        `${set.dir}/${name}: ${drift.length === 0 ? 'unchanged' : `${drift.length} file(s) written`} (${Date.now() - started} ms)\n`,
      );
    }
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
  if (drifted > 0) {
    const userFiles = Object.values(set.projects).some((p) => p.USER_FILES.length > 0)
      ? ` (only the files listed as USER_FILES in ${set.script} may be edited by hand)`
      : ' (no file there is edited by hand)';
    process.stderr.write(
      `error: ${drifted} file(s) of ${set.dir}/ differ from what the CLI makes today\n` +
        `hint: run \`npm run build && ${set.regenerate}\` and review the diff${userFiles}\n`,
    );
    process.exit(3);
  }
}
