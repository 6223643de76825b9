/* global performance */
/**
 * `npm run bench:validate`: `validate()` of @kubesmith/runtime/testing on 1,000 objects against a CRD with
 * 50 CEL rules (ten kinds of rule a CRD uses: bounds, comprehensions over a list and a map, regex, the
 * Kubernetes list and string libraries, has() and optional fields, each written five times with other
 * constants, so 50 distinct rules to compile), in a new process each run (docs/benchmarks.md,
 * "validate()"). Prints, as medians over the runs: importing @kubesmith/runtime/testing, the first
 * validate() (it loads the validator, cel-js and re2js, and compiles the rules the object meets), the
 * 1,000 objects after it, and the whole from the process's start: wall time, and CPU time in parentheses
 * (on a shared machine the CPU time is the one to compare).
 *
 * Options: --runs 7 --objects 1000. Needs `npm run build` (it imports runtime/dist).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '7' },
    objects: { type: 'string', default: '1000' },
    child: { type: 'boolean' },
  },
});
const runs = Number(values.runs);
const objects = Number(values.objects);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(objects) || objects < 1)
  throw new Error('usage: node test/bench/validate.mjs [--runs 7] [--objects 1000]');

/** Ten kinds of rule, each made five times with another constant. */
const TEMPLATES = [
  (i) => `self.replicas <= ${100 + i}`,
  (i) => `self.ports.all(p, p.port > ${i} && p.port < 65536)`,
  (i) => `self.name.matches('^[a-z][a-z0-9-]{0,${60 + i}}$')`,
  (i) => `self.image.contains(':') || self.image.size() > ${i}`,
  (i) => `!has(self.tier) || self.tier in ['gold', 'silver', 'bronze', 'tier${i}']`,
  (i) => `self.labels.all(k, k.size() < ${64 + i} && self.labels[k].size() < 64)`,
  (i) => `size(self.ports) <= ${10 + i}`,
  (i) => `self.ports.map(p, p.port).isSorted() || ${i} > 100`,
  (i) => `self.name.lowerAscii() == self.name || self.name.size() == ${i}`,
  (i) => `self.ports.exists(p, p.name == 'http') || self.ports.size() == ${i}`,
];
const RULES = Array.from({ length: 50 }, (_, n) => ({
  rule: TEMPLATES[n % TEMPLATES.length](Math.floor(n / TEMPLATES.length)),
  message: `rule ${n}`,
}));

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'services.bench.example.com' },
  spec: {
    group: 'bench.example.com',
    names: { kind: 'Service', listKind: 'ServiceList', plural: 'services', singular: 'service' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['name', 'image'],
                'x-kubernetes-validations': RULES,
                properties: {
                  name: { type: 'string', maxLength: 63, pattern: '^[a-z][a-z0-9-]*$' },
                  image: { type: 'string', maxLength: 256 },
                  replicas: { type: 'integer', minimum: 0, default: 1 },
                  tier: { type: 'string', enum: ['gold', 'silver', 'bronze'] },
                  labels: {
                    type: 'object',
                    maxProperties: 16,
                    additionalProperties: { type: 'string', maxLength: 63 },
                  },
                  ports: {
                    type: 'array',
                    maxItems: 8,
                    'x-kubernetes-list-type': 'map',
                    'x-kubernetes-list-map-keys': ['port'],
                    items: {
                      type: 'object',
                      required: ['port'],
                      properties: {
                        name: { type: 'string', maxLength: 15 },
                        port: { type: 'integer', minimum: 1, maximum: 65535 },
                      },
                    },
                  },
                },
              },
              status: { type: 'object', properties: { ready: { type: 'boolean' } } },
            },
          },
        },
      },
    ],
  },
};

const object = (i) => ({
  metadata: { name: `svc-${i}`, namespace: 'default' },
  spec: {
    name: `svc-${i}`,
    image: `registry.example.com/svc:${i}`,
    replicas: i % 7,
    ...(i % 3 === 0 ? { tier: 'gold' } : {}),
    labels: { app: `svc-${i}`, team: 'bench' },
    ports: [
      { name: 'http', port: 80 },
      { name: 'metrics', port: 8080 + (i % 10) },
    ],
  },
});

if (values.child) {
  const ms = (t) => Math.round(t * 10) / 10;
  const t0 = performance.now();
  const testing = fileURLToPath(new URL('../../runtime/dist/testing/index.js', import.meta.url));
  const { loadCrds, validate } = await import(pathToFileURL(testing).href);
  const kind = {
    group: 'bench.example.com',
    version: 'v1',
    apiVersion: 'bench.example.com/v1',
    kind: 'Service',
    plural: 'services',
    namespaced: true,
  };
  const t1 = performance.now();
  const cpu1 = process.cpuUsage();
  const crds = await loadCrds(CRD);
  const first = await validate(kind, object(0), { crds });
  if (!first.valid) throw new Error(`the bench's object is invalid: ${first.errors.join('; ')}`);
  const t2 = performance.now();
  const cpu = process.cpuUsage();
  const firstCpu = process.cpuUsage(cpu1);
  for (let i = 1; i <= objects; i++) {
    const verdict = await validate(kind, object(i), { crds });
    if (!verdict.valid) throw new Error(`object ${i} is invalid: ${verdict.errors.join('; ')}`);
  }
  const t3 = performance.now();
  const used = process.cpuUsage(cpu);
  const total = process.cpuUsage();
  console.log(
    JSON.stringify({
      import: ms(t1 - t0),
      first: ms(t2 - t1),
      objects: ms(t3 - t2),
      objectsCpu: ms((used.user + used.system) / 1000),
      firstCpu: ms((firstCpu.user + firstCpu.system) / 1000),
      totalCpu: ms((total.user + total.system) / 1000),
      // performance.now() counts from the process start.
      sinceStart: ms(t3),
    }),
  );
} else {
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const results = [];
  for (let r = 0; r < runs; r++) {
    const child = spawnSync(
      process.execPath,
      [fileURLToPath(import.meta.url), '--child', '--objects', String(objects)],
      {
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    if (child.status !== 0) throw new Error(child.stderr || `the bench's child exited ${child.status}`);
    results.push(JSON.parse(child.stdout));
  }
  const row = (key) => `${median(results.map((r) => r[key])).toFixed(0)} ms`;
  console.log(
    `validate(): ${objects} objects, ${RULES.length} CEL rules, median of ${runs} processes (Node ${process.version})\n`,
  );
  console.log(
    `| import @kubesmith/runtime/testing | first validate() (loads, compiles) | the ${objects} objects after it | from the process start |`,
  );
  console.log('| ---: | ---: | ---: | ---: |');
  console.log(
    `| ${row('import')} | ${row('first')} (${row('firstCpu')}) | ${row('objects')} (${row('objectsCpu')}) | ${row('sinceStart')} (${row('totalCpu')}) |`,
  );
}
