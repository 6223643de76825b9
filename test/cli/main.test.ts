import { describe, expect, it, vi } from 'vitest';
import { run, tempDir, removeTemp } from '../helpers/run.js';
import { kubesmithVersion } from '../../src/version.js';

describe('the kubesmith command', () => {
  it('--version and version print the package version', async () => {
    const dir = await tempDir();
    try {
      expect(await run(dir, '--version')).toMatchObject({ code: 0, stdout: `${kubesmithVersion}\n` });
      expect(await run(dir, 'version')).toMatchObject({ code: 0, stdout: `${kubesmithVersion}\n` });
      expect(JSON.parse((await run(dir, 'version', '--json')).stdout)).toEqual({ version: kubesmithVersion });
    } finally {
      await removeTemp(dir);
    }
  });

  it.each([
    [[]],
    [['init']],
    [['create']],
    [['create', 'api']],
    [['manifests']],
    [['envtest']],
    [['build-installer']],
    [['import', 'crd']],
    [['helm-chart']],
    [['validate']],
    [['edit']],
    [['alpha', 'generate']],
    [['alpha', 'update']],
    [['version']],
  ])('%j --help has examples', async (args) => {
    const dir = await tempDir();
    try {
      const result = await run(dir, ...args, '--help');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/Examples:\n(?: {2}\$ .*\n)*? {2}\$ kubesmith /);
    } finally {
      await removeTemp(dir);
    }
  });

  it('an unknown command is a usage error with a suggestion', async () => {
    const dir = await tempDir();
    try {
      const result = await run(dir, 'inti');
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/unknown command 'inti'/);
      expect(result.stderr).toMatch(/Did you mean init\?/);
    } finally {
      await removeTemp(dir);
    }
  });

  it('a command that reads no standard input leaves process.stdin alone (Node makes it on first use)', async () => {
    const dir = await tempDir();
    const stdin = vi.spyOn(process, 'stdin', 'get');
    try {
      const result = await run(dir, 'manifests');
      expect(result.code).not.toBe(0); // no PROJECT here: it stops once it has its context
      expect(stdin).not.toHaveBeenCalled();
    } finally {
      stdin.mockRestore();
      await removeTemp(dir);
    }
  });
});
