/**
 * `kubesmith helm-chart`: the chart of the quick-start project (plus a core Pod controller and a webhook),
 * checked with the real helm (built from Go modules by `npm run helm`) against a real API server in
 * envtest's cluster mode: helm lint, helm template with the defaults and with each boolean value flipped,
 * every rendering applied with `kubectl apply --dry-run=server`, then helm install (the manager Deployment
 * becomes Available on kwok's fake nodes), helm upgrade after `create api`, and helm uninstall (the CRDs
 * stay: crd.keep). One envtest serves every test of the file.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryAssetsOrSkip, startEnvtest, type Envtest } from '../../runtime/src/envtest/index.js';
import { helmOrSkip } from '../helpers/helm.js';
import { read, removeTemp, run, runWithoutTools, snapshot, tempDir } from '../helpers/run.js';
import { standInCrd } from '../helpers/stand-in-crds.js';

// kubectl (for kustomize) comes with the envtest binaries; the API server tests need cluster mode.
const assets = binaryAssetsOrSkip();
const binaries = assets === undefined ? undefined : binaryAssetsOrSkip({ controllers: true });
const helm = assets === undefined ? undefined : helmOrSkip();
const IMAGE = 'registry.example.com/guestbook-operator:v1.2.3';
const NAMESPACE = 'guestbook-system';

let dir: string;
beforeAll(async () => {
  dir = await tempDir('guestbook');
  for (const args of [
    ['init', '--domain', 'example.com', '--skip-install'],
    ['create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook'],
    [
      'create',
      'api',
      '--group',
      'core',
      '--version',
      'v1',
      '--kind',
      'Pod',
      '--resource=false',
      '--controller',
    ],
    [
      ...['create', 'webhook', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook'],
      ...['--defaulting', '--programmatic-validation'],
    ],
  ]) {
    const result = await run(dir, ...args);
    expect(result.code, result.stderr).toBe(0);
  }
}, 120_000);
afterAll(async () => {
  await removeTemp(dir);
});

const helmRun = (...args: string[]) => execa(helm!, args, { reject: false, all: true, cwd: dir });

describe.skipIf(helm === undefined)('kubesmith helm-chart', () => {
  it('writes dist/chart/ from config/default, the same bytes every time, and helm lint passes', async () => {
    const first = await run(dir, 'helm-chart', '--img', IMAGE);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/^create {5}dist\/chart\/Chart\.yaml$/m);
    const files = await snapshot(path.join(dir, 'dist/chart'));
    expect(Object.keys(files).sort()).toEqual([
      '.helmignore',
      '.kubesmith-files',
      'Chart.yaml',
      'templates/NOTES.txt',
      'templates/_helpers.tpl',
      'templates/certmanager/selfsigned-issuer.yaml',
      'templates/certmanager/serving-cert.yaml',
      'templates/crd/guestbooks.webapp.example.com.yaml',
      'templates/manager/manager.yaml',
      'templates/metrics/controller-manager-metrics-service.yaml',
      'templates/network-policy/allow-metrics-traffic.yaml',
      'templates/network-policy/allow-webhook-traffic.yaml',
      'templates/prometheus/controller-manager-metrics-monitor.yaml',
      'templates/rbac/controller-manager.yaml',
      'templates/rbac/guestbook-admin-role.yaml',
      'templates/rbac/guestbook-editor-role.yaml',
      'templates/rbac/guestbook-viewer-role.yaml',
      'templates/rbac/leader-election-role.yaml',
      'templates/rbac/leader-election-rolebinding.yaml',
      'templates/rbac/manager-role.yaml',
      'templates/rbac/manager-rolebinding.yaml',
      'templates/rbac/metrics-auth-role.yaml',
      'templates/rbac/metrics-auth-rolebinding.yaml',
      'templates/rbac/metrics-reader.yaml',
      'templates/webhook/mutating-webhook-configuration.yaml',
      'templates/webhook/validating-webhook-configuration.yaml',
      'templates/webhook/webhook-service.yaml',
      'values.yaml',
    ]);
    expect(files['values.yaml']).toMatch(
      /^ {4}repository: registry\.example\.com\/guestbook-operator\n {4}# .*\n {4}tag: v1\.2\.3$/m,
    );
    const again = await run(dir, 'helm-chart', '--img', IMAGE, '--json');
    expect(again.code, again.stderr).toBe(0);
    const result = JSON.parse(again.stdout) as { files: { action: string }[] };
    expect(new Set(result.files.map((file) => file.action))).toEqual(new Set(['unchanged']));
    expect(await snapshot(path.join(dir, 'dist/chart'))).toEqual(files);

    const lint = await helmRun('lint', '--strict', 'dist/chart');
    expect(lint.exitCode, String(lint.all)).toBe(0);
    expect(String(lint.all)).toContain('1 chart(s) linted, 0 chart(s) failed');
  });

  it("kubebuilder's name works too, and an unknown plugin is a usage error", async () => {
    const same = await run(dir, 'edit', '--plugins', 'helm/v2-alpha', '--img', IMAGE, '--json');
    expect(same.code, same.stderr).toBe(0);
    const bad = await run(dir, 'edit', '--plugins', 'go/v4');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      'error: unknown plugin "go/v4" for edit\nhint: kubesmith edit knows two plugins',
    );
  });

  it('keeps Chart.yaml and the values.yaml keys the user set; drops keys that no longer exist', async () => {
    const chartYaml = path.join(dir, 'dist/chart/Chart.yaml');
    await writeFile(
      chartYaml,
      (await readFile(chartYaml, 'utf8')).replace('version: 0.1.0', 'version: 0.7.0'),
    );
    const valuesYaml = path.join(dir, 'dist/chart/values.yaml');
    const values = await readFile(valuesYaml, 'utf8');
    await writeFile(
      valuesYaml,
      values.replace('replicas: 1', 'replicas: 2').replace(/(prometheus:\n {2}enable:) false/, '$1 true') +
        'leftOver:\n  enable: true\n',
    );
    const result = await run(dir, 'helm-chart');
    expect(result.code, result.stderr).toBe(0);
    expect(await read(dir, 'dist/chart/Chart.yaml')).toContain('version: 0.7.0');
    const merged = await read(dir, 'dist/chart/values.yaml');
    expect(merged).toContain('replicas: 2');
    expect(merged).toMatch(/prometheus:\n {2}enable: true/);
    // Without --img the image the user's values.yaml has stays.
    expect(merged).toContain('registry.example.com/guestbook-operator');
    expect(merged).not.toContain('leftOver');
    await writeFile(valuesYaml, values);
  });

  it('removes the template of an object config/ no longer renders', async () => {
    const kustomization = path.join(dir, 'config/network-policy/kustomization.yaml');
    const original = await readFile(kustomization, 'utf8');
    const template = 'dist/chart/templates/network-policy/allow-webhook-traffic.yaml';
    expect(existsSync(path.join(dir, template))).toBe(true);
    await writeFile(kustomization, original.replace('- allow-webhook-traffic.yaml\n', ''));
    try {
      const result = await run(dir, 'helm-chart');
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain(`remove     ${template} (no longer generated)`);
      expect(existsSync(path.join(dir, template))).toBe(false);
      expect(await read(dir, 'dist/chart/.kubesmith-files')).not.toContain('allow-webhook-traffic');
    } finally {
      await writeFile(kustomization, original);
    }
    expect((await run(dir, 'helm-chart')).code).toBe(0);
    expect(existsSync(path.join(dir, template))).toBe(true);
  });

  describe('bad input: one line, and nothing written', () => {
    it.each([['Registry.example.com/UPPER:v1'], ['guestbook:'], ['a b']])('the image %s', async (image) => {
      const result = await run(dir, 'helm-chart', '--img', image, '--output', 'dist/bad-chart');
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        `error: invalid image reference "${image}"\nhint: give [registry[:port]/]name[:tag][@sha256:digest] with a lower-case name, e.g. registry.example.com/guestbook-operator:v0.1.0\n`,
      );
      expect(existsSync(path.join(dir, 'dist/bad-chart'))).toBe(false);
    });

    it('a file in the chart directory that kubesmith did not write', async () => {
      const before = await snapshot(path.join(dir, 'dist/chart'));
      await writeFile(path.join(dir, 'dist/chart/templates/mine.yaml'), 'kind: ConfigMap\n');
      try {
        const result = await run(dir, 'helm-chart', '--img', 'other:v9');
        expect(result.code).toBe(1);
        expect(result.stderr).toBe(
          'error: dist/chart/templates/mine.yaml was not written by kubesmith helm-chart\n' +
            'hint: kubesmith regenerates dist/chart from config/: move your files out of it (put resources in config/ instead), or write the chart elsewhere with --output; nothing was written\n',
        );
        const after = await snapshot(path.join(dir, 'dist/chart'));
        delete after['templates/mine.yaml'];
        expect(after).toEqual(before);
      } finally {
        await import('node:fs/promises').then((fs) =>
          fs.rm(path.join(dir, 'dist/chart/templates/mine.yaml')),
        );
      }
    });

    it('a template edited by hand: a conflict unless --force', async () => {
      const file = path.join(dir, 'dist/chart/templates/rbac/manager-role.yaml');
      const original = await readFile(file, 'utf8');
      await writeFile(file, `${original}# my edit\n`);
      const before = await snapshot(path.join(dir, 'dist/chart'));
      const result = await run(dir, 'helm-chart', '--img', 'other:v9');
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        'error: dist/chart/templates/rbac/manager-role.yaml was edited since kubesmith wrote it\nhint: make the change in config/ or values.yaml and run again, or pass --force to overwrite; nothing was written\n',
      );
      expect(await snapshot(path.join(dir, 'dist/chart'))).toEqual(before);
      const forced = await run(dir, 'helm-chart', '--img', IMAGE, '--force');
      expect(forced.code, forced.stderr).toBe(0);
      expect(await readFile(file, 'utf8')).toBe(original);
    });

    it('a chart directory kubesmith never wrote (no .kubesmith-files)', async () => {
      const other = path.join(dir, 'charts/handmade');
      await mkdir(path.join(other, 'templates'), { recursive: true });
      await writeFile(path.join(other, 'Chart.yaml'), 'apiVersion: v2\nname: handmade\nversion: 1.0.0\n');
      await writeFile(path.join(other, 'templates/a.yaml'), 'kind: ConfigMap\n');
      const before = await snapshot(other);
      const result = await run(dir, 'helm-chart', '--output', 'charts/handmade');
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^error: 2 files in charts\/handmade were not written by kubesmith helm-chart: charts\/handmade\/Chart\.yaml, charts\/handmade\/templates\/a\.yaml\nhint: .*nothing was written\n$/,
      );
      expect(await snapshot(other)).toEqual(before);
    });

    it('--dry-run prints the plan and writes nothing', async () => {
      const result = await run(dir, 'helm-chart', '--dry-run', '--output', 'dist/dry');
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/^create {5}dist\/dry\/templates\/manager\/manager\.yaml$/m);
      expect(existsSync(path.join(dir, 'dist/dry'))).toBe(false);
    });

    it('no kubectl', async () => {
      const result = await runWithoutTools(dir, 'helm-chart', '--output', 'dist/none');
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        'error: no kubectl found: it renders config/default (kubectl kustomize)\n' +
          'hint: run `npx kubesmith envtest` (it provides kubectl beside etcd and kube-apiserver), or install kubectl (https://kubernetes.io/docs/tasks/tools/)\n',
      );
      expect(existsSync(path.join(dir, 'dist/none'))).toBe(false);
    });
  });

  describe.skipIf(binaries === undefined)('against an API server (envtest cluster mode)', () => {
    let env: Envtest;
    const kubectl = (...args: string[]) =>
      execa(path.join(binaries!, 'kubectl'), ['--kubeconfig', env.kubeconfigPath, ...args], {
        reject: false,
        all: true,
      });
    const helmIn = (...args: string[]) => helmRun(...args, '--kubeconfig', env.kubeconfigPath);

    beforeAll(async () => {
      env = await startEnvtest({ binaryAssetsDirectory: binaries!, controllers: true });
      // cert-manager's Certificate and Issuer and the Prometheus operator's ServiceMonitor are not part of
      // the operator: stand-in CRDs (any spec accepted) make their kinds known, so dry-run and install
      // check everything else of those objects (names, namespaces, labels) but not their specs.
      const crds = path.join(env.directory, 'stand-in-crds.json');
      await writeFile(
        crds,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'List',
          items: [
            standInCrd('cert-manager.io', 'Certificate', 'certificates'),
            standInCrd('cert-manager.io', 'Issuer', 'issuers'),
            standInCrd('monitoring.coreos.com', 'ServiceMonitor', 'servicemonitors'),
          ],
        }),
      );
      expect((await kubectl('apply', '-f', crds)).exitCode).toBe(0);
      expect(
        (await kubectl('wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s')).exitCode,
      ).toBe(0);
      // dry-run=server of namespaced objects needs their namespace.
      expect((await kubectl('create', 'namespace', NAMESPACE)).exitCode).toBe(0);
    }, 180_000);
    afterAll(async () => {
      await env?.stop();
    }, 30_000);

    it('helm template with the defaults and each boolean flipped: the API server accepts every rendering', async () => {
      expect((await run(dir, 'helm-chart', '--img', IMAGE)).code).toBe(0);
      const flips: [string, string][] = [
        ['(defaults)', ''],
        ['leaderElection.enable', 'false'],
        ['metrics.enable', 'false'],
        ['webhook.enable', 'false'],
        ['certManager.enable', 'false'],
        ['prometheus.enable', 'true'],
        ['networkPolicy.enable', 'true'],
        ['crd.enable', 'false'],
        ['crd.keep', 'false'],
      ];
      const rows: string[] = [];
      const kinds = new Map<string, string[]>();
      for (const [value, setting] of flips) {
        const set = setting ? ['--set', `${value}=${setting}`] : [];
        const rendered = await helmRun('template', 'guestbook', 'dist/chart', '-n', NAMESPACE, ...set);
        expect(rendered.exitCode, `${value}: ${String(rendered.all)}`).toBe(0);
        const file = path.join(env.directory, `rendered-${value}.yaml`);
        await writeFile(file, String(rendered.stdout));
        const documentKinds = [...String(rendered.stdout).matchAll(/^kind: (\S+)$/gm)].map((m) => m[1]!);
        kinds.set(value, documentKinds);
        const applied = await kubectl('apply', '--dry-run=server', '-f', file);
        expect(applied.exitCode, `${value}: ${String(applied.all)}`).toBe(0);
        rows.push(
          `${value}${setting ? `=${setting}` : ''}: ${documentKinds.length} objects, dry-run=server accepted`,
        );
      }
      console.log(`helm template matrix:\n  ${rows.join('\n  ')}`);
      const count = (value: string, kind: string) => kinds.get(value)!.filter((k) => k === kind).length;
      const defaults = kinds.get('(defaults)')!;
      // Each value switches what it says, and only that.
      expect(defaults).not.toContain('ServiceMonitor');
      expect(defaults).not.toContain('NetworkPolicy');
      expect(count('prometheus.enable', 'ServiceMonitor')).toBe(1);
      expect(count('networkPolicy.enable', 'NetworkPolicy')).toBe(2);
      expect(kinds.get('webhook.enable')).not.toContain('MutatingWebhookConfiguration');
      expect(kinds.get('webhook.enable')).not.toContain('Certificate');
      expect(kinds.get('certManager.enable')).not.toContain('Issuer');
      expect(kinds.get('certManager.enable')).toContain('ValidatingWebhookConfiguration');
      expect(kinds.get('crd.enable')).not.toContain('CustomResourceDefinition');
      expect(kinds.get('leaderElection.enable')!.length).toBe(defaults.length - 2);
      expect(kinds.get('metrics.enable')!.length).toBe(defaults.length - 4);
      expect(kinds.get('crd.keep')!.length).toBe(defaults.length);

      // The name overrides reach every name and reference, and the Deployment's selector still matches.
      const renamed = await helmRun(
        ...['template', 'guestbook', 'dist/chart', '-n', NAMESPACE],
        ...['--set', 'fullnameOverride=ops,nameOverride=op'],
      );
      expect(renamed.exitCode, String(renamed.all)).toBe(0);
      const text = String(renamed.stdout);
      expect(text).toContain('name: "ops-controller-manager"');
      expect(text).toContain('serviceAccountName: "ops-controller-manager"');
      expect(text).toContain('name: "ops-webhook-service"');
      // Every name the chart makes is quoted: none keeps the chart name (the chart label and sources do).
      expect(text).not.toMatch(/"guestbook-(?!system)/);
      const file = path.join(env.directory, 'rendered-renamed.yaml');
      await writeFile(file, text);
      const applied = await kubectl('apply', '--dry-run=server', '-f', file);
      expect(applied.exitCode, String(applied.all)).toBe(0);
    }, 120_000);

    it('helm install: the manager becomes available; upgrade after create api adds the CRD; uninstall keeps CRDs', async () => {
      const installed = await helmIn('install', 'guestbook', 'dist/chart', '-n', NAMESPACE);
      expect(installed.exitCode, String(installed.all)).toBe(0);
      const started = Date.now();
      const available = await kubectl(
        ...['-n', NAMESPACE, 'wait', '--for=condition=Available'],
        ...['deployment/guestbook-controller-manager', '--timeout=60s'],
      );
      expect(available.exitCode, String(available.all)).toBe(0);
      console.log(`helm install: manager Deployment available ${Date.now() - started} ms after install`);
      const pods = await kubectl(
        ...['-n', NAMESPACE, 'get', 'pods', '-l', 'control-plane=controller-manager'],
        ...['-o', 'jsonpath={.items[*].spec.containers[0].image}'],
      );
      expect(String(pods.stdout)).toBe(IMAGE);
      const labels = await kubectl(
        'get',
        'clusterrole',
        'guestbook-manager-role',
        '-o',
        'jsonpath={.metadata.labels}',
      );
      expect(JSON.parse(String(labels.stdout))).toMatchObject({
        'app.kubernetes.io/instance': 'guestbook',
        'app.kubernetes.io/managed-by': 'Helm',
        'app.kubernetes.io/name': 'guestbook',
        // The version the user gave Chart.yaml in the test above.
        'helm.sh/chart': 'guestbook-0.7.0',
      });

      const created = await run(
        dir,
        'create',
        'api',
        '--group',
        'webapp',
        '--version',
        'v1',
        '--kind',
        'Library',
      );
      expect(created.code, created.stderr).toBe(0);
      const regenerated = await run(dir, 'helm-chart');
      expect(regenerated.code, regenerated.stderr).toBe(0);
      expect(regenerated.stderr).toMatch(
        /^create {5}dist\/chart\/templates\/crd\/libraries\.webapp\.example\.com\.yaml$/m,
      );
      const upgraded = await helmIn('upgrade', 'guestbook', 'dist/chart', '-n', NAMESPACE);
      expect(upgraded.exitCode, String(upgraded.all)).toBe(0);
      const crd = await kubectl('get', 'crd', 'libraries.webapp.example.com', '-o', 'name');
      expect(crd.exitCode, String(crd.all)).toBe(0);
      expect(
        (await kubectl('get', 'clusterrole', 'guestbook-library-editor-role', '-o', 'name')).exitCode,
      ).toBe(0);

      const uninstalled = await helmIn(
        'uninstall',
        'guestbook',
        '-n',
        NAMESPACE,
        '--wait',
        '--timeout',
        '120s',
      );
      expect(uninstalled.exitCode, String(uninstalled.all)).toBe(0);
      // helm.sh/resource-policy: keep: the CRDs (and so any custom resources) stay.
      for (const name of ['guestbooks.webapp.example.com', 'libraries.webapp.example.com']) {
        const kept = await kubectl('get', 'crd', name, '-o', 'name');
        expect(kept.exitCode, `${name} is kept: ${String(kept.all)}`).toBe(0);
      }
      for (const [kind, name] of [
        ['clusterrole', 'guestbook-manager-role'],
        ['mutatingwebhookconfiguration', 'guestbook-mutating-webhook-configuration'],
      ]) {
        const left = await kubectl('get', kind!, name!, '--ignore-not-found', '-o', 'name');
        expect(String(left.stdout), `${kind} ${name} is removed`).toBe('');
      }
      const deployment = await kubectl(
        '-n',
        NAMESPACE,
        'get',
        'deployment',
        '--ignore-not-found',
        '-o',
        'name',
      );
      expect(String(deployment.stdout)).toBe('');
    }, 240_000);
  });
});
