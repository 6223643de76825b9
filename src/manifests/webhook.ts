/**
 * Webhooks: `+kubebuilder:webhook` markers from anywhere in the scanned sources into the
 * MutatingWebhookConfiguration and ValidatingWebhookConfiguration of `config/webhook/manifests.yaml`, with
 * controller-gen v0.23's defaults (service webhook-service in system), checks (sideEffects None or
 * NoneOnDryRun, timeoutSeconds 1-30, url xor path, admissionReviewVersions) and ordering (by name).
 * `+kubebuilder:webhookconfiguration` names the configurations.
 */
import type { Diagnostic, Marker } from '../markers/index.js';

interface WebhookArgs {
  mutating: boolean;
  failurePolicy: string;
  matchPolicy?: string;
  sideEffects?: string;
  timeoutSeconds?: number;
  groups: string[];
  resources: string[];
  verbs: string[];
  versions: string[];
  name: string;
  serviceName?: string;
  serviceNamespace?: string;
  path?: string;
  servicePort?: number;
  webhookVersions?: string[];
  admissionReviewVersions: string[];
  reinvocationPolicy?: string;
  url?: string;
  patch?: string;
}

const caseless = (value: string, known: readonly string[]): string =>
  known.find((k) => k.toLowerCase() === value.toLowerCase()) ?? value;

const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT', '*'];

/** The webhook configurations of the `+kubebuilder:webhook` markers among `markers`. */
export function webhookConfigurations(markers: readonly Marker[], diagnostics: Diagnostic[]): unknown[] {
  const fail = (m: Marker, message: string, hint?: string) =>
    diagnostics.push({
      file: m.file,
      line: m.line,
      col: m.col,
      code: 'invalid-webhook',
      message,
      ...(hint ? { hint } : {}),
    });

  const names: Record<'mutating' | 'validating', string | undefined> = {
    mutating: undefined,
    validating: undefined,
  };
  for (const m of markers.filter((m) => m.name === 'kubebuilder:webhookconfiguration')) {
    const v = m.value as { mutating: boolean; name?: string };
    const key = v.mutating ? 'mutating' : 'validating';
    if (names[key] !== undefined)
      fail(m, `duplicate ${key} +kubebuilder:webhookconfiguration with name ${v.name ?? ''}`);
    names[key] = v.name ?? '';
  }

  const mutating: { name: string; webhook: Record<string, unknown> }[] = [];
  const validating: { name: string; webhook: Record<string, unknown> }[] = [];
  for (const m of markers.filter((m) => m.name === 'kubebuilder:webhook')) {
    const c = m.value as WebhookArgs;
    const errorsBefore = diagnostics.length;
    for (const version of c.webhookVersions ?? []) {
      if (version !== 'v1')
        fail(m, `unsupported webhook version: ${version}`, 'use webhookVersions=v1 or leave it out');
    }
    let matchPolicy: string | undefined;
    if (c.matchPolicy) {
      matchPolicy = caseless(c.matchPolicy, ['Exact', 'Equivalent']);
      if (matchPolicy !== 'Exact' && matchPolicy !== 'Equivalent') {
        fail(m, `unknown value ${JSON.stringify(c.matchPolicy)} for matchPolicy`, 'use Exact or Equivalent');
      }
    }
    if (Boolean(c.path) === Boolean(c.url)) {
      fail(
        m,
        `webhook ${c.name}: url and path are required and mutually exclusive`,
        'give exactly one of path=/... or url=https://...',
      );
    }
    const sideEffects = c.sideEffects
      ? caseless(c.sideEffects, ['None', 'NoneOnDryRun', 'Some', 'Unknown'])
      : undefined;
    if (sideEffects === undefined || !['None', 'NoneOnDryRun', 'Some', 'Unknown'].includes(sideEffects)) {
      fail(m, `webhook ${c.name} has no sideEffects`, 'add sideEffects=None (or NoneOnDryRun) to the marker');
    } else if (sideEffects === 'Some' || sideEffects === 'Unknown') {
      fail(
        m,
        `webhook ${c.name}: sideEffects must not be Some or Unknown in admissionregistration.k8s.io/v1`,
        'use sideEffects=None or NoneOnDryRun',
      );
    }
    if (
      c.timeoutSeconds !== undefined &&
      c.timeoutSeconds !== 0 &&
      (c.timeoutSeconds < 1 || c.timeoutSeconds > 30)
    ) {
      fail(m, `webhook ${c.name}: timeoutSeconds must be between 1 and 30 seconds`);
    }
    if (c.admissionReviewVersions.length === 0) {
      fail(m, `webhook ${c.name}: admissionReviewVersions is mandatory`, 'add admissionReviewVersions=v1');
    }
    if (c.patch) {
      fail(
        m,
        `webhook ${c.name}: patch= is not supported by kubesmith yet`,
        'set the fields through the marker arguments',
      );
    }
    if (diagnostics.length > errorsBefore) continue;

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
      mutating.push({ name: c.name, webhook });
    } else {
      validating.push({ name: c.name, webhook });
    }
  }

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
