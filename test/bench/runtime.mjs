/**
 * `npm run bench:runtime`: the runtime against a real kube-apiserver (envtest). For 1,000 and 10,000
 * custom resources (~1 KB each): the time for a manager's cache to sync, the time until a no-op reconciler
 * has seen every object, memory per cached object, and the time of a read through the manager's client
 * (from the cache, deep copy included); and the work queue's own cost per item.
 * Options: --sizes 1000,10000.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { groupVersion, HttpClient, WorkQueue } from '@kubesmith/runtime';
import { startEnvtest } from '@kubesmith/runtime/envtest';

const { values } = parseArgs({ options: { sizes: { type: 'string', default: '1000,10000' } } });
const sizes = values.sizes.split(',').map(Number);
const child = fileURLToPath(new URL('./runtime-child.mjs', import.meta.url));
const Widget = groupVersion('bench.example.com', 'v1').kind('Widget', { plural: 'widgets' });

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.bench.example.com' },
  spec: {
    group: 'bench.example.com',
    names: { kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

/** A ~1.1 KB object, as KUBERNETES.md's measurements used. */
function widget(i) {
  return {
    apiVersion: Widget.apiVersion,
    kind: 'Widget',
    metadata: { name: `widget-${i}`, namespace: 'default', labels: { app: 'bench', shard: String(i % 16) } },
    spec: { replicas: i % 7, image: `registry.example.com/bench/widget:${i}`, note: 'x'.repeat(800) },
  };
}

/** The work queue alone: add, get and done of distinct keys, in ns per item. */
async function queueCost(items) {
  const queue = new WorkQueue();
  const started = process.hrtime.bigint();
  for (let i = 0; i < items; i++) queue.add(`ns/key-${i}`);
  for (let i = 0; i < items; i++) queue.done(await queue.get());
  return Number(process.hrtime.bigint() - started) / items;
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-bench-runtime-'));
const env = await startEnvtest({ crds: [CRD] });
const rows = [];
try {
  const kubeconfigPath = path.join(dir, 'kubeconfig');
  await writeFile(kubeconfigPath, env.kubeConfig.exportConfig());
  const client = new HttpClient(env.kubeConfig);
  let created = 0;
  for (const size of sizes) {
    const startedCreate = performance.now();
    const todo = Array.from({ length: size - created }, (_, k) => created + k);
    for (let i = 0; i < todo.length; i += 32) {
      await Promise.all(todo.slice(i, i + 32).map((n) => client.create(Widget, widget(n))));
    }
    const createMs = performance.now() - startedCreate;
    created = size;
    const result = spawnSync(process.execPath, ['--expose-gc', child, kubeconfigPath, String(size)], {
      encoding: 'utf8',
    });
    if (result.status !== 0) throw new Error(`runtime-child failed:\n${result.stderr}`);
    rows.push({ ...JSON.parse(result.stdout), createPerSec: todo.length / (createMs / 1000) });
    process.stderr.write(`measured ${size} objects\n`);
  }
} finally {
  await env.stop();
  await rm(dir, { recursive: true, force: true });
}
const perItem = await queueCost(1_000_000);

const lines = [
  `Node ${process.version}, ${os.cpus().length} CPUs, kube-apiserver from envtest on loopback.`,
  '',
  '| objects | cache synced | all reconciled once | reconcile throughput | RSS idle -> loaded | heap per object | RSS per object | mgr.client.get |',
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map(
    (r) =>
      `| ${r.count} | ${(r.syncMs / 1000).toFixed(2)} s | ${(r.reconcileAllMs / 1000).toFixed(2)} s | ` +
      `${Math.round(r.count / (r.drainMs / 1000))}/s | ${Math.round(r.rssIdleMiB)} -> ${Math.round(r.rssLoadedMiB)} MiB | ` +
      `${(((r.heapLoadedMiB - r.heapIdleMiB) * 1024) / r.count).toFixed(1)} KiB | ` +
      `${(((r.rssLoadedMiB - r.rssIdleMiB) * 1024) / r.count).toFixed(1)} KiB | ` +
      `${(r.cacheGetNs / 1000).toFixed(1)} us |`,
  ),
  '',
  `Work queue alone: ${perItem.toFixed(0)} ns per item (add, get, done; 1,000,000 distinct keys).`,
];
process.stdout.write(`${lines.join('\n')}\n`);
