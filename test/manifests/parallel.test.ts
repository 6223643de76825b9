/**
 * A run on two threads (src/manifests/parallel.ts) gives what one thread gives, byte for byte: the files,
 * the diagnostics, and the files handed over as they are made. Run on the built generator (the worker is
 * a compiled module), in a child process per comparison so that each starts cold, as the CLI does.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../helpers/build.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURES = path.join(repo, 'test/fixtures');
const temp: string[] = [];
afterAll(async () => {
  for (const dir of temp) await rm(dir, { recursive: true, force: true });
});

beforeAll(async () => {
  await buildCli();
}, 180_000);

/** The result of generateManifests over `root` as JSON (with the files handed over), and whether it split. */
const CHILD = `
const [root] = process.argv.slice(1);
const dist = (f) => ${JSON.stringify(path.join(repo, 'dist'))} + '/' + f;
const { generateManifests } = await import(dist('manifests/index.js'));
const handed = [];
let out;
try {
  const result = await generateManifests({ root, version: '0.0.0-test', onFile: (f) => handed.push(f.path) });
  out = { result, handed };
} catch (error) {
  out = { error: String(error) };
}
process.stdout.write(JSON.stringify(out));
`;

/** The result over `root` as JSON, and what the run said on stderr (why it went back to one thread). */
async function generate(root: string, threads: '1' | '2'): Promise<{ json: string; stderr: string }> {
  const { stdout, stderr } = await execa('node', ['--input-type=module', '-e', CHILD, root], {
    env: { KUBESMITH_MANIFESTS_THREADS: threads },
  });
  return { json: stdout, stderr };
}

const fixtures = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(path.join(FIXTURES, d.name, 'PROJECT')))
  .map((d) => d.name)
  .sort();

describe('manifests on two threads', () => {
  const stderr = new Map<string, string>();

  it.each(fixtures)(
    'fixture %s: the same files and diagnostics as on one thread',
    async (name) => {
      const root = path.join(FIXTURES, name);
      const [one, two] = await Promise.all([generate(root, '1'), generate(root, '2')]);
      expect(two.json).toBe(one.json);
      stderr.set(name, two.stderr);
    },
    60_000,
  );

  it('split the fixtures of several kinds; one with an error was made again on one thread', () => {
    for (const name of ['crd-imported', 'crd-markers', 'crd-validation', 'cronjob', 'runtime'])
      expect(stderr.get(name), name).toBe('');
    expect(stderr.get('storage-versions_error')).toContain('on one thread: an error was reported');
    expect(stderr.get('crd-typescript')).toContain('on one thread: ');
  });

  it('a project of 40 kinds of the benchmark: the same CRDs, handed over in the same order', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-parallel-'));
    temp.push(root);
    const { writeRealisticProject } = (await import(path.join(repo, 'test/bench/realistic.mjs'))) as {
      writeRealisticProject(dir: string, kinds: number): Promise<string[]>;
    };
    await writeRealisticProject(root, 40);
    const [one, two] = await Promise.all([generate(root, '1'), generate(root, '2')]);
    expect(two.stderr).toBe('');
    expect((JSON.parse(one.json) as { result: { files: unknown[] } }).result.files).toHaveLength(40);
    expect(two.json).toBe(one.json);
  }, 120_000);
});
