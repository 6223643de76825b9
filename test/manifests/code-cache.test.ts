import module from 'node:module';
import { mkdtemp, readdir, rm, stat, truncate } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../helpers/build.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
/** A cache of this test's own: other tests' kubesmith processes share the default one (node_modules/.cache). */
let cacheDir = '';
const hasCompileCache = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

/** Loads ts-morph as `kubesmith manifests` does, in a new process, and uses the compiler. */
async function loadTsMorph(env: Record<string, string> = {}): Promise<void> {
  const script = `const { ts } = require(${JSON.stringify(path.join(repo, 'dist/typescript/compiler.cjs'))});
    process.stdout.write(ts.transpile('let a: number = 1'));`;
  const result = await execa('node', ['-e', script], {
    env: { KUBESMITH_CODE_CACHE_DIR: cacheDir, ...env },
    reject: false,
  });
  expect(result.exitCode, result.stderr).toBe(0);
  expect(result.stdout).toContain('var a = 1');
}

/** Then loads re2js as the schema checks do (after TypeScript), and compiles a pattern. */
async function loadRe2js(): Promise<void> {
  const re2 = pathToFileURL(path.join(repo, 'dist/validation/re2.js')).href;
  const script = `require(${JSON.stringify(path.join(repo, 'dist/typescript/compiler.cjs'))});
    import(${JSON.stringify(re2)}).then(({ compileRe2 }) => process.stdout.write(String(compileRe2('^a+$').test('aa'))));`;
  const result = await execa('node', ['-e', script], {
    env: { KUBESMITH_CODE_CACHE_DIR: cacheDir },
    reject: false,
  });
  expect(result.exitCode, result.stderr).toBe(0);
  expect(result.stdout).toBe('true');
}

async function cacheFiles(): Promise<Map<string, number>> {
  const names = await readdir(cacheDir).catch(() => [] as string[]);
  const out = new Map<string, number>();
  for (const name of names.filter((n) => n.endsWith('.v8'))) {
    out.set(name.replace(/-[0-9a-f]{16}\.v8$/, ''), (await stat(path.join(cacheDir, name))).size);
  }
  return out;
}

beforeAll(async () => {
  await buildCli();
  cacheDir = path.join(await mkdtemp(path.join(os.tmpdir(), 'kubesmith-code-cache-')), 'v8');
}, 120_000);

afterAll(async () => {
  if (cacheDir) await rm(path.dirname(cacheDir), { recursive: true, force: true });
});

describe.skipIf(hasCompileCache)('the V8 code cache of ts-morph (Node without enableCompileCache)', () => {
  it('is written for the compiler bundle, and rewritten when V8 rejects it', async () => {
    await loadTsMorph();
    const files = await cacheFiles();
    expect([...files.keys()].sort()).toEqual(['typescript.js']);
    const name = (await readdir(cacheDir)).find((n) => n.startsWith('typescript.js-') && n.endsWith('.v8'))!;
    const size = files.get('typescript.js')!;
    expect(size).toBeGreaterThan(100_000);

    // A damaged cache is rejected by V8: the bundle is compiled from source and the cache written again.
    await truncate(path.join(cacheDir, name), 1000);
    await loadTsMorph();
    expect((await stat(path.join(cacheDir, name))).size).toBeGreaterThan(100_000);
  }, 60_000);

  it('is written for re2js too, loaded after TypeScript', async () => {
    await loadRe2js();
    const size = (await cacheFiles()).get('index.cjs');
    expect(size).toBeGreaterThan(10_000);
    // Read back: the cached run gives the same answer.
    await loadRe2js();
    expect((await cacheFiles()).get('index.cjs')).toBe(size);
  }, 60_000);

  it('is neither read nor written with NODE_DISABLE_COMPILE_CACHE=1', async () => {
    await loadTsMorph();
    const name = (await readdir(cacheDir)).find((n) => n.startsWith('typescript.js-') && n.endsWith('.v8'))!;
    await truncate(path.join(cacheDir, name), 1000);
    await loadTsMorph({ NODE_DISABLE_COMPILE_CACHE: '1' });
    expect((await stat(path.join(cacheDir, name))).size).toBe(1000);
    await loadTsMorph();
    expect((await stat(path.join(cacheDir, name))).size).toBeGreaterThan(100_000);
  }, 60_000);
});
