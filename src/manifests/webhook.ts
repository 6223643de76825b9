/**
 * Webhooks: `+kubebuilder:webhook` markers from anywhere in the scanned sources into the
 * MutatingWebhookConfiguration and ValidatingWebhookConfiguration of `config/webhook/manifests.yaml`, with
 * controller-gen v0.23's defaults (service webhook-service in system), checks (sideEffects None or
 * NoneOnDryRun, timeoutSeconds 1-30, url xor path, admissionReviewVersions) and ordering (by name).
 * `+kubebuilder:webhookconfiguration` names the configurations.
 */
import type { Report } from '../markers/diagnostics.js';
import type { Fail, WebhookSet } from '../markers/effects.js';
import { T } from '../markers/grammar.js';
import { defineMarker, optional, required, type Marker } from '../markers/registry.js';

const caseless = (value: string, known: readonly string[]): string =>
  known.find((k) => k.toLowerCase() === value.toLowerCase()) ?? value;

const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT', '*'];

/** `+kubebuilder:webhook`: one admission webhook, checked and added to its configuration. */
export const WEBHOOK_MARKER = defineMarker({
  name: 'kubebuilder:webhook',
  targets: ['package'],
  args: {
    mutating: required(T.bool),
    failurePolicy: required(T.string),
    matchPolicy: optional(T.string),
    sideEffects: optional(T.string),
    timeoutSeconds: optional(T.int),
    groups: required(T.list(T.string)),
    resources: required(T.list(T.string)),
    verbs: required(T.list(T.string)),
    versions: required(T.list(T.string)),
    name: required(T.string),
    serviceName: optional(T.string),
    serviceNamespace: optional(T.string),
    path: optional(T.string),
    servicePort: optional(T.int),
    webhookVersions: optional(T.list(T.string)),
    admissionReviewVersions: required(T.list(T.string)),
    reinvocationPolicy: optional(T.string),
    url: optional(T.string),
    patch: optional(T.string),
  },
  help: 'an admission webhook',
  webhook(set, c, report) {
    let failed = false;
    const fail: Fail = (message, hint) => {
      failed = true;
      report(message, hint);
    };
    for (const version of c.webhookVersions ?? []) {
      if (version !== 'v1')
        fail(`unsupported webhook version: ${version}`, 'use webhookVersions=v1 or leave it out');
    }
    let matchPolicy: string | undefined;
    if (c.matchPolicy) {
      matchPolicy = caseless(c.matchPolicy, ['Exact', 'Equivalent']);
      if (matchPolicy !== 'Exact' && matchPolicy !== 'Equivalent') {
        fail(`unknown value ${JSON.stringify(c.matchPolicy)} for matchPolicy`, 'use Exact or Equivalent');
      }
    }
    if (Boolean(c.path) === Boolean(c.url)) {
      fail(
        `webhook ${c.name}: url and path are required and mutually exclusive`,
        'give exactly one of path=/... or url=https://...',
      );
    }
    const sideEffects = c.sideEffects
      ? caseless(c.sideEffects, ['None', 'NoneOnDryRun', 'Some', 'Unknown'])
      : undefined;
    if (sideEffects === undefined || !['None', 'NoneOnDryRun', 'Some', 'Unknown'].includes(sideEffects)) {
      fail(`webhook ${c.name} has no sideEffects`, 'add sideEffects=None (or NoneOnDryRun) to the marker');
    } else if (sideEffects === 'Some' || sideEffects === 'Unknown') {
      fail(
        `webhook ${c.name}: sideEffects must not be Some or Unknown in admissionregistration.k8s.io/v1`,
        'use sideEffects=None or NoneOnDryRun',
      );
    }
    if (
      c.timeoutSeconds !== undefined &&
      c.timeoutSeconds !== 0 &&
      (c.timeoutSeconds < 1 || c.timeoutSeconds > 30)
    ) {
      fail(`webhook ${c.name}: timeoutSeconds must be between 1 and 30 seconds`);
    }
    if (c.admissionReviewVersions.length === 0) {
      fail(`webhook ${c.name}: admissionReviewVersions is mandatory`, 'add admissionReviewVersions=v1');
    }
    if (c.patch) {
      fail(
        `webhook ${c.name}: patch= is not supported by kubesmith yet`,
        'set the fields through the marker arguments',
      );
    }
    if (failed) return;

    const rule = {
      apiGroups: c.groups.map((g) => (g === 'core' ? '' : g)),
      apiVersions: c.versions,
      operations: c.verbs.map((v) => caseless(v, OPERATIONS)),
      resources: c.resources,
    };
    const clientConfig = c.path
      ? {
          service: {
            name: c.serviceName || 'webhook-service',
            namespace: c.serviceNamespace || 'system',
            path: c.path,
            ...(c.servicePort !== undefined ? { port: c.servicePort } : {}),
          },
        }
      : { url: c.url };
    const failurePolicy = caseless(c.failurePolicy, ['Ignore', 'Fail']);
    const webhook: Record<string, unknown> = {
      admissionReviewVersions: c.admissionReviewVersions,
      clientConfig,
      failurePolicy,
      ...(matchPolicy ? { matchPolicy } : {}),
      name: c.name,
      rules: [rule],
      sideEffects,
      ...(c.timeoutSeconds ? { timeoutSeconds: c.timeoutSeconds } : {}),
    };
    if (c.mutating) {
      const reinvocation = c.reinvocationPolicy
        ? caseless(c.reinvocationPolicy, ['Never', 'IfNeeded'])
        : undefined;
      if (reinvocation === 'Never' || reinvocation === 'IfNeeded')
        webhook['reinvocationPolicy'] = reinvocation;
      set.mutating.push({ name: c.name, webhook });
    } else {
      set.validating.push({ name: c.name, webhook });
    }
  },
});

/** `+kubebuilder:webhookconfiguration`: the name of the mutating or the validating configuration. */
export const WEBHOOK_CONFIGURATION_MARKER = defineMarker({
  name: 'kubebuilder:webhookconfiguration',
  targets: ['package'],
  args: { mutating: required(T.bool), name: optional(T.string) },
  help: 'the name of a webhook configuration',
  webhook(set, { mutating, name }, fail) {
    const key = mutating ? 'mutating' : 'validating';
    if (set.names[key] !== undefined)
      fail(`duplicate ${key} +kubebuilder:webhookconfiguration with name ${name ?? ''}`);
    set.names[key] = name ?? '';
  },
});

/** The webhook configurations of the `+kubebuilder:webhook` markers among `markers`. */
export function webhookConfigurations(markers: readonly Marker[], report: Report): unknown[] {
  const set: WebhookSet = {
    names: { mutating: undefined, validating: undefined },
    mutating: [],
    validating: [],
  };
  for (const m of markers) m.definition.webhook?.(set, m.value, report.marker(m));
  const { names, mutating, validating } = set;

  const byName = (a: { name: string }, b: { name: string }) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  const documents: unknown[] = [];
  if (mutating.length > 0) {
    documents.push({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: names.mutating || 'mutating-webhook-configuration' },
      webhooks: mutating.sort(byName).map((w) => w.webhook),
    });
  }
  if (validating.length > 0) {
    documents.push({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: names.validating || 'validating-webhook-configuration' },
      webhooks: validating.sort(byName).map((w) => w.webhook),
    });
  }
  return documents;
}
