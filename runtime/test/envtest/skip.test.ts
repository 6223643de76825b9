import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { binaryAssetsOrSkip } from '../../src/envtest/index.js';

const empty = mkdtempSync(path.join(os.tmpdir(), 'kubesmith-skip-empty-'));
const full = mkdtempSync(path.join(os.tmpdir(), 'kubesmith-skip-full-'));
for (const name of ['etcd', 'kube-apiserver']) {
  writeFileSync(path.join(full, name), '#!/bin/sh\n');
  chmodSync(path.join(full, name), 0o755);
}
afterAll(() => {
  rmSync(empty, { recursive: true, force: true });
  rmSync(full, { recursive: true, force: true });
});

/** An environment whose binaries are only where `assets` says (the cache is an empty directory). */
function envWith(assets: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { HOME: empty, XDG_CACHE_HOME: empty, KUBEBUILDER_ASSETS: assets, ...extra };
}

describe('binaryAssetsOrSkip', () => {
  it('returns the directory that holds the binaries, in CI too', () => {
    expect(binaryAssetsOrSkip({ env: envWith(full, { CI: 'true' }) })).toBe(full);
  });

  it.each([[{}], [{ CI: 'false' }], [{ CI: '0' }], [{ CI: 'true', KUBESMITH_REQUIRE_ENVTEST: '0' }]])(
    'without binaries and with %o: skips, with one line saying how to get them',
    (extra) => {
      const lines: string[] = [];
      expect(binaryAssetsOrSkip({ env: envWith(empty, extra), warn: (line) => lines.push(line) })).toBe(
        undefined,
      );
      expect(lines).toEqual([
        'skipping the envtest tests: no etcd and kube-apiserver found; run `npm run setup-envtest`',
      ]);
    },
  );

  it.each([
    [{ CI: 'true' }],
    [{ CI: '1' }],
    [{ KUBESMITH_REQUIRE_ENVTEST: '1' }],
    [{ CI: 'false', KUBESMITH_REQUIRE_ENVTEST: 'true' }],
  ])('without binaries and with %o: fails instead of skipping', (extra) => {
    const lines: string[] = [];
    expect(() =>
      binaryAssetsOrSkip({ env: envWith(empty, extra), warn: (line) => lines.push(line) }),
    ).toThrow(
      /^envtest binaries not found: .* The envtest tests must run here \(CI or KUBESMITH_REQUIRE_ENVTEST is set\): run `npx kubesmith envtest` before the tests, or set KUBESMITH_REQUIRE_ENVTEST=0 to skip them\.$/,
    );
    expect(lines).toEqual([]);
  });
});
