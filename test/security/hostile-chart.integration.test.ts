/**
 * The chart record (`dist/chart/.kubesmith-files`) as an attacker's pull request would write it: lines
 * naming files anywhere, in any of the record's forms. `kubesmith helm-chart` (kubectl renders config/,
 * hence an integration test) never removes, writes or prints a file outside the project, and refuses a
 * record it did not write with one clean error line. KUBESMITH_PROPERTY_RUNS sets the number of cases.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryAssetsOrSkip } from '../../runtime/src/envtest/index.js';
import { run } from '../helpers/run.js';
import { hostileText, logRuns, makeSandbox, propertyRuns, runContained, type Sandbox } from './hostile.js';

const RECORD = 'dist/chart/.kubesmith-files';
const assets = binaryAssetsOrSkip();

let sandbox: Sandbox;
beforeAll(async () => {
  if (assets === undefined) return;
  sandbox = await makeSandbox();
  const first = await run(sandbox.base, 'helm-chart');
  expect(first.code, first.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  if (sandbox) await rm(sandbox.root, { recursive: true, force: true });
});

describe.skipIf(assets === undefined)('a hostile chart record', () => {
  it('names files outside the chart: helm-chart never touches them', async () => {
    const runs = propertyRuns(25);
    const hash = fc.oneof(fc.constant('-'), fc.stringMatching(/^[0-9a-f]{64}$/));
    const entry = fc.oneof(
      hostileText(sandbox),
      fc.constantFrom(
        path.join(sandbox.root, 'victim.txt'),
        'templates/../../../../../../victim.txt',
        'templates/../../../PROJECT',
        '../../PROJECT',
        '../../src/main.ts',
        'templates\\..\\..\\..\\victim.txt',
      ),
    );
    const lines = fc.array(
      fc.tuple(hash, entry).map(([sum, name]) => `${sum}  ${name}`),
      { minLength: 1, maxLength: 4 },
    );
    await fc.assert(
      fc.asyncProperty(lines, fc.boolean(), async (added, force) => {
        const prepare = async (dir: string) => {
          const file = path.join(dir, RECORD);
          await writeFile(file, `${await readFile(file, 'utf8')}${added.join('\n')}\n`);
        };
        const args = force ? ['helm-chart', '--force'] : ['helm-chart'];
        await runContained(sandbox, prepare, args, `record lines ${JSON.stringify(added)}`);
        // Files of the project outside the chart are not the chart's to remove either.
        const project = path.join(path.dirname(sandbox.base), 'case');
        for (const file of ['PROJECT', 'src/main.ts']) {
          await expect(readFile(path.join(project, file), 'utf8')).resolves.toBe(
            await readFile(path.join(sandbox.base, file), 'utf8'),
          );
        }
      }),
      { numRuns: runs },
    );
    logRuns('chart record', runs);
  }, 600_000);
});
