#!/usr/bin/env node
/**
 * The projects under examples/ are made by the CLI: this script makes each one again, from the commands
 * below, with the CLI of this checkout (build it first: npm run build), and
 *
 *   node scripts/examples.mjs             (npm run examples)        writes the result over examples/NAME
 *   node scripts/examples.mjs --check     (npm run examples:check)  writes nothing; exit 3 and a list of
 *                                                                   the files that differ
 *   --examples-dir DIR                    work on DIR instead of examples/ (the tests use a copy)
 *   --only NAME                           one example
 *
 * Only the files a user edits after scaffolding (USER_FILES of each example) may differ from what the CLI
 * makes: they are kept, and copied into the fresh project before its manifests are generated (their
 * markers count). Every other file must be the CLI's, byte for byte, and a file the CLI does not make is
 * drift too. The projects depend on the registry's packages (KUBESMITH_*_SPEC = ^<version>), not on the
 * `.kubesmith/` tarballs a checkout would give them: in this repository they use the workspace runtime.
 * SOURCE_DATE_EPOCH pins their copyright year.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('..', import.meta.url));
const cli = path.join(repo, 'bin', 'kubesmith.js');
/** 2026-01-01T00:00:00Z: the copyright year of the examples. */
const SOURCE_DATE_EPOCH = '1767225600';
/** Never compared or copied: what installing, building and testing leave behind. */
const IGNORED = new Set(['node_modules', 'dist', 'package-lock.json', 'coverage', '.kubesmith']);

export const EXAMPLES = {
  'pod-labeler': {
    init: ['--domain', 'example.com', '--project-name', 'pod-labeler'],
    commands: [
      [
        'create',
        'api',
        '--group',
        'core',
        '--version',
        'v1',
        '--kind',
        'Pod',
        '--resource=false',
        '--controller',
      ],
    ],
    USER_FILES: [
      'README.md',
      // main.ts passes the controller's cache selector to the manager.
      'src/main.ts',
      'src/controllers/pod.controller.ts',
      'test/controllers/pod.controller.test.ts',
      'test/controllers/pod.controller.integration.test.ts',
    ],
  },
  'demo-application': {
    init: ['--domain', 'example.com', '--project-name', 'demo-application'],
    commands: [
      [
        'create',
        'api',
        '--group',
        'demo',
        '--version',
        'v1',
        '--kind',
        'DemoApplication',
        '--image',
        'nginx:1.27',
        '--image-container-port',
        '80',
        '--service-type',
        'NodePort',
        '--node-port',
        '30002',
      ],
    ],
    USER_FILES: ['README.md'],
  },
  'node-agent': {
    init: ['--domain', 'example.com', '--project-name', 'node-agent'],
    commands: [['create', 'api', '--group', 'agents', '--version', 'v1', '--kind', 'NodeAgent']],
    USER_FILES: [
      'README.md',
      'src/api/agents/v1/nodeagent.types.ts',
      'src/controllers/nodeagent.controller.ts',
      'test/controllers/nodeagent.controller.test.ts',
      'test/controllers/nodeagent.controller.integration.test.ts',
      'config/samples/agents_v1_nodeagent.yaml',
      // The manager's own availability and size: a PodDisruptionBudget, and requests/limits measured.
      'config/manager/kustomization.yaml',
      'config/manager/manager.yaml',
      'config/manager/pdb.yaml',
    ],
  },
};

function parseArgs(argv) {
  const options = { check: false, examplesDir: path.join(repo, 'examples'), only: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--check') options.check = true;
    else if (arg === '--examples-dir') options.examplesDir = path.resolve(argv[++i] ?? '');
    else if (arg === '--only') options.only = argv[++i];
    else
      fail(
        `unknown argument ${arg}`,
        'usage: node scripts/examples.mjs [--check] [--examples-dir DIR] [--only NAME]',
        2,
      );
  }
  if (options.only !== undefined && !(options.only in EXAMPLES))
    fail(`no example named ${options.only}`, `the examples are ${Object.keys(EXAMPLES).join(', ')}`, 2);
  return options;
}

function fail(message, hint, code = 1) {
  process.stderr.write(`error: ${message}\nhint: ${hint}\n`);
  process.exit(code);
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

/** Makes the example again in a temporary directory, with the user's files of the existing one. */
async function generate(name, example, examplesDir, temp) {
  const { version } = JSON.parse(await readFile(path.join(repo, 'package.json'), 'utf8'));
  const dir = path.join(temp, name);
  await mkdir(dir, { recursive: true });
  const env = {
    ...process.env,
    KUBESMITH_RUNTIME_SPEC: `^${version}`,
    KUBESMITH_CLI_SPEC: `^${version}`,
    SOURCE_DATE_EPOCH,
    NO_COLOR: '1',
  };
  await kubesmith(dir, ['init', ...example.init, '--skip-install'], env);
  for (const command of example.commands) await kubesmith(dir, command, env);
  let userFiles = 0;
  for (const file of example.USER_FILES) {
    const content = await readOptional(path.join(examplesDir, name, file));
    if (content === undefined) continue;
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
    userFiles++;
  }
  // The user's sources carry markers (RBAC of an edited controller): the manifests follow them.
  if (userFiles > 0) await kubesmith(dir, ['manifests'], env);
  return dir;
}

/** The files that differ between the fresh project and the example, user files aside. */
async function compare(fresh, current, userFiles) {
  const user = new Set(userFiles);
  const wanted = (await files(fresh)).filter((f) => !user.has(f));
  const have = (await files(current)).filter((f) => !user.has(f));
  const drift = [];
  for (const file of wanted) {
    const a = await readFile(path.join(fresh, file));
    const b = await readOptional(path.join(current, file));
    if (b === undefined) drift.push({ file, what: 'missing' });
    else if (!a.equals(b)) drift.push({ file, what: 'differs' });
  }
  for (const file of have) if (!wanted.includes(file)) drift.push({ file, what: 'not made by the CLI' });
  return { drift, wanted, have };
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  try {
    await stat(path.join(repo, 'dist', 'cli', 'main.js'));
  } catch {
    fail('the CLI is not built', 'run npm run build first');
  }
  const temp = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-examples-'));
  let drifted = 0;
  try {
    for (const [name, example] of Object.entries(EXAMPLES)) {
      if (options.only && options.only !== name) continue;
      const started = Date.now();
      const fresh = await generate(name, example, options.examplesDir, temp);
      const target = path.join(options.examplesDir, name);
      const { drift, wanted } = await compare(fresh, target, example.USER_FILES);
      if (options.check) {
        for (const { file, what } of drift) process.stdout.write(`examples/${name}/${file}: ${what}\n`);
        drifted += drift.length;
        continue;
      }
      // Write: the CLI's files over the example's, the user's files kept (or made, the first time).
      for (const { file, what } of drift) {
        if (what === 'not made by the CLI') await rm(path.join(target, file));
      }
      for (const file of [...wanted, ...example.USER_FILES]) {
        const destination = path.join(target, file);
        if (example.USER_FILES.includes(file) && (await readOptional(destination)) !== undefined) continue;
        if ((await readOptional(path.join(fresh, file))) === undefined) continue;
        await mkdir(path.dirname(destination), { recursive: true });
        await cp(path.join(fresh, file), destination);
      }
      process.stderr.write(
        `examples/${name}: ${drift.length === 0 ? 'unchanged' : `${drift.length} file(s) written`} (${Date.now() - started} ms)\n`,
      );
    }
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
  if (drifted > 0) {
    process.stderr.write(
      `error: ${drifted} file(s) of examples/ differ from what the CLI makes today\nhint: run \`npm run build && npm run examples\` and review the diff (only the files listed as USER_FILES in scripts/examples.mjs may be edited by hand)\n`,
    );
    process.exit(3);
  }
}

await main();
