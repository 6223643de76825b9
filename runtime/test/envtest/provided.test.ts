/**
 * sharedEnvtestFrom: what a test file makes of the value the run's global setup provided.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedEnvtestFrom } from '../../src/envtest/shared.js';

describe('sharedEnvtestFrom', () => {
  it('fails, naming the setup to configure, when nothing was provided', () => {
    expect(() => sharedEnvtestFrom(undefined)).toThrow(
      'no envtest was provided: vitest.config.ts must list test/envtest.setup.ts in globalSetup',
    );
  });

  it("fails with the setup's error where the tests must run but cannot", () => {
    expect(() => sharedEnvtestFrom({ controllers: false, error: 'envtest binaries not found' })).toThrow(
      'envtest binaries not found',
    );
  });

  it('is undefined when no envtest runs (the tests are skipped)', () => {
    expect(sharedEnvtestFrom({ controllers: false })).toBeUndefined();
  });

  it("loads the running envtest's kubeconfig", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-provided-'));
    try {
      const kubeconfigPath = path.join(dir, 'kubeconfig');
      await writeFile(
        kubeconfigPath,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters: [{ name: envtest, cluster: { server: "https://127.0.0.1:6443" } }]',
          'users: [{ name: admin, user: { token: t } }]',
          'contexts: [{ name: envtest, context: { cluster: envtest, user: admin } }]',
          'current-context: envtest',
        ].join('\n'),
      );
      const shared = sharedEnvtestFrom({ controllers: true, kubeconfigPath });
      expect(shared?.controllers).toBe(true);
      expect(shared?.kubeConfig.getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
