/** Output into a pipe its reader has closed (`kubesmith create api --help | head -1`). */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const launcher = fileURLToPath(new URL('../../bin/kubesmith.js', import.meta.url));

/**
 * Runs the CLI with `closed` a pipe whose reading end is closed before the CLI writes anything (a `head`
 * that has read its line and gone); the other stream is read. Resolves with the exit code and that text.
 */
function runIntoClosedPipe(
  closed: 'stdout' | 'stderr',
  ...args: string[]
): Promise<{ code: number | null; text: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [launcher, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    child[closed].destroy();
    const open = closed === 'stdout' ? child.stderr : child.stdout;
    let text = '';
    open.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, text }));
  });
}

describe('a closed stdout or stderr', () => {
  it('ends `create api --help` quietly with exit 0', async () => {
    const { code, text } = await runIntoClosedPipe('stdout', 'create', 'api', '--help');
    expect(text).not.toMatch(/EPIPE|Error|\n\s+at /);
    expect(text).toBe('');
    expect(code).toBe(0);
  });

  it('keeps the exit code of a usage error whose message goes nowhere', async () => {
    const { code, text } = await runIntoClosedPipe('stderr', 'create', 'api', '--bogus');
    expect(text).toBe('');
    expect(code).toBe(2);
  });
});
