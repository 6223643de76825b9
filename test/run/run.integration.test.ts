/**
 * `kubesmith run` against a real API server (envtest): the golden project's defaulting, validating and
 * conversion webhooks called by kube-apiserver on the local port run serves them on, and the cluster put
 * back as it was after Ctrl-C, after SIGKILL and the next run, and with --watch across restarts and a build
 * error. The project is a copy of testdata/project whose defaulting sets a label and whose conversion to v2
 * an annotation, so that the test sees each webhook answer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { symlink } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEnvtest, type Envtest } from '../../runtime/src/envtest/index.js';
import { HttpClient, resourceKind, type KubernetesObject } from '../../runtime/src/index.js';
import { removeTemp, runWithEnv, tempDir } from '../helpers/run.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const CLI = path.join(REPO, 'bin/kubesmith.js');
const MUTATING = 'project-mutating-webhook-configuration';
const VALIDATING = 'project-validating-webhook-configuration';
const CRD = 'guestbooks.webapp.example.com';
const MANAGER_FLAGS = ['--', '--metrics-bind-address=0', '--health-probe-bind-address=0'];

const guestbooks = (version: string) =>
  resourceKind({
    group: 'webapp.example.com',
    version,
    kind: 'Guestbook',
    plural: 'guestbooks',
    namespaced: true,
  });
const mutatingKind = resourceKind({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'MutatingWebhookConfiguration',
  plural: 'mutatingwebhookconfigurations',
  namespaced: false,
});
const validatingKind = resourceKind({
  ...mutatingKind,
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
});
const crdKind = resourceKind({
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
});

type Obj = KubernetesObject & Record<string, unknown>;

let env: Envtest;
let client: HttpClient;
let dir: string;
/** The deployed operator's validating configuration, there before every run: run must put it back. */
let deployedValidating: Obj;

/** A run of the CLI in its own process, its output gathered. */
class CliRun {
  readonly child: ChildProcess;
  output = '';
  readonly exited: Promise<number | null>;

  constructor(args: string[]) {
    this.child = spawn(process.execPath, [CLI, 'run', ...args], {
      cwd: dir,
      env: { ...process.env, KUBECONFIG: env.kubeconfigPath, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.child.stderr!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  async waitFor(pattern: RegExp, timeout = 120_000): Promise<RegExpMatchArray> {
    let match: RegExpMatchArray | null = null;
    await expect
      .poll(() => (match = this.output.match(pattern)) !== null, { timeout, interval: 20 })
      .toBe(true)
      .catch(() => {
        throw new Error(`no ${pattern} in the output of kubesmith run:\n${this.output}`);
      });
    return match!;
  }

  /** Ctrl-C, and its exit code. */
  async interrupt(): Promise<number | null> {
    this.child.kill('SIGINT');
    return this.exited;
  }
}

async function getOrUndefined(kind: typeof crdKind, name: string): Promise<Obj | undefined> {
  try {
    return (await client.get(kind, name)) as Obj;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return undefined;
    throw error;
  }
}

function managers(object: Obj | undefined): string[] {
  return (object?.metadata?.managedFields ?? []).map((entry) => entry.manager ?? '');
}

/** What run must leave: as before the run (the CRD, which --install-crds installs, without run's conversion). */
async function expectPutBack(): Promise<void> {
  expect(await getOrUndefined(mutatingKind, MUTATING)).toBeUndefined();
  const validating = await getOrUndefined(validatingKind, VALIDATING);
  expect(validating?.['webhooks']).toEqual(deployedValidating['webhooks']);
  expect(validating?.metadata?.labels).toEqual(deployedValidating.metadata?.labels);
  expect(validating?.metadata?.managedFields).toEqual(deployedValidating.metadata?.managedFields);
  expect(validating?.metadata?.uid).toBe(deployedValidating.metadata?.uid);
  const crd = await getOrUndefined(crdKind, CRD);
  expect((crd?.['spec'] as { conversion?: unknown } | undefined)?.conversion).toEqual({ strategy: 'None' });
  expect(managers(crd)).not.toContain('kubesmith-run');
  expect(existsSync(path.join(dir, '.kubesmith/run/state.json'))).toBe(false);
  expect(existsSync(path.join(dir, '.kubesmith/run/certs'))).toBe(false);
}

let created = 0;
/** Creates a Guestbook; returns it, or the error the API server answered with. */
async function createGuestbook(name = `gb-${++created}`): Promise<Obj | Error> {
  try {
    return (await client.create(guestbooks('v1'), {
      apiVersion: 'webapp.example.com/v1',
      kind: 'Guestbook',
      metadata: { name, namespace: 'default' },
      spec: {},
    } as Obj)) as Obj;
  } catch (error) {
    return error as Error;
  }
}

/**
 * Creates Guestbooks until one is admitted through the defaulting webhook (it carries its label, `by`
 * unless the webhook was edited).
 */
async function firstDefaulted(timeout = 60_000, by = 'kubesmith-run'): Promise<Obj> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const result = await createGuestbook();
    if (!(result instanceof Error)) {
      if (result.metadata?.labels?.['defaulted-by'] === by) return result;
      await client.delete(guestbooks('v1'), result.metadata!.name!, 'default');
    }
    if (Date.now() > deadline)
      throw new Error(`no Guestbook defaulted within ${timeout} ms: ${String(result)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function edit(file: string, from: string, to: string): void {
  const full = path.join(dir, file);
  const text = readFileSync(full, 'utf8');
  if (!text.includes(from)) throw new Error(`${file} has no ${from}`);
  writeFileSync(full, text.replace(from, to));
}

/** A copy of the golden project beside the test's, with the repository's node_modules. */
async function copyProject(to: string): Promise<void> {
  cpSync(path.join(REPO, 'testdata/project'), to, {
    recursive: true,
    filter: (source) => !/[/\\](dist|\.kubesmith|node_modules)$/.test(source),
  });
  await symlink(path.join(REPO, 'node_modules'), path.join(to, 'node_modules'), 'dir');
}

beforeAll(async () => {
  dir = await tempDir('project');
  await copyProject(dir);
  edit(
    'src/api/webapp/v1/guestbook.webhook.ts',
    'guestbook.metadata ??= {};',
    "guestbook.metadata ??= {};\n  (guestbook.metadata.labels ??= {})['defaulted-by'] = 'kubesmith-run';",
  );
  edit(
    'src/api/webapp/v2/guestbook.conversion.ts',
    "return { ...hub, apiVersion: 'webapp.example.com/v2', spec: { ...hub.spec } };",
    "const annotations = { ...hub.metadata?.annotations, 'converted-by': 'kubesmith-run' };\n" +
      "  return { ...hub, apiVersion: 'webapp.example.com/v2', metadata: { ...hub.metadata, annotations }, spec: { ...hub.spec } };",
  );
  env = await startEnvtest();
  client = new HttpClient(env.kubeConfig);
  // As a deployed operator's, applied as `kubectl apply --server-side` does (its Service absent:
  // failurePolicy Ignore keeps creates working without run).
  deployedValidating = (await client.apply(
    validatingKind,
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: VALIDATING, labels: { deployed: 'yes' } },
      webhooks: [
        {
          name: 'vguestbook-v1.kb.io',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Ignore',
          clientConfig: {
            service: {
              namespace: 'project-system',
              name: 'project-webhook-service',
              path: '/validate-webapp-example-com-v1-guestbook',
            },
          },
          rules: [
            {
              apiGroups: ['webapp.example.com'],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE'],
              resources: ['guestbooks'],
            },
          ],
        },
      ],
    } as Obj,
    { fieldManager: 'kubectl' },
  )) as Obj;
}, 180_000);

afterAll(async () => {
  client?.close();
  await env?.stop();
  if (dir) await removeTemp(dir);
});

describe('kubesmith run --webhooks on a real API server', () => {
  it('serves the defaulting, validating and conversion webhooks, and puts everything back on Ctrl-C', async () => {
    const started = performance.now();
    const run = new CliRun(['--webhooks', '--install-crds', ...MANAGER_FLAGS]);
    await run.waitFor(/context envtest, server https:\/\/127\.0\.0\.1:\d+/);
    const defaulted = await firstDefaulted();
    const admittedMs = Math.round(performance.now() - started);
    console.log(`figure: run --webhooks --install-crds to the first admitted request: ${admittedMs} ms`);

    const refused = await createGuestbook(`gb-${'a'.repeat(70)}`);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/metadata\.name: Too long/);

    const v2 = (await client.get(guestbooks('v2'), defaulted.metadata!.name!, 'default')) as Obj;
    expect(v2.apiVersion).toBe('webapp.example.com/v2');
    expect(v2.metadata?.annotations?.['converted-by']).toBe('kubesmith-run');

    const validating = (await client.get(validatingKind, VALIDATING)) as Obj;
    const url = (validating['webhooks'] as { clientConfig: { url?: string } }[])[0]!.clientConfig.url;
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/validate-webapp-example-com-v1-guestbook$/);

    expect(await run.interrupt()).toBe(0);
    await expectPutBack();
  }, 240_000);

  it('puts back what a run killed with SIGKILL left changed, when the next run starts', async () => {
    const killed = new CliRun(['--webhooks', ...MANAGER_FLAGS]);
    const [, managerPid] = await killed.waitFor(/manager running \(pid (\d+)\)/);
    killed.child.kill('SIGKILL');
    await killed.exited;
    expect(existsSync(path.join(dir, '.kubesmith/run/state.json'))).toBe(true);
    expect(await getOrUndefined(mutatingKind, MUTATING)).toBeDefined();
    // The manager notices that run is gone and stops, rather than serving on as an orphan.
    await expect.poll(() => isAlive(Number(managerPid)), { timeout: 40_000, interval: 100 }).toBe(false);

    const next = new CliRun(['--webhooks', ...MANAGER_FLAGS]);
    await next.waitFor(/putting back what the previous run \(pid \d+\) left changed/);
    await next.waitFor(/manager running/);
    expect(await firstDefaulted()).toBeDefined();
    next.child.kill('SIGTERM');
    expect(await next.exited).toBe(0);
    await expectPutBack();
  }, 240_000);

  it('without --webhooks runs the manager with its webhooks left out, in one namespace', async () => {
    const run = new CliRun(['--namespace', 'default', ...MANAGER_FLAGS]);
    await run.waitFor(/manager running \(pid \d+\)/);
    await run.waitFor(/Started controllers/);
    expect(run.output).not.toMatch(/Registering webhook/);
    expect(await getOrUndefined(mutatingKind, MUTATING)).toBeUndefined();
    expect(await run.interrupt()).toBe(0);
    expect(run.output).not.toMatch(/error:/);
  }, 240_000);

  it('puts everything back when the manager crashes, and says so', async () => {
    const run = new CliRun(['--webhooks', ...MANAGER_FLAGS]);
    const [, managerPid] = await run.waitFor(/manager running \(pid (\d+)\)/);
    expect(await getOrUndefined(mutatingKind, MUTATING)).toBeDefined();
    process.kill(Number(managerPid), 'SIGKILL');
    expect(await run.exited).toBe(1);
    expect(run.output).toMatch(/error: the manager exited \(signal SIGKILL\)\nhint: /);
    await expectPutBack();
  }, 240_000);

  it('with --watch restarts the manager after an edit, and keeps it running through a build error', async () => {
    const run = new CliRun(['--webhooks', '--watch', ...MANAGER_FLAGS]);
    const [, firstPid] = await run.waitFor(/manager running \(pid (\d+)\)/);
    await firstDefaulted();

    // The defaulting webhook edited: the restarted manager answers with the edited code.
    const webhook = 'src/api/webapp/v1/guestbook.webhook.ts';
    const edited = performance.now();
    edit(webhook, "= 'kubesmith-run';", "= 'kubesmith-run-edited';");
    const [, rebuildMs, stopStartMs, restartedPid] = await run.waitFor(
      /rebuilt in (\d+) ms, manager restarted in (\d+) ms \(pid (\d+)\)/,
    );
    const restartedMs = Math.round(performance.now() - edited);
    expect(restartedPid).not.toBe(firstPid);
    await firstDefaulted(60_000, 'kubesmith-run-edited');
    console.log(
      `figure: run --watch --webhooks, edit to restarted manager: ${restartedMs} ms (rebuild ${rebuildMs} ms, ` +
        `stop and start ${stopStartMs} ms); to the first request admitted by the edited webhook: ` +
        `${Math.round(performance.now() - edited)} ms`,
    );
    // The old manager's stop did not wait for a drain: kubesmith run sets WEBHOOK_SHUTDOWN_DELAY_MS=0.
    expect(run.output).toMatch(/Draining webhook server.*shutdownDelayMs\W+0\b/);

    edit('src/main.ts', "mgr.logger.info('starting manager');", "const broken: number = 'text';");
    await run.waitFor(/error TS2322/);
    await run.waitFor(/the manager keeps running the previous build/);
    expect(isAlive(Number(restartedPid))).toBe(true);
    await firstDefaulted(60_000, 'kubesmith-run-edited');

    expect(await run.interrupt()).toBe(0);
    await expectPutBack();
    edit('src/main.ts', "const broken: number = 'text';", "mgr.logger.info('starting manager');");
    edit(webhook, "= 'kubesmith-run-edited';", "= 'kubesmith-run';");
  }, 240_000);
});

describe('kubesmith run refuses, with one line and nothing changed', () => {
  const runIn = (cwd: string, environment: NodeJS.ProcessEnv, ...args: string[]) =>
    runWithEnv({ ...process.env, NO_COLOR: '1', ...environment }, cwd, 'run', ...args);

  it('a webhook port in use', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const result = await runIn(
        dir,
        { KUBECONFIG: env.kubeconfigPath },
        '--webhooks',
        '--webhook-port',
        String(port),
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        new RegExp(`^error: port ${port} is in use: the webhooks cannot be served on it\\nhint: `),
      );
    } finally {
      server.close();
    }
    expect(await getOrUndefined(mutatingKind, MUTATING)).toBeUndefined();
  });

  it('no kubeconfig, and a server that does not answer', async () => {
    const home = path.join(path.dirname(dir), 'home');
    const none = await runIn(dir, { KUBECONFIG: '', HOME: home });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^error: no kubeconfig found.*\nhint: /);

    const kubeconfig = path.join(path.dirname(dir), 'unreachable.kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'gone', cluster: { server: 'https://127.0.0.1:1' } }],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'gone', context: { cluster: 'gone', user: 'u' } }],
        'current-context': 'gone',
      }),
    );
    const unreachable = await runIn(dir, { KUBECONFIG: kubeconfig }, '--webhooks');
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(
      /^error: cannot reach the API server https:\/\/127\.0\.0\.1:1 \(context gone\): .*\nhint: /,
    );
  });

  it('--webhooks in a project without webhooks', async () => {
    const plain = path.join(path.dirname(dir), 'plain');
    await copyProject(plain);
    writeFileSync(path.join(plain, 'config/webhook/manifests.yaml'), '');
    const project = readFileSync(path.join(plain, 'PROJECT'), 'utf8');
    writeFileSync(path.join(plain, 'PROJECT'), project.replace('conversion: true', 'conversion: false'));
    const result = await runIn(plain, { KUBECONFIG: env.kubeconfigPath }, '--webhooks');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: --webhooks: the project has no webhooks .*\nhint: /);
    expect(await getOrUndefined(mutatingKind, MUTATING)).toBeUndefined();
  });

  it('a build error, before the cluster is changed; and a planted state file changes nothing either', async () => {
    const broken = path.join(path.dirname(dir), 'broken');
    await copyProject(broken);
    writeFileSync(path.join(broken, 'src/main.ts'), "const broken: number = 'text';\n", { flag: 'a' });
    // A state file from a pull request, claiming run created another operator's configuration.
    const foreign = 'someone-elses-webhooks';
    await client.apply(
      mutatingKind,
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: foreign },
      },
      { fieldManager: 'kubectl' },
    );
    mkdirSync(path.join(broken, '.kubesmith/run'), { recursive: true });
    writeFileSync(
      path.join(broken, '.kubesmith/run/state.json'),
      JSON.stringify({
        pid: 2 ** 22 + 1, // above Linux's pid_max: no such process
        server: env.kubeConfig.getCurrentCluster()!.server,
        changed: [{ kind: 'MutatingWebhookConfiguration', name: foreign, original: null }],
      }),
    );
    const result = await runIn(broken, { KUBECONFIG: env.kubeconfigPath }, '--webhooks', '--install-crds');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/error TS2322/);
    expect(result.stderr).toMatch(/error: the build failed with 1 error\nhint: /);
    expect(await getOrUndefined(mutatingKind, MUTATING)).toBeUndefined();
    expect(await getOrUndefined(mutatingKind, foreign)).toBeDefined();
    expect(existsSync(path.join(broken, '.kubesmith/run/state.json'))).toBe(false);
  }, 120_000);
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
