#!/usr/bin/env node
/**
 * kubesmith and @kubesmith/runtime are released in lockstep: one version number for both, written in
 * several files. This script sets it everywhere at once and checks that the files agree.
 *
 *   node scripts/versions.mjs bump 0.2.0            (npm run version:bump -- 0.2.0)
 *   node scripts/versions.mjs check [--tag v0.2.0] [--repository https://github.com/OWNER/REPO]
 *
 * `check` alone is what `npm test` asks (test/release/versions.test.ts); the release workflow adds the
 * tag it runs for (it must be v<version>, and CHANGELOG.md must have a released heading for it) and the
 * repository it runs in (npm's provenance check rejects a package whose repository.url differs).
 *
 * Plain Node (no dependencies, no build): the release workflow runs it before `npm ci`.
 * Why not `npm version --workspaces --include-workspace-root`: with npm 11 it commits and tags the root
 * package.json only, so the tag points at a commit whose runtime/package.json still has the old version.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const CLI = 'kubesmith';
const RUNTIME = '@kubesmith/runtime';
/** The runtime workspace, as package-lock.json names it. */
const RUNTIME_DIR = 'runtime';
/** Semantic version without build metadata; a version is short, so the input is bounded. */
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;
const MAX_VERSION_LENGTH = 64;

/** What went wrong: one or more [message, hint] pairs, printed as `error:` and `hint:` lines. */
class Failure extends Error {
  /** @param {string | [string, string][]} problems @param {string} [hint] @param {number} [exitCode] */
  constructor(problems, hint = '', exitCode = 1) {
    const list = typeof problems === 'string' ? [[problems, hint]] : problems;
    super(list.map(([message]) => message).join('; '));
    this.problems = list;
    this.exitCode = exitCode;
  }
}

/** @param {string} root @param {string} file */
function readJson(root, file) {
  const full = path.join(root, file);
  try {
    return JSON.parse(readFileSync(full, 'utf8'));
  } catch (error) {
    throw new Failure(
      `cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`,
      `run this from the repository root`,
    );
  }
}

/** npm's own formatting of package.json and package-lock.json, so a bump changes only the versions. */
function formatJson(value) {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Write through a temporary file and a rename: a file is either the old one or the new one. */
function writeAtomic(file, text) {
  const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(temp, text);
    renameSync(temp, file);
  } finally {
    rmSync(temp, { force: true });
  }
}

/** package.json of each example project (examples/NAME/package.json). */
function exampleManifests(root) {
  const dir = path.join(root, 'examples');
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(dir, entry.name, 'package.json')))
    .map((entry) => path.posix.join('examples', entry.name, 'package.json'))
    .sort();
}

/** The dependency sections of an example that name our packages: [section, name] pairs. */
function ourDependencies(manifest) {
  const found = [];
  for (const section of ['dependencies', 'devDependencies', 'peerDependencies']) {
    for (const name of [CLI, RUNTIME])
      if (manifest[section]?.[name] !== undefined) found.push([section, name]);
  }
  return found;
}

/** Every place the version is written: [file, where in it, value]. */
function versionSites(root) {
  const sites = [];
  const cli = readJson(root, 'package.json');
  const runtime = readJson(root, path.join(RUNTIME_DIR, 'package.json'));
  sites.push(['package.json', 'version', cli.version]);
  sites.push([`${RUNTIME_DIR}/package.json`, 'version', runtime.version]);
  if (existsSync(path.join(root, 'package-lock.json'))) {
    const lock = readJson(root, 'package-lock.json');
    sites.push(['package-lock.json', 'version', lock.version]);
    sites.push(['package-lock.json', 'packages[""].version', lock.packages?.['']?.version]);
    sites.push([
      'package-lock.json',
      `packages["${RUNTIME_DIR}"].version`,
      lock.packages?.[RUNTIME_DIR]?.version,
    ]);
  }
  for (const file of exampleManifests(root)) {
    const manifest = readJson(root, file);
    for (const [section, name] of ourDependencies(manifest)) {
      sites.push([file, `${section}["${name}"]`, String(manifest[section][name]).replace(/^\^/, '')]);
    }
  }
  return { cli, runtime, sites };
}

/** @param {string} value */
function parseVersion(value) {
  const version = value.trim().replace(/^v/, '');
  if (version.length > MAX_VERSION_LENGTH || !SEMVER.test(version)) {
    throw new Failure(
      `"${value.slice(0, MAX_VERSION_LENGTH)}" is not a version`,
      'give a semantic version such as 0.2.0 or 1.0.0-rc.1',
      2,
    );
  }
  return version;
}

function bump(root, requested) {
  const version = parseVersion(requested);
  // Everything is read and changed in memory first: a file that cannot be read stops the bump before
  // anything is written.
  const edits = [];
  const edit = (file, change) => {
    const value = readJson(root, file);
    change(value);
    edits.push([file, formatJson(value)]);
  };
  edit('package.json', (manifest) => (manifest.version = version));
  edit(path.join(RUNTIME_DIR, 'package.json'), (manifest) => (manifest.version = version));
  if (existsSync(path.join(root, 'package-lock.json'))) {
    edit('package-lock.json', (lock) => {
      lock.version = version;
      if (lock.packages?.['']) lock.packages[''].version = version;
      if (lock.packages?.[RUNTIME_DIR]) lock.packages[RUNTIME_DIR].version = version;
    });
  }
  for (const file of exampleManifests(root)) {
    edit(file, (manifest) => {
      for (const [section, name] of ourDependencies(manifest)) manifest[section][name] = `^${version}`;
    });
  }
  for (const [file, text] of edits) writeAtomic(path.join(root, file), text);
  return [
    `${CLI} and ${RUNTIME} are now ${version} in ${edits.map(([file]) => file).join(', ')}`,
    `next: a "## ${version} (YYYY-MM-DD)" heading in CHANGELOG.md, commit, then tag v${version} (docs/releasing.md)`,
  ];
}

/** `git+https://github.com/o/r.git` and `https://github.com/o/r` name the same repository. */
function normalizeRepository(url) {
  return String(url ?? '')
    .trim()
    .replace(/^git\+/, '')
    .replace(/\.git$/, '')
    .replace(/\/+$/, '');
}

function check(root, options) {
  const { cli, runtime, sites } = versionSites(root);
  const problems = [];
  if (cli.name !== CLI)
    problems.push([
      `package.json names "${cli.name}", not ${CLI}`,
      'run this from the kubesmith repository root',
    ]);
  if (runtime.name !== RUNTIME)
    problems.push([
      `${RUNTIME_DIR}/package.json names "${runtime.name}", not ${RUNTIME}`,
      'run this from the kubesmith repository root',
    ]);
  const version = cli.version;
  for (const [file, where, value] of sites) {
    if (value !== version) {
      problems.push([
        `${file} ${where} is ${value === undefined ? 'missing' : `"${value}"`}, but package.json's version is "${version}"`,
        `run \`npm run version:bump -- <version>\` to set one version everywhere`,
      ]);
    }
  }
  if (options.tag !== undefined && options.tag !== `v${version}`) {
    problems.push([
      `the tag is "${options.tag}" but the packages are ${version}`,
      `delete the tag (git tag -d ${options.tag} && git push --delete origin ${options.tag}), run npm run version:bump -- ${options.tag.replace(/^v/, '')}, commit, and tag again`,
    ]);
  }
  if (options.tag !== undefined) {
    const changelog = existsSync(path.join(root, 'CHANGELOG.md'))
      ? readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8')
      : '';
    const heading = changelog
      .split('\n')
      .find((line) => line.startsWith(`## ${version} `) || line === `## ${version}`);
    if (!heading || /unreleased/i.test(heading)) {
      problems.push([
        heading ? `CHANGELOG.md still says "${heading}"` : `CHANGELOG.md has no "## ${version}" heading`,
        `write "## ${version} (YYYY-MM-DD)" above the release's entries, commit, and move the tag to that commit`,
      ]);
    }
  }
  if (options.repository !== undefined) {
    const expected = normalizeRepository(options.repository);
    for (const [file, manifest, directory] of [
      ['package.json', cli, undefined],
      [`${RUNTIME_DIR}/package.json`, runtime, RUNTIME_DIR],
    ]) {
      const url = typeof manifest.repository === 'string' ? manifest.repository : manifest.repository?.url;
      if (normalizeRepository(url) !== expected) {
        problems.push([
          `${file} repository.url is ${url ? `"${url}"` : 'missing'}; npm's provenance check wants ${expected}`,
          `set "repository": { "type": "git", "url": "git+${expected}.git"${directory ? `, "directory": "${directory}"` : ''} } in ${file}`,
        ]);
      } else if (directory && manifest.repository?.directory !== directory) {
        problems.push([
          `${file} repository.directory is not "${directory}"`,
          `add "directory": "${directory}" to its repository field`,
        ]);
      }
    }
  }
  if (problems.length > 0) throw new Failure(problems);
  return [
    `${CLI} and ${RUNTIME}: ${version} in all ${sites.length} places${options.tag ? `, tag ${options.tag}` : ''}${options.repository ? `, repository ${normalizeRepository(options.repository)}` : ''}`,
  ];
}

function parseArgs(args) {
  const [command, ...rest] = args;
  const options = { positional: [] };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const match = /^--(tag|repository|root)(?:=(.*))?$/.exec(arg);
    if (match) {
      const value = match[2] ?? rest[++i];
      if (value === undefined) throw new Failure(`--${match[1]} needs a value`, usage, 2);
      options[match[1]] = value;
    } else if (arg.startsWith('-')) {
      throw new Failure(`unknown flag ${arg}`, usage, 2);
    } else {
      options.positional.push(arg);
    }
  }
  return { command, options };
}

const usage =
  'usage: node scripts/versions.mjs bump <version> | check [--tag vX.Y.Z] [--repository URL] [--root DIR]';

function main(args) {
  const { command, options } = parseArgs(args);
  const root = path.resolve(options.root ?? process.cwd());
  if (command === 'bump') {
    if (options.positional.length !== 1)
      throw new Failure('bump needs one version', 'npm run version:bump -- 0.2.0', 2);
    return bump(root, options.positional[0]);
  }
  if (command === 'check') {
    if (options.positional.length !== 0)
      throw new Failure(`unexpected argument ${options.positional[0]}`, usage, 2);
    return check(root, options);
  }
  throw new Failure(command ? `unknown command ${command}` : 'no command', usage, 2);
}

try {
  for (const line of main(process.argv.slice(2))) process.stdout.write(`${line}\n`);
} catch (error) {
  if (!(error instanceof Failure)) throw error;
  for (const [message, hint] of error.problems) process.stderr.write(`error: ${message}\nhint: ${hint}\n`);
  process.exitCode = error.exitCode;
}
