/**
 * The chart's values.yaml: what kubesmith generates for the project as it is now, merged with the user's
 * values.yaml of the previous run. The rule, per key of the new values (a "leaf" is a scalar, a list, an
 * empty mapping, or one of OPAQUE_KEYS, which are taken whole):
 *   - a leaf the user's file has at the same path keeps the user's value;
 *   - a key the user's file lacks gets kubesmith's default (a new feature, say `webhook` after
 *     `create webhook`);
 *   - a key of the user's file that the new values do not have is dropped (it no longer means anything to
 *     the templates, which kubesmith also writes).
 * The comments are kubesmith's; comments the user added to values.yaml are not kept.
 */
import { Document, isMap, isScalar, LineCounter, parseDocument, type Node } from 'yaml';
import { KubesmithError } from '../errors.js';
import type { ChartDefaults, ChartFeatures } from './chart.js';

/** Values taken whole from the user's file, whatever their shape (Kubernetes objects, not chart knobs). */
const OPAQUE_KEYS = new Set(['manager.resources']);
/** A values.yaml larger than this is not a chart's values: refuse rather than parse it. */
const MAX_VALUES_BYTES = 1024 * 1024;

/**
 * `on`: the optional parts config/default itself includes (its `- ../prometheus` and
 * `- ../network-policy` lines uncommented); they are on by default, as in install.yaml.
 */
export function generatedValues(
  features: ChartFeatures,
  defaults: ChartDefaults,
  on: { prometheus: boolean; networkPolicy: boolean } = { prometheus: false, networkPolicy: false },
): string {
  const resources = new Document(defaults.resources)
    .toString({ lineWidth: 0 })
    .trimEnd()
    .split('\n')
    .map((line) => `    ${line}`);
  const lines = [
    '# Values of the chart kubesmith makes from config/default (`npx kubesmith helm-chart`).',
    '# Running it again keeps your values of keys that still exist, adds new keys and drops keys that',
    '# are gone (docs: "Shipping your operator" in README.md).',
    '',
    '# Replaces the chart name in resource names and the app.kubernetes.io/name label.',
    'nameOverride: ""',
    '# Replaces <release>-<chart> as the prefix of resource names.',
    'fullnameOverride: ""',
    '',
    'manager:',
    '  image:',
    `    repository: ${JSON.stringify(defaults.image.repository)}`,
    "    # Empty: the chart's appVersion.",
    `    tag: ${JSON.stringify(defaults.image.tag)}`,
    '    # sha256:...; when set it wins over the tag.',
    `    digest: ${JSON.stringify(defaults.image.digest)}`,
    '    pullPolicy: IfNotPresent',
    `  replicas: ${defaults.replicas}`,
    ...(Object.keys(defaults.resources).length > 0 ? ['  resources:', ...resources] : ['  resources: {}']),
    '',
    '# One replica at a time reconciles (--leader-elect), holding a Lease; needs the leader-election Role.',
    'leaderElection:',
    '  enable: true',
    '',
    '# The manager serves /metrics over HTTPS with authentication and authorization (TokenReview and',
    '# SubjectAccessReview); off: --metrics-bind-address=0 and no metrics Service or roles.',
    'metrics:',
    '  enable: true',
    `  port: ${defaults.metricsPort}`,
    '',
  ];
  if (features.webhook) {
    lines.push(
      '# The admission (and conversion) webhooks; off: ENABLE_WEBHOOKS=false and no webhook configurations.',
      'webhook:',
      '  enable: true',
      '',
    );
  }
  if (features.certManager) {
    lines.push(
      "# cert-manager issues the webhook's serving certificate (needs cert-manager in the cluster); off: create",
      '# the Secret webhook-server-cert yourself and set caBundle in the webhook configurations.',
      'certManager:',
      '  enable: true',
      '',
    );
  }
  lines.push(
    '# A ServiceMonitor for the Prometheus operator (needs its monitoring.coreos.com CRDs).',
    'prometheus:',
    `  enable: ${on.prometheus}`,
    '',
    '# NetworkPolicies that let only namespaces labelled metrics: enabled (and webhook: enabled) reach the',
    '# manager; see config/network-policy for what a webhook policy needs on your network plugin.',
    'networkPolicy:',
    `  enable: ${on.networkPolicy}`,
    '',
    '# The CustomResourceDefinitions, as templates so that helm upgrade updates them.',
    'crd:',
    '  enable: true',
    '  # helm.sh/resource-policy: keep -- helm uninstall leaves the CRDs, and so your custom resources.',
    '  keep: true',
    '',
  );
  return lines.join('\n');
}

/**
 * `generated` with the user's values of `previous` (values.yaml as it is on disk, '' for none) merged in.
 * Both paths go through the same YAML writer, so a second run with nothing changed gives the same bytes.
 */
export function mergeValues(
  generated: string,
  previous: string,
  file: string,
  /** Values the command line sets (--img): they win over the user's file. */
  overrides: [string[], unknown][] = [],
): string {
  if (previous.length > MAX_VALUES_BYTES) {
    throw new KubesmithError(`${file}: larger than ${MAX_VALUES_BYTES} bytes`, {
      hint: "a chart's values.yaml is small; remove what does not belong there; nothing was written",
    });
  }
  const lineCounter = new LineCounter();
  const user = parseDocument(previous, { lineCounter, prettyErrors: false });
  const error = user.errors[0];
  if (error) {
    const { line, col } = lineCounter.linePos(error.pos[0]);
    throw new KubesmithError(`${file}:${line}:${col}: not valid YAML: ${error.message.split('\n')[0]}`, {
      hint: 'fix the YAML (or delete the file to start from the defaults); nothing was written',
    });
  }
  if (user.contents !== null && !isMap(user.contents)) {
    throw new KubesmithError(`${file}: values.yaml must be a mapping`, {
      hint: 'fix the file (or delete it to start from the defaults); nothing was written',
    });
  }
  const doc = parseDocument(generated);
  for (const leaf of leaves(doc.contents as Node, [])) {
    if (user.contents === null || !user.hasIn(leaf)) continue;
    const mine = user.getIn(leaf, true) as Node | undefined;
    // A scalar keeps the user's style (quotes and all): a run's output, merged again, is the same bytes.
    const node = doc.createNode(isScalar(mine) ? mine.value : (mine?.toJSON() as unknown));
    if (isScalar(node) && isScalar(mine) && mine.type !== undefined) node.type = mine.type;
    doc.setIn(leaf, node);
  }
  // The command line wins, written plain whatever the file had.
  for (const [leaf, value] of overrides) doc.setIn(leaf, doc.createNode(value));
  return doc.toString({ lineWidth: 0 });
}

/** The paths of the leaves of the generated values (see the rule above). */
function leaves(node: Node, at: string[]): string[][] {
  if (isMap(node) && node.items.length > 0 && !OPAQUE_KEYS.has(at.join('.'))) {
    return node.items.flatMap((pair) =>
      leaves(pair.value as Node, [...at, String(isScalar(pair.key) ? pair.key.value : pair.key)]),
    );
  }
  return [at];
}
