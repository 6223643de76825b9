/**
 * `node test/bench/import.mjs [--kinds 100] [--runs 3]`: times `kubesmith import crd` on the CRDs
 * controller-gen generates for the realistic corpus' Go twin (realistic.mjs) plus the import corpus' big
 * Gadget CRD (a PodTemplateSpec, 640 kB), against controller-gen's own time to generate them (warm Go build
 * cache), and `kubesmith manifests --paths` regenerating them. Prints the medians of wall time and CPU
 * time (user + system: steadier than wall time on a shared machine) as a markdown table (stdout), with the
 * load average before and after. CPU time comes from peak-rss.cjs for Node and from GNU time for
 * controller-gen (without /usr/bin/time: wall time only). Each process is checked: import writes a file
 * per kind, manifests a CRD per kind.
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, stat, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureControllerGen } from './controller-gen.mjs';
import { writeRealisticGoTwin } from './realistic.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const { values } = parseArgs({
  options: {
    kinds: { type: 'string', default: '100' },
    runs: { type: 'string', default: '3' },
    // Another build's bin/kubesmith.js (an earlier commit's, say): its import is timed too, in turns.
    'compare-cli': { type: 'string' },
  },
});
const kinds = Number(values.kinds);
const runs = Number(values.runs);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const GNU_TIME = '/usr/bin/time';
const hasGnuTime = spawnSync(GNU_TIME, ['-f', '%U', 'true'], { encoding: 'utf8' }).status === 0;
const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');

/** Runs `command args` in `cwd`: its wall time and CPU time (ms; NaN when it cannot be known). */
async function timed(command, args, cwd) {
  const usageFile = path.join(cwd, `.usage-${process.pid}`);
  await rm(usageFile, { force: true });
  const node = command === process.execPath;
  const argv =
    node || !hasGnuTime
      ? [command, ...args]
      : [GNU_TIME, '-f', '%M %U %S', '-o', usageFile, command, ...args];
  const env = node
    ? {
        ...process.env,
        NODE_OPTIONS: `--require ${path.join(repo, 'test/bench/peak-rss.cjs')}`,
        BENCH_RSS_FILE: usageFile,
      }
    : process.env;
  const start = process.hrtime.bigint();
  const result = spawnSync(argv[0], argv.slice(1), {
    cwd,
    env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stderr}`);
  if (!node && !hasGnuTime) return { ms, cpu: NaN };
  const lines = (await readFile(usageFile, 'utf8')).trim().split('\n');
  // peak-rss.cjs: "<KiB> <µs>" per process; GNU time: "<KiB> <user s> <system s>" on its last line.
  const cpu = node
    ? lines.reduce((sum, line) => sum + Number(line.split(' ')[1]) / 1000, 0)
    : lines
        .at(-1)
        .split(' ')
        .slice(1)
        .reduce((sum, s) => sum + Number(s) * 1000, 0);
  return { ms, cpu };
}

const loadBefore = loadAverage();
const dir = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-bench-import-'));
try {
  const controllerGen = ensureControllerGen();
  const goDir = path.join(dir, 'go');
  const crds = path.join(dir, 'crds');
  await writeRealisticGoTwin(goDir, kinds);
  const args = ['crd:allowDangerousTypes=true', 'paths=./...', `output:crd:dir=${crds}`];
  await timed(controllerGen, args, goDir); // warms Go's build cache
  const gen = [];
  for (let i = 0; i < runs; i++) gen.push(await timed(controllerGen, args, goDir));
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
  const compared = [];
  for (let i = 0; i < runs; i++) {
    await rm(path.join(dir, 'types'), { recursive: true, force: true });
    imports.push(await timed(process.execPath, [cli, 'import', 'crd', 'crds', '--out', 'types'], dir));
    if (values['compare-cli']) {
      await rm(path.join(dir, 'compared'), { recursive: true, force: true });
      const other = path.resolve(values['compare-cli']);
      compared.push(
        await timed(process.execPath, [other, 'import', 'crd', 'crds', '--out', 'compared'], dir),
      );
    }
  }
  const written = (await readdir(path.join(dir, 'types'), { recursive: true })).filter((f) =>
    f.endsWith('.types.ts'),
  );
  if (written.length < files.length)
    throw new Error(`import wrote ${written.length} kinds for ${files.length} CRDs`);
  const regen = [];
  for (let i = 0; i < runs; i++) {
    await rm(path.join(dir, 'again'), { recursive: true, force: true });
    regen.push(
      await timed(process.execPath, [cli, 'manifests', '--paths', 'types', '--output-dir', 'again'], dir),
    );
  }
  if ((await readdir(path.join(dir, 'again'))).length !== files.length)
    throw new Error('manifests --paths wrote a CRD per kind? no');
  const mb = (bytes / 1024 / 1024).toFixed(1);
  const cells = (samples) =>
    `${median(samples.map((s) => s.ms)).toFixed(0)} | ${median(samples.map((s) => s.cpu)).toFixed(0)}`;
  process.stdout.write(`| ${files.length} CRDs (${mb} MB) | median of ${runs} | wall ms | CPU ms |
| --- | --- | ---: | ---: |
| controller-gen v0.23.0 (Go → CRDs, warm) | ${files.length - 1} kinds | ${cells(gen)} |
| kubesmith import crd (CRDs → TypeScript, formatted) | ${files.length} CRDs | ${cells(imports)} |
${compared.length > 0 ? `| ${values['compare-cli']} import crd | ${files.length} CRDs | ${cells(compared)} |\n` : ''}| kubesmith manifests --paths (TypeScript → CRDs) | ${files.length} kinds | ${cells(regen)} |

Load average (1, 5, 15 min): ${loadBefore} before, ${loadAverage()} after.
`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
