/**
 * `node test/bench/import.mjs [--kinds 100] [--runs 3]`: times `kubesmith import crd` on the CRDs
 * controller-gen generates for the realistic corpus' Go twin (realistic.mjs) plus the import corpus' big
 * Gadget CRD (a PodTemplateSpec, 640 kB), against controller-gen's own time to generate them (warm Go build
 * cache), and `kubesmith manifests --paths` regenerating them. Prints the medians of wall time as a
 * markdown table (stdout). Each process is checked: import writes a file per kind, manifests a CRD per kind.
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readdir, rm, stat, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureControllerGen } from './controller-gen.mjs';
import { writeRealisticGoTwin } from './realistic.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const { values } = parseArgs({
  options: { kinds: { type: 'string', default: '100' }, runs: { type: 'string', default: '3' } },
});
const kinds = Number(values.kinds);
const runs = Number(values.runs);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function timed(command, args, cwd) {
  const start = process.hrtime.bigint();
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stderr}`);
  return ms;
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-bench-import-'));
try {
  const controllerGen = ensureControllerGen();
  const goDir = path.join(dir, 'go');
  const crds = path.join(dir, 'crds');
  await writeRealisticGoTwin(goDir, kinds);
  const args = ['crd:allowDangerousTypes=true', 'paths=./...', `output:crd:dir=${crds}`];
  timed(controllerGen, args, goDir); // warms Go's build cache
  const gen = [];
  for (let i = 0; i < runs; i++) gen.push(timed(controllerGen, args, goDir));
  await cp(
    path.join(repo, 'test/fixtures/import/controller-gen/corpus.example.com_gadgets.yaml'),
    path.join(crds, 'corpus.example.com_gadgets.yaml'),
  );
  const files = (await readdir(crds)).filter((f) => f.endsWith('.yaml'));
  let bytes = 0;
  for (const f of files) bytes += (await stat(path.join(crds, f))).size;
  await symlink(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const cli = path.join(repo, 'bin/kubesmith.js');
  const imports = [];
  for (let i = 0; i < runs; i++) {
    await rm(path.join(dir, 'types'), { recursive: true, force: true });
    imports.push(timed(process.execPath, [cli, 'import', 'crd', 'crds', '--out', 'types'], dir));
  }
  const written = (await readdir(path.join(dir, 'types'), { recursive: true })).filter((f) =>
    f.endsWith('.types.ts'),
  );
  if (written.length < files.length)
    throw new Error(`import wrote ${written.length} kinds for ${files.length} CRDs`);
  const regen = [];
  for (let i = 0; i < runs; i++) {
    await rm(path.join(dir, 'again'), { recursive: true, force: true });
    regen.push(timed(process.execPath, [cli, 'manifests', '--paths', 'types', '--output-dir', 'again'], dir));
  }
  if ((await readdir(path.join(dir, 'again'))).length !== files.length)
    throw new Error('manifests --paths wrote a CRD per kind? no');
  const mb = (bytes / 1024 / 1024).toFixed(1);
  process.stdout.write(`| ${files.length} CRDs (${mb} MB) | median of ${runs} | wall ms |
| --- | --- | ---: |
| controller-gen v0.23.0 (Go → CRDs, warm) | ${files.length - 1} kinds | ${median(gen).toFixed(0)} |
| kubesmith import crd (CRDs → TypeScript, formatted) | ${files.length} CRDs | ${median(imports).toFixed(0)} |
| kubesmith manifests --paths (TypeScript → CRDs) | ${files.length} kinds | ${median(regen).toFixed(0)} |
`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
