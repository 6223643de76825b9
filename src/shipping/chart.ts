/**
 * A Helm chart from the kustomize output of config/default, as kubebuilder's helm plugin (v2-alpha) makes
 * one from `dist/install.yaml`: each object becomes a template file in a directory named after its part of
 * config/ (manager, rbac, crd, webhook, certmanager, metrics, prometheus, network-policy), with the names,
 * namespace and labels that kustomize fixed turned back into Helm expressions, and the parts a user turns
 * on or off behind values. This module is pure: objects in, file texts out; chart-files.ts decides what
 * is written.
 *
 * The templates are made by serialising each object with placeholder strings (`@@ks:...@@`) where a Helm
 * expression goes, then replacing the placeholders in the text: a whole line for a directive (`{{- if }}`,
 * `{{- include ... | nindent }}`), the quoted scalar for a raw value (`replicas: {{ ... }}`), or a part of
 * a string (names, the namespace). The YAML writer never sees template syntax, so the output is always the
 * same bytes for the same objects.
 *
 * Every text of the project (keys at any depth, values, block scalars) reaches the templates inert: its
 * `{{` becomes the action `{{ "{{" }}`, which Helm renders back to `{{` (and `}}` outside an action is
 * plain text to Go templates), and its `@` becomes a placeholder too, so that no text of the project can
 * spell a placeholder of the chart writer. Placeholders are then replaced in one left-to-right pass.
 */
import { Document } from 'yaml';
import { KubesmithError } from '../errors.js';
import { escapeRawCharacters, goYamlText } from '../manifests/yaml.js';
import type { ImageReference } from '../project/image.js';
import { DEFAULT_CONFIG_DIR } from '../project/layout.js';

type Obj = Record<string, unknown>;

export interface ChartInput {
  projectName: string;
  /** The objects kustomize rendered, in its order. */
  objects: Obj[];
  /** The manager image `--img` asked for; otherwise the one config/manager sets. */
  image?: ImageReference;
}

export interface ChartFile {
  /** Relative to the chart directory, with forward slashes. */
  path: string;
  content: string;
}

/** Which optional parts the project has: each has an `enable` value in values.yaml. */
export interface ChartFeatures {
  webhook: boolean;
  certManager: boolean;
  prometheus: boolean;
  networkPolicy: boolean;
}

export interface ChartDefaults {
  image: { repository: string; tag: string; digest: string };
  replicas: number;
  resources: Obj;
  metricsPort: number;
}

export interface RenderedChart {
  templates: ChartFile[];
  features: ChartFeatures;
  defaults: ChartDefaults;
}

/** The placeholders left after the directive lines: a raw value (with the quotes YAML put around it) or a token. */
const PLACEHOLDER = /(["']?)@@ks:R(\d+)@@\1|@@ks:([A-Z]+)(\d*)@@/g;
const FULLNAME = '@@ks:FN@@';
const NAMESPACE = '@@ks:NS@@';
const CHART_NAME = '@@ks:NM@@';
const LEFT_BRACES = '@@ks:LB@@';
const AT = '@@ks:AT@@';
/** A `{` of the project's text just before a name made a Helm expression: it would make `{{{`. */
const LEFT_BRACE = '@@ks:LC@@';
/** The two sequences of the project's text that the chart writes as placeholders: `@` and `{{`. */
const UNSAFE = /@|\{\{/g;

/** Objects config/default renders that a chart leaves to Helm (`helm install --create-namespace`). */
const DROPPED_KINDS = new Set(['Namespace']);
const RBAC_KINDS = new Set(['ServiceAccount', 'Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']);
const WEBHOOK_KINDS = new Set(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);
const CERT_MANAGER_GROUP = 'cert-manager.io/';
const INJECT_CA = 'cert-manager.io/inject-ca-from';

class Templater {
  private readonly directives: ((indent: string) => string)[] = [];
  private readonly raws: string[] = [];
  /** The namespace, the prefixed names, `@`, `{{` and a `{` before a name: what text() replaces, in one pass. */
  private readonly replaced: RegExp;

  constructor(
    readonly projectName: string,
    private readonly prefix: string,
    private readonly namespace: string,
    knownNames: string[],
  ) {
    const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const alternatives = [
      namespace,
      ...[...knownNames].sort((a, b) => b.length - a.length || (a < b ? -1 : 1)),
    ]
      .filter(Boolean)
      .map(escape);
    const name = `(?:${alternatives.join('|')})(?![a-z0-9-])`;
    this.replaced =
      alternatives.length > 0
        ? new RegExp(`(?<![a-z0-9-])${name}|${UNSAFE.source}|\\{(?=${name})`, 'g')
        : UNSAFE;
  }

  /** A placeholder that becomes the line(s) `render(indent)` returns, in place of its own line. */
  line(render: (indent: string) => string): string {
    this.directives.push(render);
    return `@@ks:L${this.directives.length - 1}@@`;
  }

  /** A scalar placeholder that becomes `expression`, unquoted. */
  raw(expression: string): string {
    this.raws.push(expression);
    return `@@ks:R${this.raws.length - 1}@@`;
  }

  /** `{{- if cond }}` and `{{- end }}` around list items. */
  ifItems(condition: string, items: unknown[]): unknown[] {
    return [this.line(() => `{{- if ${condition} }}`), ...items, this.line(() => '{{- end }}')];
  }

  /**
   * A string of kustomize's with the namespace and the prefixed names made Helm expressions again, and
   * its `@` and `{{` placeholders.
   */
  text(value: string): string {
    return value.replace(this.replaced, (match) => {
      if (match === '@') return AT;
      if (match === '{{') return LEFT_BRACES;
      if (match === '{') return LEFT_BRACE;
      if (match === this.namespace) return NAMESPACE;
      return `${FULLNAME}-${inert(match.slice(this.prefix.length))}`;
    });
  }

  /**
   * Every string below `value` through text(), every key made inert; `app.kubernetes.io/name` labels
   * become the chart's name.
   */
  rewrite(value: unknown, key?: string): unknown {
    if (typeof value === 'string') {
      if (key === 'app.kubernetes.io/name' && value === this.projectName) return CHART_NAME;
      return this.text(value);
    }
    if (Array.isArray(value)) return value.map((item) => this.rewrite(item));
    if (value && typeof value === 'object') {
      // fromEntries: a key `__proto__` is a key like any other.
      return Object.fromEntries(Object.entries(value as Obj).map(([k, v]) => [inert(k), this.rewrite(v, k)]));
    }
    return value;
  }

  /**
   * A CustomResourceDefinition: its schema, names and versions are the project's API, the same text in
   * every release (kustomize does not rename inside them either); only its metadata and the service of
   * its conversion webhook get the release's names.
   */
  rewriteCrd(crd: Obj): Obj {
    return Object.fromEntries(
      Object.entries(crd).map(([key, value]) => {
        const spec = record(value);
        if (key !== 'spec' || !spec) return [inert(key), this.rewrite(value)];
        return [
          key,
          Object.fromEntries(
            Object.entries(spec).map(([k, v]) => [
              inert(k),
              k === 'conversion' ? this.rewrite(v) : verbatim(v),
            ]),
          ),
        ];
      }),
    );
  }

  /** The template text of `object`, a YAML document between `{{- if condition }}` and `{{- end }}` when given. */
  render(object: Obj, condition: string | undefined): string {
    const yaml = goYamlText(new Document(sortKeys(object)), { lineWidth: 0, minContentWidth: 0 });
    const lines: string[] = [];
    for (const line of yaml.split('\n')) {
      const directive = /^(\s*)(?:- )?(["']?)@@ks:L(\d+)@@\2(?:: null)?$/.exec(line);
      if (directive) {
        lines.push(this.directives[Number(directive[3])]!(directive[1]!));
        continue;
      }
      lines.push(line);
    }
    const name = this.projectName;
    const body = lines
      .join('\n')
      .replace(PLACEHOLDER, (match, _quote, raw: string | undefined, kind: string, index: string) => {
        if (raw !== undefined) return this.raws[Number(raw)]!;
        if (index === '') {
          if (kind === 'FN') return `{{ include "${name}.fullname" . }}`;
          if (kind === 'NS') return '{{ .Release.Namespace }}';
          if (kind === 'NM') return `{{ include "${name}.name" . }}`;
          if (kind === 'LB') return '{{ "{{" }}';
          if (kind === 'LC') return '{{ "{" }}';
          if (kind === 'AT') return '@';
        }
        throw new Error(`unreplaced chart placeholder ${match}`);
      })
      .trimEnd();
    const header =
      '# Generated by `kubesmith helm-chart` from config/default: edit config/ and run it again.';
    return condition === undefined
      ? `${header}\n${body}\n`
      : `${header}\n{{- if ${condition} }}\n${body}\n{{- end }}\n`;
  }
}

/** `text` of the project with its `@` and `{{` as placeholders (see the header). */
function inert(text: string): string {
  return text.replace(UNSAFE, (match) => (match === '@' ? AT : LEFT_BRACES));
}

/** `value` with every key and string made inert, and nothing else changed. */
function verbatim(value: unknown): unknown {
  if (typeof value === 'string') return inert(value);
  if (Array.isArray(value)) return value.map(verbatim);
  const object = record(value);
  if (!object) return value;
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [inert(k), verbatim(v)]));
}

/** Mapping keys sorted, as kustomize writes them, whatever order the templating added keys in. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  const object = record(value);
  if (!object) return value;
  return Object.fromEntries(
    Object.keys(object)
      .sort()
      .map((key) => [key, sortKeys(object[key])]),
  );
}

function record(value: unknown): Obj | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Obj) : undefined;
}

function metadataOf(object: Obj): Obj {
  const metadata = record(object['metadata']) ?? {};
  object['metadata'] = metadata;
  return metadata;
}

function nameOf(object: Obj): string {
  return String(record(object['metadata'])?.['name'] ?? '');
}

function manifestError(message: string): KubesmithError {
  return new KubesmithError(`${DEFAULT_CONFIG_DIR}: ${message}`, {
    hint: 'the chart is made from `kubectl kustomize config/default`; restore config/manager and config/default as `kubesmith init` wrote them',
  });
}

/** The chart's templates for `input.objects`, plus what values.yaml needs to describe them. */
export function renderChart(input: ChartInput): RenderedChart {
  const objects = input.objects.map((object) => structuredClone(object));
  const manager = objects.find(
    (object) => object['kind'] === 'Deployment' && nameOf(object).endsWith('controller-manager'),
  );
  if (!manager) throw manifestError('renders no Deployment named <prefix>controller-manager');
  const managerName = nameOf(manager);
  const prefix = managerName.slice(0, -'controller-manager'.length);
  const namespace = String(metadataOf(manager)['namespace'] ?? '');
  const knownNames = objects
    .filter(
      (object) => !DROPPED_KINDS.has(String(object['kind'])) && object['kind'] !== 'CustomResourceDefinition',
    )
    .map(nameOf)
    .filter((name) => prefix !== '' && name.startsWith(prefix) && name.length > prefix.length);
  const t = new Templater(input.projectName, prefix, namespace, [...new Set(knownNames)]);

  const has = (predicate: (object: Obj) => boolean) => objects.some(predicate);
  const features: ChartFeatures = {
    webhook: has((o) => WEBHOOK_KINDS.has(String(o['kind']))),
    certManager: has((o) => String(o['apiVersion']).startsWith(CERT_MANAGER_GROUP)),
    prometheus: has((o) => o['kind'] === 'ServiceMonitor'),
    networkPolicy: has((o) => o['kind'] === 'NetworkPolicy'),
  };
  const certManagerOn = '(and .Values.webhook.enable .Values.certManager.enable)';

  const defaults = managerDefaults(manager, input.image);
  const templates: ChartFile[] = [];
  const used = new Set<string>();
  for (const object of objects) {
    const kind = String(object['kind']);
    if (DROPPED_KINDS.has(kind)) continue;
    const name = nameOf(object);
    const short = name.startsWith(prefix) && name.length > prefix.length ? name.slice(prefix.length) : name;
    let dir: string;
    let condition: string | undefined;
    if (kind === 'CustomResourceDefinition') {
      dir = 'crd';
      condition = '.Values.crd.enable';
    } else if (RBAC_KINDS.has(kind)) {
      dir = 'rbac';
      if (short.startsWith('leader-election-')) condition = '.Values.leaderElection.enable';
      else if (short.startsWith('metrics-')) condition = '.Values.metrics.enable';
    } else if (object === manager) {
      dir = 'manager';
    } else if (WEBHOOK_KINDS.has(kind) || (kind === 'Service' && short.endsWith('webhook-service'))) {
      dir = 'webhook';
      condition = '.Values.webhook.enable';
    } else if (String(object['apiVersion']).startsWith(CERT_MANAGER_GROUP)) {
      dir = 'certmanager';
      condition = certManagerOn;
    } else if (kind === 'Service' && short.endsWith('metrics-service')) {
      dir = 'metrics';
      condition = '.Values.metrics.enable';
    } else if (kind === 'ServiceMonitor') {
      dir = 'prometheus';
      condition = '(and .Values.prometheus.enable .Values.metrics.enable)';
    } else if (kind === 'NetworkPolicy') {
      dir = 'network-policy';
      condition = short.includes('metrics')
        ? '(and .Values.networkPolicy.enable .Values.metrics.enable)'
        : short.includes('webhook')
          ? '(and .Values.networkPolicy.enable .Values.webhook.enable)'
          : '.Values.networkPolicy.enable';
    } else {
      dir = 'extras';
    }

    const rewritten = kind === 'CustomResourceDefinition' ? t.rewriteCrd(object) : (t.rewrite(object) as Obj);
    labelWithChart(t, rewritten);
    annotate(t, rewritten, kind, certManagerOn);
    if (object === manager) templateManager(t, rewritten, features, defaults);
    if (dir === 'metrics') templateMetricsPorts(t, rewritten, defaults.metricsPort, 'service');
    if (dir === 'network-policy' && short.includes('metrics'))
      templateMetricsPorts(t, rewritten, defaults.metricsPort, 'policy');

    const base = object === manager ? 'manager' : kind === 'CustomResourceDefinition' ? name : short;
    let file = `templates/${dir}/${base}.yaml`;
    if (used.has(file)) file = file.replace(/\.yaml$/, `-${kind.toLowerCase()}.yaml`);
    used.add(file);
    templates.push({ path: file, content: t.render(rewritten, condition) });
  }
  templates.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { templates, features, defaults };
}

/** The chart's standard labels on every object, in place of kustomize's name and managed-by labels. */
function labelWithChart(t: Templater, object: Obj): void {
  const metadata = metadataOf(object);
  const labels = { ...(record(metadata['labels']) ?? {}) };
  delete labels['app.kubernetes.io/name'];
  delete labels['app.kubernetes.io/managed-by'];
  labels[
    t.line((indent) => `${indent}{{- include "${t.projectName}.labels" . | nindent ${indent.length} }}`)
  ] = null;
  metadata['labels'] = labels;
}

/** cert-manager's CA injection only with cert-manager on; CRDs kept on uninstall when crd.keep. */
function annotate(t: Templater, object: Obj, kind: string, certManagerOn: string): void {
  const metadata = metadataOf(object);
  const annotations = { ...(record(metadata['annotations']) ?? {}) };
  const inject = annotations[INJECT_CA];
  if (typeof inject === 'string') {
    // A JSON string is a YAML double-quoted one.
    const quoted = escapeRawCharacters(JSON.stringify(inject));
    delete annotations[INJECT_CA];
    annotations[
      t.line((indent) => `{{- if ${certManagerOn} }}\n${indent}${INJECT_CA}: ${quoted}\n{{- end }}`)
    ] = null;
  }
  if (kind === 'CustomResourceDefinition') {
    annotations[
      t.line((indent) => `{{- if .Values.crd.keep }}\n${indent}helm.sh/resource-policy: keep\n{{- end }}`)
    ] = null;
  }
  if (Object.keys(annotations).length > 0) metadata['annotations'] = annotations;
}

function managerContainer(deployment: Obj): Obj {
  const spec = record(record(record(deployment['spec'])?.['template'])?.['spec']);
  const containers = (spec?.['containers'] as Obj[] | undefined) ?? [];
  const container = containers.find((c) => c['name'] === 'manager') ?? containers[0];
  if (!container) throw manifestError('the manager Deployment has no container');
  return container;
}

function managerDefaults(manager: Obj, image: ImageReference | undefined): ChartDefaults {
  const container = managerContainer(manager);
  const ports = (container['ports'] as Obj[] | undefined) ?? [];
  const metricsPort = Number(ports.find((p) => p['name'] === 'metrics')?.['containerPort'] ?? 8443);
  let repository: string;
  let tag = '';
  let digest = '';
  if (image) {
    repository = image.name;
    tag = image.tag ?? '';
    digest = image.digest ?? '';
  } else {
    const text = String(container['image'] ?? 'controller:latest');
    const at = text.indexOf('@');
    const withoutDigest = at >= 0 ? text.slice(0, at) : text;
    if (at >= 0) digest = text.slice(at + 1);
    const colon = withoutDigest.lastIndexOf(':');
    const slash = withoutDigest.lastIndexOf('/');
    if (colon > slash) {
      repository = withoutDigest.slice(0, colon);
      tag = withoutDigest.slice(colon + 1);
    } else repository = withoutDigest;
  }
  const spec = record(manager['spec']);
  return {
    image: { repository, tag, digest },
    replicas: Number(spec?.['replicas'] ?? 1),
    resources: record(container['resources']) ?? {},
    metricsPort,
  };
}

/** The manager Deployment: image, replicas, resources, leader election, metrics and webhook from values. */
function templateManager(
  t: Templater,
  deployment: Obj,
  features: ChartFeatures,
  defaults: ChartDefaults,
): void {
  const spec = record(deployment['spec'])!;
  spec['replicas'] = t.raw('{{ .Values.manager.replicas }}');
  const podSpec = record(record(spec['template'])?.['spec'])!;
  const container = managerContainer(deployment);
  container['image'] = t.raw(
    '"{{ .Values.manager.image.repository }}{{ with .Values.manager.image.digest }}@{{ . }}{{ else }}:{{ .Values.manager.image.tag | default .Chart.AppVersion }}{{ end }}"',
  );
  container['imagePullPolicy'] = t.raw('{{ .Values.manager.image.pullPolicy }}');
  container['resources'] = {
    [t.line((indent) => `${indent}{{- toYaml .Values.manager.resources | nindent ${indent.length} }}`)]: null,
  };
  const metricsPort = String(defaults.metricsPort);
  container['args'] = ((container['args'] as string[] | undefined) ?? []).flatMap((arg): unknown[] => {
    if (arg === '--leader-elect') return t.ifItems('.Values.leaderElection.enable', [arg]);
    if (arg.startsWith('--metrics-bind-address=')) {
      return [
        t.raw(
          '{{ if .Values.metrics.enable }}--metrics-bind-address=:{{ .Values.metrics.port }}{{ else }}--metrics-bind-address=0{{ end }}',
        ),
      ];
    }
    return [arg];
  });
  const webhookVolume = new Set<string>();
  container['ports'] = ((container['ports'] as Obj[] | undefined) ?? []).flatMap((port): unknown[] => {
    if (port['name'] === 'metrics' && String(port['containerPort']) === metricsPort) {
      return t.ifItems('.Values.metrics.enable', [
        { ...port, containerPort: t.raw('{{ .Values.metrics.port }}') },
      ]);
    }
    if (port['name'] === 'webhook-server') return t.ifItems('.Values.webhook.enable', [port]);
    return [port];
  });
  if (features.webhook) {
    const volumes = (podSpec['volumes'] as Obj[] | undefined) ?? [];
    for (const volume of volumes) {
      const secret = String(record(volume['secret'])?.['secretName'] ?? '');
      if (secret.includes('webhook-server-cert')) webhookVolume.add(String(volume['name']));
    }
    const gate = (items: Obj[] | undefined) =>
      items?.flatMap((item): unknown[] =>
        webhookVolume.has(String(item['name'])) ? t.ifItems('.Values.webhook.enable', [item]) : [item],
      );
    if (podSpec['volumes']) podSpec['volumes'] = gate(volumes);
    if (container['volumeMounts']) container['volumeMounts'] = gate(container['volumeMounts'] as Obj[]);
    // The generated main.ts registers the webhooks unless ENABLE_WEBHOOKS=false.
    container['env'] = [
      ...((container['env'] as unknown[] | undefined) ?? []),
      t.line(() => '{{- if not .Values.webhook.enable }}'),
      { name: 'ENABLE_WEBHOOKS', value: 'false' },
      t.line(() => '{{- end }}'),
    ];
  }
}

/** The metrics port of the metrics Service or of the network policy that lets scrapers reach it. */
function templateMetricsPorts(t: Templater, object: Obj, port: number, where: 'service' | 'policy'): void {
  const spec = record(object['spec']);
  if (!spec) return;
  const expression = () => t.raw('{{ .Values.metrics.port }}');
  if (where === 'service') {
    for (const item of (spec['ports'] as Obj[] | undefined) ?? []) {
      if (item['port'] === port) item['port'] = expression();
    }
    return;
  }
  for (const rule of (spec['ingress'] as Obj[] | undefined) ?? []) {
    for (const item of (rule['ports'] as Obj[] | undefined) ?? []) {
      if (item['port'] === port) item['port'] = expression();
    }
  }
}
