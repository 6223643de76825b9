/**
 * The recorded verdicts are still the API server's: record.mjs runs every case on envtest again, and its
 * verdicts must equal those committed in test/fixtures/validate/verdicts.json (which
 * validate-verdicts.test.ts holds kubesmith to).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { removeTemp, tempDir } from '../helpers/run.js';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/validate');
let dir: string;
beforeAll(async () => {
  dir = await tempDir('verdicts');
});
afterAll(async () => {
  await removeTemp(dir);
});

it('kube-apiserver gives today the verdicts recorded in verdicts.json', async () => {
  const out = path.join(dir, 'verdicts.json');
  const result = await execa('node', [path.join(fixtures, 'record.mjs'), '--out', out], { reject: false });
  expect(result.exitCode, result.stderr).toBe(0);
  expect(result.stdout).toMatch(/^\d+ cases: \d+ accepted, \d+ rejected$/m);
  const recorded: unknown = JSON.parse(await readFile(out, 'utf8'));
  const committed: unknown = JSON.parse(await readFile(path.join(fixtures, 'verdicts.json'), 'utf8'));
  expect(recorded).toEqual(committed);
}, 180_000);
