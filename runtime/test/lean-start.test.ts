/**
 * The runtime starts without @kubernetes/client-node, whose import alone costs about two seconds and
 * 70 MiB: a child process imports the built runtime (runtime/dist, what `npm run build` makes), loads a
 * kubeconfig and makes a manager, under a module resolve hook that fails any import resolving into
 * client-node. Types from client-node are fine: they are gone from the built JavaScript.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const runtimeDist = fileURLToPath(new URL('../dist/index.js', import.meta.url));

/** A resolve hook that refuses client-node, naming who imported it. */
const HOOK = `
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.includes('/@kubernetes/client-node/')) {
    throw new Error('client-node loaded: ' + specifier + ' imported by ' + context.parentURL);
  }
  return resolved;
}`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'lean-start-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A kubeconfig in `dir` (JSON, as client-node's exportConfig writes it) for a cluster at a closed port of
 * 127.0.0.1, with a token user unless `user` says otherwise; returns its path.
 */
function writeKubeconfig(name: string, user: Record<string, unknown> = { token: 't' }): string {
  const kubeconfig = path.join(dir, name);
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'a', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'a',
    }),
  );
  return kubeconfig;
}

function runChild(body: string): string {
  const script = `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOK)}));
const runtime = await import(${JSON.stringify(pathToFileURL(runtimeDist).href)});
${body}
console.log('ok');
`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, KUBECONFIG: '', HOME: dir },
  });
}

describe('a lean start', () => {
  it('importing the runtime, loading a kubeconfig and making a manager load no client-node module', () => {
    expect(existsSync(runtimeDist), 'runtime/dist is missing: run `npm run build`').toBe(true);
    const kubeconfig = path.join(dir, 'config');
    writeFileSync(
      kubeconfig,
      [
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: a, context: {cluster: c, user: u}}]',
        'current-context: a',
      ].join('\n'),
    );
    const out = runChild(`
const config = runtime.loadKubeConfig({ kubeconfig: ${JSON.stringify(kubeconfig)} });
const settings = await config.connection();
if (settings.headers.Authorization !== 'Bearer t') throw new Error('no token');
new runtime.Manager({ kubeConfig: config, metrics: { bindAddress: '0' }, healthProbeBindAddress: '0', handleSignals: false });
`);
    expect(out.trim()).toBe('ok');
  });

  it("importing the runtime loads none of Node's HTTP, TLS, HTTP/2, crypto or child process modules", () => {
    // They cost most of an import's time; a process loads them when it first serves or calls something.
    const out = runChild(`
const heavy = ['http', 'https', 'http2', 'tls', 'crypto', 'child_process'];
console.log(heavy.filter((name) => process.moduleLoadList.includes('NativeModule ' + name)).join(',') || 'none');
`);
    expect(out.trim().split('\n')).toEqual(['none', 'ok']);
  });

  it("importing the runtime reads three of its files and builds no ES face of Node's fs, os or module", () => {
    // Node's ES module loader resolves, reads and compiles each file in turn: the runtime's dist is a
    // bundle (runtime/scripts/build.mjs), its main entry re-exporting one shared chunk. And an ES import
    // of node:fs reads every export, loading Node's streams (internal/node-modules.ts takes fs as require
    // does); node:os waits for its first use.
    const hook = `export async function load(url, context, next) {
      if (url.startsWith(${JSON.stringify(pathToFileURL(path.dirname(runtimeDist)).href)})) process.stderr.write('runtime file ' + url + '\\n');
      return next(url, context);
    }`;
    // Two children: module.register itself loads Node's streams.
    const script = `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
await import(${JSON.stringify(pathToFileURL(runtimeDist).href)});
`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(child.status, child.stderr).toBe(0);
    const files = child.stderr.split('\n').filter((line) => line.startsWith('runtime file '));
    expect(files.length, files.join('\n')).toBeGreaterThanOrEqual(2);
    expect(files.length, files.join('\n')).toBeLessThanOrEqual(3);
    const builtins = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `await import(${JSON.stringify(pathToFileURL(runtimeDist).href)});
console.log(['stream', 'os'].filter((name) => process.moduleLoadList.includes('NativeModule ' + name)).join(',') || 'none');`,
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(builtins.trim()).toBe('none');
  });

  it('making a manager and its controllers loads no prom-client; a read of its metrics loads the registry, not its default metrics or cluster code', () => {
    // prom-client's registry and metrics (~10 ms with the series a controller declares) come with the
    // first scrape, off the start to synced caches. Its index would load default metrics, Pushgateway and
    // cluster aggregation too: 100 to 300 ms, for features the runtime does not use.
    const kubeconfig = writeKubeconfig('metrics');
    const out = runChild(`
const { createRequire } = await import('node:module');
const loaded = () => Object.keys(createRequire(import.meta.url).cache).filter((file) => file.includes('prom-client'));
const kubeConfig = runtime.loadKubeConfig({ kubeconfig: ${JSON.stringify(kubeconfig)} });
const mgr = new runtime.Manager({ kubeConfig, handleSignals: false });
const Widget = runtime.groupVersion('example.com', 'v1').kind('Widget', { plural: 'widgets' });
runtime.controllerManagedBy(mgr).for(Widget).complete({ reconcile: async () => {} });
console.log(loaded().length);
const text = await mgr.metrics.render();
console.log(loaded().some((file) => file.endsWith('registry.js')), loaded().filter((file) => /index|cluster|defaultMetrics|pushgateway/.test(file)).length, text.includes('controller_runtime_reconcile_total{controller="widget",result="success"} 0'));
`);
    expect(out.trim().split('\n')).toEqual(['0', 'true 0 true', 'ok']);
  });

  it("making a manager with a logger of its own leaves stderr alone: no stream of Node's is loaded", () => {
    // A default logger looks at stderr (is it a terminal?), which makes process.stderr: Node's streams
    // and, on a pipe, net, a few ms of a start. The webhook server's defaults made one and threw it away.
    const kubeconfig = writeKubeconfig('own-logger');
    // No resolve hook (runChild's): module.register itself loads Node's streams. stderr is a pipe here.
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const runtime = await import(${JSON.stringify(pathToFileURL(runtimeDist).href)});
const kubeConfig = runtime.loadKubeConfig({ kubeconfig: ${JSON.stringify(kubeconfig)} });
const lines = [];
new runtime.Manager({ kubeConfig, handleSignals: false, logger: runtime.createLogger({ write: (line) => lines.push(line) }) });
console.log(['stream', 'net', 'tty'].filter((name) => process.moduleLoadList.includes('NativeModule ' + name)).join(',') || 'none');`,
      ],
      { encoding: 'utf8', timeout: 30_000, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    expect(out.trim()).toBe('none');
  });

  it("a manager's start takes Node's HTTP and TLS modules as require does: no ES import of them", () => {
    // An ES import of a built-in module builds its ES face, which reads every export; from Node 22,
    // node:http's exports include lazy getters for undici's WebSocket, so importing node:http loaded
    // Node's whole fetch implementation (about 35 ms and 7 MiB of a start on Node 22 and 24). A resolve
    // hook sees every ES import, on any Node: the start (probes, metrics, the informers' first
    // connection to a closed port) must resolve none of them.
    const kubeconfig = writeKubeconfig('builtins');
    const hook = `export async function resolve(specifier, context, next) {
      if (/^node:(http|https|http2|tls)$/.test(specifier)) process.stderr.write('imported ' + specifier + '\\n');
      return next(specifier, context);
    }`;
    const script = `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
const runtime = await import(${JSON.stringify(pathToFileURL(runtimeDist).href)});
const kubeConfig = runtime.loadKubeConfig({ kubeconfig: ${JSON.stringify(kubeconfig)} });
const mgr = new runtime.Manager({
  kubeConfig,
  handleSignals: false,
  metrics: { bindAddress: '127.0.0.1:0' },
  healthProbeBindAddress: '127.0.0.1:0',
  logger: runtime.createLogger({ write: () => {} }),
});
const Widget = runtime.groupVersion('example.com', 'v1').kind('Widget', { plural: 'widgets' });
runtime.controllerManagedBy(mgr).for(Widget).complete({ reconcile: async () => {} });
void mgr.start().catch(() => {});
const until = Date.now() + 10_000;
while (!['http', 'https', 'tls'].every((name) => process.moduleLoadList.includes('NativeModule ' + name))) {
  if (Date.now() > until) throw new Error('the start loaded no http, https and tls');
  await new Promise((resolve) => setTimeout(resolve, 20));
}
await mgr.stop();
console.log('ok');
`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(child.stdout.trim(), child.stderr).toBe('ok');
    expect(child.stderr.split('\n').filter((line) => line.startsWith('imported '))).toEqual([]);
  });

  it('a kubeconfig as kubectl writes it is read without the yaml package (~60 ms to load); an anchor loads it', () => {
    const kubectlStyle = [
      'apiVersion: v1',
      'clusters:',
      '- cluster:',
      '    server: https://127.0.0.1:1',
      '  name: c',
      'contexts:',
      '- context:',
      '    cluster: c',
      '    user: u',
      '  name: a',
      'current-context: a',
      'kind: Config',
      'preferences: {}',
      'users:',
      '- name: u',
      '  user:',
      '    token: t',
      '',
    ].join('\n');
    const anchored = kubectlStyle.replace('- context:', '- context: &ctx');
    const yamlLoaded = (text: string, name: string) => {
      const kubeconfig = path.join(dir, name);
      writeFileSync(kubeconfig, text);
      return runChild(`
const { createRequire } = await import('node:module');
const config = runtime.loadKubeConfig({ kubeconfig: ${JSON.stringify(kubeconfig)} });
if ((await config.connection()).headers.Authorization !== 'Bearer t') throw new Error('no token');
console.log(Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes('/node_modules/yaml/')));
`)
        .trim()
        .split('\n');
    };
    expect(yamlLoaded(kubectlStyle, 'kubectl-style')).toEqual(['false', 'ok']);
    expect(yamlLoaded(anchored, 'anchored')).toEqual(['true', 'ok']);
  });

  it('the hook would see client-node: a legacy auth-provider loads it, and only then', () => {
    const kubeconfig = writeKubeconfig('legacy', {
      'auth-provider': { name: 'oidc', config: { 'id-token': 'x' } },
    });
    const child = `const config = runtime.loadKubeConfig({ kubeconfig: ${JSON.stringify(kubeconfig)} });`;
    expect(runChild(child).trim()).toBe('ok');
    expect(() => runChild(`${child}\nawait config.connection();`)).toThrow(/client-node loaded/);
  });
});
