/**
 * `kubesmith helm-chart` and its record of the files it wrote (dist/chart/.kubesmith-files), which a pull
 * request can edit like any file of the project: a line naming a file outside the chart's templates stops
 * the run, and nothing outside dist/chart/ is ever removed. kubectl is a stand-in that prints a fixed
 * rendering of config/default, so the test needs no kustomize.
 */
import { existsSync } from 'node:fs';
import {
  appendFile,
  chmod,
  cp,
  mkdir,
  readdir,
  readFile,
  rename,
  symlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTemp, runWithEnv, snapshot, tempDir } from '../helpers/run.js';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures');
const RENDERED = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: crd-basic-controller-manager
  namespace: crd-basic-system
spec:
  selector:
    matchLabels: {app.kubernetes.io/name: crd-basic}
  template:
    metadata:
      labels: {app.kubernetes.io/name: crd-basic}
    spec:
      containers:
      - name: manager
        image: controller:latest
`;
const HINT =
  'hint: kubesmith records only the files it wrote below templates/ and its Chart.yaml, values.yaml, .helmignore: delete that line (or the whole record and the chart directory) and run again; nothing was written or removed\n';

const temps: string[] = [];
afterEach(async () => {
  for (const dir of temps.splice(0)) await removeTemp(dir);
});

/** A project with a chart written by helm-chart; `run` runs the CLI with the stand-in kubectl. */
async function projectWithChart() {
  const dir = await tempDir();
  temps.push(dir);
  const bin = path.join(path.dirname(dir), 'bin');
  await mkdir(bin);
  await writeFile(path.join(bin, 'rendered.yaml'), RENDERED);
  await writeFile(path.join(bin, 'kubectl'), `#!/bin/sh\ncat "${path.join(bin, 'rendered.yaml')}"\n`);
  await chmod(path.join(bin, 'kubectl'), 0o755);
  await cp(path.join(FIXTURES, 'crd-basic', 'PROJECT'), path.join(dir, 'PROJECT'));
  await mkdir(path.join(dir, 'config/default'), { recursive: true });
  await writeFile(path.join(dir, 'config/default/kustomization.yaml'), 'resources: []\n');
  const env = { ...process.env, KUBEBUILDER_ASSETS: bin };
  const run = (...args: string[]) => runWithEnv(env, dir, ...args);
  const first = await run('helm-chart');
  expect(first.code, first.stderr).toBe(0);
  return { dir, run };
}

describe('kubesmith helm-chart and a tampered .kubesmith-files', () => {
  it.each([
    ['-  ../../../victim.txt', 'the path is not one of the files of a chart'],
    ['-  templates/../../../victim.txt', 'the path is not one of the files of a chart'],
    [`${'0'.repeat(64)}  /VICTIM`, 'the path is not one of the files of a chart'],
    ['-  templates\\..\\..\\..\\victim.txt', 'the path is not one of the files of a chart'],
    ['-  README.md', 'the path is not one of the files of a chart'],
    ['-../../../victim.txt', 'expected "<sha256>  <path>" or "-  <path>"'],
  ])('a line %j stops the run, and the file outside the project stays', async (line, reason) => {
    const { dir, run } = await projectWithChart();
    const victim = path.join(path.dirname(dir), 'victim.txt');
    await writeFile(victim, 'not the chart\n');
    const record = path.join(dir, 'dist/chart/.kubesmith-files');
    await appendFile(record, `${line.replace('/VICTIM', victim)}\n`);
    const lineNumber = (await readFile(record, 'utf8')).split('\n').length - 1;
    const before = await snapshot(path.join(dir, 'dist/chart'));

    const result = await run('helm-chart');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `error: dist/chart/.kubesmith-files:${lineNumber}: ${JSON.stringify(line.replace('/VICTIM', victim))} is not a line kubesmith helm-chart writes: ${reason}\n${HINT}`,
    );
    expect(await readFile(victim, 'utf8')).toBe('not the chart\n');
    expect(await snapshot(path.join(dir, 'dist/chart'))).toEqual(before);
  });

  it('a removed template of the record is still removed: only inside the chart', async () => {
    const { dir, run } = await projectWithChart();
    await writeFile(path.join(dir, 'dist/chart/templates/old.yaml'), 'kind: ConfigMap\n');
    await appendFile(path.join(dir, 'dist/chart/.kubesmith-files'), '-  templates/old.yaml\n');
    const result = await run('helm-chart');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^remove {5}dist\/chart\/templates\/old\.yaml \(no longer generated\)$/m);
    expect(existsSync(path.join(dir, 'dist/chart/templates/old.yaml'))).toBe(false);
  });

  it('dist/ linked to a directory outside the project: one error, nothing written or removed there', async () => {
    const { dir, run } = await projectWithChart();
    const outside = path.join(path.dirname(dir), 'outside');
    await rename(path.join(dir, 'dist'), outside);
    await symlink(outside, path.join(dir, 'dist'));
    const before = await snapshot(outside);
    await appendFile(path.join(outside, 'chart/.kubesmith-files'), '-  templates/gone.yaml\n');
    await writeFile(path.join(outside, 'chart/templates/gone.yaml'), 'kind: ConfigMap\n');

    const result = await run('helm-chart');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^error: refusing "dist\/chart": not a file inside the project \(a symbolic link on the way leads to .*\)\nhint: .*nothing was written\n$/,
    );
    expect(await readFile(path.join(outside, 'chart/templates/gone.yaml'), 'utf8')).toBe('kind: ConfigMap\n');
    expect(Object.keys(await snapshot(outside)).sort()).toEqual(
      [...Object.keys(before), 'chart/templates/gone.yaml'].sort(),
    );
    expect(await readdir(path.dirname(dir))).toEqual(['bin', 'outside', 'project']);
  });
});
