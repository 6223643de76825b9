/** Shared by the envtest tests: process liveness from /proc, waiting, and a Node-runnable build of envtest. */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const runtimeDir = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Whether `pid` still runs. A zombie (state Z: exited, not yet reaped by its new parent) counts as dead: in a
 * container whose pid 1 does not reap orphans, a killed orphan can stay a zombie for good.
 */
export function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Whether `pid` has no /proc entry at all (exited and reaped). */
export function isGone(pid: number): boolean {
  return !existsSync(`/proc/${pid}`);
}

/** Polls `condition` every 25 ms; resolves with the time it took, rejects after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<number> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return Date.now() - started;
}

/**
 * Transpiles runtime/src (envtest and the modules it imports) to JavaScript that plain Node can run in a
 * child process (vitest's transform only applies inside the test process). The output lives under node_modules/.cache so that
 * `@kubernetes/client-node` resolves from it. Returns the directory and a remover.
 */
export async function compileEnvtest(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const source = path.join(runtimeDir, 'src');
  const repo = path.dirname(runtimeDir);
  const dir = path.join(
    repo,
    'node_modules',
    '.cache',
    `kubesmith-envtest-test-${process.pid}-${Date.now()}`,
  );
  for (const entry of await readdir(source, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts')) continue;
    const file = path.join(entry.parentPath, entry.name);
    const out = path.join(dir, path.relative(source, file)).replace(/\.ts$/, '.js');
    const { outputText } = ts.transpileModule(await readFile(file, 'utf8'), {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: false,
      },
      fileName: file,
    });
    await mkdir(path.dirname(out), { recursive: true });
    await writeFile(out, outputText);
  }
  await writeFile(path.join(dir, 'package.json'), '{ "type": "module" }\n');
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
