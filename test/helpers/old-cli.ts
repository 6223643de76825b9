/**
 * An older build of this repository as an npm tarball, made from git history: `git archive` of the
 * commit, built with the current node_modules when its dependencies allow (else `npm ci`), then `npm pack`.
 * Cached under ~/.cache/kubesmith/old-cli/<commit>/ so that a rerun costs nothing. A shallow clone without
 * the commit gives a reason to skip instead of a tarball.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repo } from './scripts.js';

const exec = promisify(execFile);

export type OldCli = { tarball: string; commit: string } | { skip: string };

async function sh(command: string, args: string[], cwd: string, timeout = 600_000): Promise<string> {
  const { stdout } = await exec(command, args, { cwd, timeout, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

export async function oldCliTarball(commit: string): Promise<OldCli> {
  const cache = path.join(process.env['XDG_CACHE_HOME'] ?? path.join(os.homedir(), '.cache'), 'kubesmith');
  const dir = path.join(cache, 'old-cli', commit);
  const packed = async () => (await readdir(dir).catch(() => [])).find((f) => /^kubesmith-.*\.tgz$/.test(f));
  const done = await packed();
  if (done) return { tarball: path.join(dir, done), commit };
  try {
    await sh('git', ['cat-file', '-e', `${commit}^{commit}`], repo, 30_000);
  } catch {
    return {
      skip: `commit ${commit} is not in this clone (a shallow clone?): \`git fetch --unshallow\` to run this test`,
    };
  }
  const source = path.join(dir, 'source');
  await rm(dir, { recursive: true, force: true });
  await mkdir(source, { recursive: true });
  await sh('sh', ['-c', `git archive --format=tar ${commit} | tar -x -C "${source}"`], repo, 120_000);
  // The current node_modules serve when the build works with them (the old lock differs by additions).
  await symlink(path.join(repo, 'node_modules'), path.join(source, 'node_modules'), 'dir');
  try {
    await sh('npm', ['run', 'build'], source);
  } catch {
    await rm(path.join(source, 'node_modules'), { force: true });
    await sh('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], source);
    await sh('npm', ['run', 'build'], source);
  }
  await sh('npm', ['pack', '--ignore-scripts', '--pack-destination', dir, '--loglevel', 'error'], source);
  await rm(source, { recursive: true, force: true });
  const tarball = await packed();
  if (!tarball || !existsSync(path.join(dir, tarball)))
    throw new Error(`npm pack of ${commit} made no tarball`);
  return { tarball: path.join(dir, tarball), commit };
}

/**
 * The packed CLI installed into `dir` as a project installs a package (`npm install <tarball>`, no
 * scripts), once: the path of its bin, to run with node. Each `npx --package <tarball>` would resolve and
 * check the package again (seconds per command).
 */
export async function installOldCli(tarball: string, dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'package.json'), '{ "private": true }\n');
  await sh(
    'npm',
    ['install', tarball, '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel', 'error'],
    dir,
  );
  const bin = path.join(dir, 'node_modules', 'kubesmith', 'bin', 'kubesmith.js');
  if (!existsSync(bin)) throw new Error(`npm install ${tarball} installed no bin/kubesmith.js`);
  return bin;
}
