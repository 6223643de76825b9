import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../helpers/build.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const tracer = fileURLToPath(new URL('../helpers/trace-imports.mjs', import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-startup-'));
  // The launcher runs the compiled CLI.
  await buildCli();
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function modulesLoadedBy(...args: string[]): Promise<string[]> {
  const trace = path.join(dir, `${args.join('_').replace(/\W/g, '')}.txt`);
  const result = await execa('node', ['--import', tracer, path.join(repo, 'bin/kubesmith.js'), ...args], {
    cwd: dir,
    env: { KUBESMITH_TRACE_IMPORTS: trace },
    reject: false,
  });
  expect(result.exitCode, result.stderr).toBe(0);
  return (await readFile(trace, 'utf8')).split('\n').filter(Boolean);
}

describe('start-up', () => {
  it.each([
    ['--help'],
    ['--version'],
    ['init', '--help'],
    ['create', 'api', '--help'],
    ['manifests', '--help'],
    ['envtest', '--help'],
  ])('%s loads neither handlebars, ts-morph, yaml nor execa', async (...args) => {
    const loaded = await modulesLoadedBy(...args);
    expect(loaded.some((url) => url.includes('commander'))).toBe(true);
    for (const heavy of ['handlebars', 'ts-morph', '/yaml/', 'execa']) {
      expect(
        loaded.filter((url) => url.includes(heavy)),
        heavy,
      ).toEqual([]);
    }
  });
});
