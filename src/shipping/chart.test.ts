import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderChart } from './chart.js';
import { generatedValues, mergeValues } from './chart-values.js';
import { parseManifest } from './chart-files.js';
import { objectsOf } from './chart-source.js';
import { HOSTILE, hostileCrd, hostileText } from '../../test/helpers/hostile.js';

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    labels: { 'app.kubernetes.io/managed-by': 'kustomize', 'app.kubernetes.io/name': 'demo' },
    name: 'demo-controller-manager',
    namespace: 'demo-system',
  },
  spec: {
    replicas: 1,
    selector: { matchLabels: { 'app.kubernetes.io/name': 'demo' } },
    template: {
      metadata: { labels: { 'app.kubernetes.io/name': 'demo' } },
      spec: {
        containers: [
          {
            name: 'manager',
            image: 'registry.example.com/demo:v1',
            args: ['--leader-elect', '--metrics-bind-address=:8443'],
            ports: [{ containerPort: 8443, name: 'metrics', protocol: 'TCP' }],
            resources: { limits: { memory: '192Mi' } },
          },
        ],
        serviceAccountName: 'demo-controller-manager',
      },
    },
  },
};
const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.demo.example.com' },
  spec: { versions: [{ name: 'v1', schema: { description: 'a {{ template }} in a description' } }] },
};
const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo-system' } };

describe('renderChart', () => {
  const chart = renderChart({ projectName: 'demo', objects: [namespace, crd, deployment] });
  const file = (name: string) => chart.templates.find((t) => t.path === name)?.content ?? '';

  it('one template per object, by part of config/, the Namespace left to helm', () => {
    expect(chart.templates.map((t) => t.path)).toEqual([
      'templates/crd/widgets.demo.example.com.yaml',
      'templates/manager/manager.yaml',
    ]);
  });

  it('turns kustomize names, namespace and labels back into Helm expressions', () => {
    const manager = file('templates/manager/manager.yaml');
    expect(manager).toContain('name: "{{ include "demo.fullname" . }}-controller-manager"');
    expect(manager).toContain('namespace: "{{ .Release.Namespace }}"');
    expect(manager).toContain('serviceAccountName: "{{ include "demo.fullname" . }}-controller-manager"');
    expect(manager).toContain('{{- include "demo.labels" . | nindent 4 }}');
    expect(manager).not.toContain('kustomize');
    expect(manager).toContain('replicas: {{ .Values.manager.replicas }}');
    expect(manager).toMatch(
      /\{\{- if \.Values\.leaderElection\.enable \}\}\n\s+- --leader-elect\n\{\{- end \}\}/,
    );
  });

  it('escapes template syntax of the source and gates CRDs behind crd.enable and crd.keep', () => {
    const text = file('templates/crd/widgets.demo.example.com.yaml');
    expect(text).toContain('a {{ "{{" }} template }} in a description');
    expect(text).toMatch(/^\{\{- if \.Values\.crd\.enable \}\}$/m);
    expect(text).toContain('{{- if .Values.crd.keep }}\n    helm.sh/resource-policy: keep\n{{- end }}');
  });

  it('takes the defaults of values.yaml from the manager', () => {
    expect(chart.defaults).toEqual({
      image: { repository: 'registry.example.com/demo', tag: 'v1', digest: '' },
      replicas: 1,
      resources: { limits: { memory: '192Mi' } },
      metricsPort: 8443,
    });
    expect(chart.features).toEqual({
      webhook: false,
      certManager: false,
      prometheus: false,
      networkPolicy: false,
    });
  });

  it('is deterministic', () => {
    const again = renderChart({ projectName: 'demo', objects: [namespace, crd, deployment] });
    expect(again.templates).toEqual(chart.templates);
  });

  it('refuses output without the manager Deployment', () => {
    expect(() => renderChart({ projectName: 'demo', objects: [crd] })).toThrow(
      'config/default: renders no Deployment named <prefix>controller-manager',
    );
  });
});

/**
 * A template rendered as Helm renders it with the default values (release demo in demo-system), by a
 * checker that knows the Go template lexer (an action runs from `{{` to the first `}}` outside a string
 * literal; `{{- ` trims the white space before it) and only the actions the chart writer puts in a CRD or
 * a ConfigMap: any other action is a live template action from the project's text, an error.
 */
function renderTemplate(text: string): string {
  let out = '';
  let at = 0;
  while (at < text.length) {
    const open = text.indexOf('{{', at);
    if (open < 0) {
      out += text.slice(at);
      break;
    }
    out += text.slice(at, open);
    let end = open + 2;
    for (let inString = false; end < text.length; end++) {
      if (inString) {
        if (text[end] === '\\') end++;
        else if (text[end] === '"') inString = false;
      } else if (text[end] === '"') inString = true;
      else if (text.startsWith('}}', end)) break;
    }
    let action = text.slice(open + 2, end);
    at = end + 2;
    if (action.startsWith('- ')) {
      out = out.trimEnd();
      action = action.slice(2);
    }
    action = action.trim();
    const labels = /^include "demo\.labels" \. \| nindent (\d+)$/.exec(action);
    if (action === '"{{"') out += '{{';
    else if (action === '"{"') out += '{';
    else if (action === '.Release.Namespace') out += 'demo-system';
    else if (action === 'include "demo.fullname" .') out += 'demo';
    else if (labels) out += `\n${' '.repeat(Number(labels[1]))}helm.sh/chart: demo-0.1.0`;
    else if (!['if .Values.crd.enable', 'if .Values.crd.keep', 'end'].includes(action)) {
      throw new Error(`a live template action: {{${action}}}`);
    }
  }
  return out;
}

describe('the chart of a project with hostile text', () => {
  const render = (texts: readonly string[]) => {
    const crd = hostileCrd(texts);
    const chart = renderChart({ projectName: 'demo', objects: [namespace, crd, deployment] });
    const template = chart.templates.find((t) => t.path.startsWith('templates/crd/'))!.content;
    return { crd, template, rendered: parse(renderTemplate(template), { version: '1.1' }) as typeof crd };
  };

  it('renders every key, value and block of the CRD back to the text it came from', () => {
    const { crd, template, rendered } = render(HOSTILE);
    expect(template).not.toContain('{{ .Release.Name }}');
    expect(rendered.spec).toEqual(crd.spec);
    expect(rendered.metadata).toEqual({
      annotations: { 'helm.sh/resource-policy': 'keep', 'kubesmith.dev/version': '0.1.0' },
      labels: { 'helm.sh/chart': 'demo-0.1.0' },
      name: 'widgets.demo.example.com',
    });
  });

  it('renders the names and namespace in the text of other objects, and only those, as Helm expressions', () => {
    const configMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'demo-hostile', namespace: 'demo-system' },
      data: Object.fromEntries(HOSTILE.map((text, i) => [`k${i}`, text])),
    };
    const chart = renderChart({ projectName: 'demo', objects: [namespace, configMap, deployment] });
    const template = chart.templates.find((t) => t.path === 'templates/extras/hostile.yaml')!.content;
    expect(template).toContain('{{ .Release.Namespace }}');
    expect(parse(renderTemplate(template), { version: '1.1' })).toMatchObject({ data: configMap.data });
  });

  it('renders arbitrary keys and values back (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(hostileText, { minLength: 1, maxLength: 6 }), (texts) => {
        const { crd, rendered } = render(texts);
        expect(rendered.spec).toEqual(crd.spec);
      }),
      { numRuns: 150, seed: 20261126 },
    );
  });
});

describe('mergeValues', () => {
  const defaults = {
    image: { repository: 'controller', tag: 'latest', digest: '' },
    replicas: 1,
    resources: { limits: { memory: '192Mi' } },
    metricsPort: 8443,
  };
  const none = { webhook: false, certManager: false, prometheus: false, networkPolicy: false };
  const withWebhook = { ...none, webhook: true, certManager: true };

  it('keeps the user values of keys that exist, adds new keys, drops keys that are gone', () => {
    const before = mergeValues(generatedValues(none, defaults), '', 'values.yaml');
    const edited = before
      .replace('replicas: 1', 'replicas: 3')
      .replace(/resources:\n(\s+.*\n)+?(?=\n)/, 'resources:\n    requests:\n      cpu: 1\n')
      .concat('stale:\n  key: 1\n');
    const after = mergeValues(generatedValues(withWebhook, defaults), edited, 'values.yaml');
    expect(after).toContain('replicas: 3');
    expect(after).toMatch(/resources:\n {4}requests:\n {6}cpu: 1\n/);
    expect(after).toContain('webhook:\n  enable: true');
    expect(after).not.toContain('stale');
    // Comments are kubesmith's, and a second run with nothing changed gives the same bytes.
    expect(after).toContain('# helm.sh/resource-policy: keep');
    expect(mergeValues(generatedValues(withWebhook, defaults), after, 'values.yaml')).toBe(after);
  });

  it('a second run with nothing changed gives the same bytes, quotes and all', () => {
    for (const features of [none, withWebhook]) {
      const generated = generatedValues(features, defaults);
      const first = mergeValues(generated, '', 'values.yaml');
      expect(mergeValues(generated, first, 'values.yaml')).toBe(first);
      const image: [string[], unknown][] = [[['manager', 'image', 'tag'], 'latest']];
      const withImage = mergeValues(generated, '', 'values.yaml', image);
      expect(withImage).toMatch(/^ {4}tag: latest$/m);
      expect(mergeValues(generated, withImage, 'values.yaml', image)).toBe(withImage);
      expect(mergeValues(generated, withImage, 'values.yaml')).toBe(withImage);
      // The user's quotes stay too.
      const edited = first.replace('repository: "controller"', "repository: 'mine'");
      const merged = mergeValues(generated, edited, 'values.yaml');
      expect(merged).toContain("repository: 'mine'");
      expect(mergeValues(generated, merged, 'values.yaml')).toBe(merged);
    }
  });

  it('a part config/default includes itself is on by default', () => {
    const text = generatedValues(none, defaults, { prometheus: true, networkPolicy: false });
    expect(text).toMatch(/^prometheus:\n {2}enable: true$/m);
    expect(text).toMatch(/^networkPolicy:\n {2}enable: false$/m);
    expect(generatedValues(none, defaults)).toMatch(/^prometheus:\n {2}enable: false$/m);
  });

  it('command-line overrides win over the user file', () => {
    const text = mergeValues(
      generatedValues(none, defaults),
      'manager:\n  image:\n    tag: mine\n',
      'v.yaml',
      [[['manager', 'image', 'tag'], 'v2']],
    );
    expect(text).toMatch(/^ {4}tag: v2$/m);
    expect(text).not.toContain('mine');
  });

  it('a values.yaml that does not parse is an error with its line', () => {
    expect(() => mergeValues(generatedValues(none, defaults), 'a: [\n', 'dist/chart/values.yaml')).toThrow(
      /^dist\/chart\/values\.yaml:\d+:\d+: not valid YAML/,
    );
  });
});

describe('parseManifest', () => {
  it("reads paths and hashes, - for the files that are the user's", () => {
    const hash = 'a'.repeat(64);
    expect([...parseManifest(`# comment\n-  Chart.yaml\n${hash}  templates/x.yaml\n`)]).toEqual([
      ['Chart.yaml', ''],
      ['templates/x.yaml', hash],
    ]);
  });
});

describe('objectsOf', () => {
  it('keeps a key __proto__ as a key', () => {
    const [crd] = objectsOf('kind: CustomResourceDefinition\nspec:\n  __proto__:\n    type: string\n---\n');
    expect(Object.keys(crd!['spec'] as object)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(crd!['spec'])).toBe(Object.prototype);
  });
});
