/**
 * Every text of the project reaches the chart's templates inert: `helm template` renders the chart back to
 * exactly the project's text, as go-yaml reads it. The renderings are read by helm itself (its `fromYaml`
 * is sigs.k8s.io/yaml, as kubectl and the API server read manifests), through a second small chart.
 *   - renderChart on CRDs and a ConfigMap of hostile and generated strings (keys at any depth, values,
 *     multi-line text), one helm run for all of them;
 *   - a project whose API type has hostile property names, descriptions and enum values: `kubesmith
 *     manifests` then `kubesmith helm-chart`, and the rendered CRD is the one of config/crd/bases; a
 *     second `helm-chart` with nothing changed writes nothing.
 */
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryAssetsOrSkip } from '../../runtime/src/envtest/index.js';
import { renderChart } from '../../src/shipping/chart.js';
import { chartSkeleton } from '../../src/shipping/chart-skeleton.js';
import { generatedValues, mergeValues } from '../../src/shipping/chart-values.js';
import { helmOrSkip } from '../helpers/helm.js';
import { HOSTILE, hostileCrd, hostileText } from '../helpers/hostile.js';
import { removeTemp, run, tempDir } from '../helpers/run.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const helm = helmOrSkip();
type Obj = Record<string, unknown>;

let dir: string;
beforeAll(async () => {
  dir = await tempDir('inert');
});
afterAll(async () => {
  await removeTemp(dir);
});

async function helmTemplate(chart: string, ...args: string[]): Promise<string> {
  const result = await execa(helm!, ['template', ...args, chart], { reject: false, all: true });
  expect(result.exitCode, String(result.all)).toBe(0);
  return result.stdout;
}

/**
 * The documents of `text` (helm template's output) as go-yaml reads them: a chart whose one template
 * turns each file into JSON with helm's fromYaml (which gives {"Error": ...} for YAML it cannot read).
 */
async function readWithGoYaml(text: string): Promise<Obj[]> {
  const reader = path.join(dir, `reader-${Math.random().toString(36).slice(2)}`);
  // Chunks of comments only (a file's header, helm's `# Source:` lines) are no documents.
  const documents = text
    .split(/^---$/m)
    .filter((doc) => doc.split('\n').some((line) => !/^\s*(?:#.*)?$/.test(line)));
  await mkdir(path.join(reader, 'templates'), { recursive: true });
  await mkdir(path.join(reader, 'docs'));
  await writeFile(path.join(reader, 'Chart.yaml'), 'apiVersion: v2\nname: reader\nversion: 0.1.0\n');
  for (const [i, doc] of documents.entries()) {
    await writeFile(path.join(reader, 'docs', `${String(i).padStart(4, '0')}.yaml`), doc);
  }
  await writeFile(
    path.join(reader, 'templates', 'read.yaml'),
    [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: read',
      'data:',
      '  {{- $docs := list }}',
      '  {{- range $path, $_ := .Files.Glob "docs/*.yaml" }}',
      '  {{- $docs = append $docs ($.Files.Get $path | fromYaml) }}',
      '  {{- end }}',
      '  json: {{ $docs | toJson | b64enc | quote }}',
      '',
    ].join('\n'),
  );
  const out = await helmTemplate(reader);
  const encoded = /^ {2}json: "([A-Za-z0-9+/=]*)"$/m.exec(out)?.[1];
  expect(encoded, out).toBeDefined();
  const objects = JSON.parse(Buffer.from(encoded!, 'base64').toString('utf8')) as Obj[];
  for (const object of objects) expect(object['Error'], JSON.stringify(object)).toBeUndefined();
  return objects;
}

const byKind = (objects: Obj[], kind: string): Obj[] => objects.filter((o) => o['kind'] === kind);
const metadata = (object: Obj | undefined): Obj => (object?.['metadata'] ?? {}) as Obj;

describe.skipIf(helm === undefined)('the chart of hostile text, rendered by helm', () => {
  it('renders the CRDs and a ConfigMap of hostile and generated strings back to exactly their text', async () => {
    const generated = fc.sample(hostileText, { numRuns: 400, seed: 20261126 });
    const texts = [...new Set([...HOSTILE, ...generated])];
    const crds = [hostileCrd(texts.slice(0, 200), 'widgets'), hostileCrd(texts.slice(200), 'gadgets')];
    const configMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        annotations: Object.fromEntries(texts.map((text, i) => [text, `${i}:${text}`])),
        name: 'demo-hostile',
        namespace: 'demo-system',
      },
      data: { nested: texts.join('\n'), ...Object.fromEntries(texts.map((text, i) => [`k${i}`, text])) },
    };
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'demo-controller-manager', namespace: 'demo-system' },
      spec: {
        replicas: 1,
        template: {
          spec: {
            containers: [
              {
                name: 'manager',
                image: 'controller:latest',
                env: texts.map((text, i) => ({ name: `V${i}`, value: text })),
              },
            ],
          },
        },
      },
    };
    const chart = renderChart({ projectName: 'demo', objects: [...crds, configMap, deployment] });
    const chartDir = path.join(dir, 'chart');
    const values = generatedValues(chart.features, chart.defaults);
    for (const file of [
      ...chartSkeleton('demo', '0.1.0'),
      { path: 'values.yaml', content: mergeValues(values, '', 'values.yaml') },
      ...chart.templates,
    ]) {
      await mkdir(path.dirname(path.join(chartDir, file.path)), { recursive: true });
      await writeFile(path.join(chartDir, file.path), file.content);
    }
    // Release demo in demo-system: the names and namespace the chart templates render as in config/.
    const objects = await readWithGoYaml(await helmTemplate(chartDir, 'demo', '--namespace', 'demo-system'));

    const rendered = byKind(objects, 'CustomResourceDefinition');
    expect(rendered.map((crd) => metadata(crd)['name']).sort()).toEqual([
      'gadgets.demo.example.com',
      'widgets.demo.example.com',
    ]);
    for (const crd of crds) {
      const back = rendered.find((o) => metadata(o)['name'] === metadata(crd)['name']);
      expect(back?.['spec']).toEqual(crd['spec']);
    }
    const [map] = byKind(objects, 'ConfigMap');
    expect(map?.['data']).toEqual(configMap.data);
    expect(metadata(map)['annotations']).toEqual(configMap.metadata.annotations);
    expect(metadata(map)['name']).toBe('demo-hostile');
    const [manager] = byKind(objects, 'Deployment');
    const container = (((manager?.['spec'] as Obj)['template'] as Obj)['spec'] as Obj)['containers'] as Obj[];
    expect(container[0]?.['env']).toEqual(deployment.spec.template.spec.containers[0]!.env);
  }, 120_000);
});

/**
 * Property names, descriptions and enum values of a kind, in TypeScript source. Not `<<` nor U+2028: the
 * chart is made from kustomize's output, and kustomize (go-yaml v3) takes even a quoted `"<<"` key for a
 * merge key and drops it, and writes U+2028 as a line break; `kubectl apply -k` gets the same. The
 * renderChart test above has them.
 */
const HOSTILE_PROPERTIES = `
  /**
   * {{ .Release.Name }} and {{- fail "description" }} and {{/* comment *\\/}} and }} and @@ks:R0@@.
   * A second line: {{ .Values.crd.enable }}
   * +kubebuilder:validation:Enum="{{ .Release.Namespace }}";"@@ks:FN@@";"yes";"<<";"{{- fail \\"x\\" }}"
   */
  '{{ .Release.Name }}'?: string;
  /** +kubebuilder:default="{{ fail \\"default\\" }}" */
  '{{- fail "key" }}'?: string;
  '@@ks:R0@@'?: string;
  '@@@ks:L0@@@'?: string;
  'yes'?: string;
  'a: b # c'?: string;
  '- x'?: string;
  "'s'"?: string;
  '"q"'?: string;
  '{{/* c */}}'?: string;
  '}}'?: string;
  /** nested keys too */
  nested?: { '{{ .Capabilities.KubeVersion }}'?: { '@@ks:NS@@'?: string } };
`;

describe.skipIf(helm === undefined || binaryAssetsOrSkip() === undefined)(
  'kubesmith helm-chart on a project with hostile text',
  () => {
    it('renders the CRD of config/crd/bases exactly', async () => {
      const project = path.join(dir, 'project');
      await mkdir(project);
      for (const args of [
        ['init', '--domain', 'example.com', '--skip-install'],
        ['create', 'api', '--group', 'webapp', '--version', 'v1', '--kind', 'Guestbook'],
      ]) {
        const result = await run(project, ...args);
        expect(result.code, result.stderr).toBe(0);
      }
      await symlink(path.join(repo, 'node_modules'), path.join(project, 'node_modules'), 'dir');
      const types = path.join(project, 'src/api/webapp/v1/guestbook.types.ts');
      await writeFile(
        types,
        (await readFile(types, 'utf8')).replace(
          /export interface GuestbookSpec \{\n/,
          (head) => `${head}${HOSTILE_PROPERTIES}`,
        ),
      );
      const manifests = await run(project, 'manifests');
      expect(manifests.code, manifests.stderr).toBe(0);
      const chart = await run(project, 'helm-chart');
      expect(chart.code, chart.stderr).toBe(0);
      // A second run with nothing changed (and no --img) writes nothing, values.yaml included.
      const again = await run(project, 'helm-chart', '--json');
      expect(again.code, again.stderr).toBe(0);
      const plan = JSON.parse(again.stdout) as { files: { path: string; action: string }[] };
      expect(plan.files.filter((file) => file.action !== 'unchanged')).toEqual([]);

      const base = await readFile(
        path.join(project, 'config/crd/bases/webapp.example.com_guestbooks.yaml'),
        'utf8',
      );
      const [expected] = await readWithGoYaml(base);
      const spec = ((expected?.['spec'] as Obj)['versions'] as Obj[])[0]!;
      const properties = (((spec['schema'] as Obj)['openAPIV3Schema'] as Obj)['properties'] as Obj)[
        'spec'
      ] as Obj;
      expect(Object.keys(properties['properties'] as Obj)).toContain('{{ .Release.Name }}');

      const objects = await readWithGoYaml(
        await helmTemplate(path.join(project, 'dist/chart'), 'inert', '--namespace', 'inert-system'),
      );
      const [crd] = byKind(objects, 'CustomResourceDefinition');
      expect(crd?.['spec']).toEqual(expected?.['spec']);
      expect(metadata(crd)['name']).toBe('guestbooks.webapp.example.com');
      const { ['helm.sh/resource-policy']: keep, ...annotations } = metadata(crd)['annotations'] as Obj;
      expect(keep).toBe('keep');
      expect(annotations).toEqual(metadata(expected)['annotations']);
    }, 180_000);
  },
);
