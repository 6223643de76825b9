/**
 * The marker vocabulary: controller-gen's crd, rbac and webhook markers (DESIGN §3), as typed definitions.
 * The schema and manifest generators give them meaning; this file only says where each may stand and
 * what arguments it takes.
 */
import { T, type ArgType } from './grammar.js';
import { MarkerRegistry, type MarkerDefinition, type Target } from './registry.js';

const FIELD_AND_TYPE: readonly Target[] = ['field', 'type'];
const V = 'kubebuilder:validation:';
export const ITEMS_PREFIX = `${V}items:`;

const opt = (type: ArgType) => ({ type, optional: true });
const req = (type: ArgType) => ({ type });

/** Validation markers valid on fields and types, each also in an `items:` variant for array items. */
const VALIDATION: ReadonlyArray<
  [string, MarkerDefinition['value'] | null, string, Record<string, ReturnType<typeof req>>?]
> = [
  ['Maximum', req(T.number), 'the maximum numeric value'],
  ['Minimum', req(T.number), 'the minimum numeric value'],
  ['ExclusiveMaximum', req(T.bool), 'the maximum is exclusive'],
  ['ExclusiveMinimum', req(T.bool), 'the minimum is exclusive'],
  ['MultipleOf', req(T.number), 'the value must be a multiple of this one'],
  ['MinProperties', req(T.int), 'the minimum number of keys of an object'],
  ['MaxProperties', req(T.int), 'the maximum number of keys of an object'],
  ['MaxLength', req(T.int), 'the maximum length of a string'],
  ['MinLength', req(T.int), 'the minimum length of a string'],
  ['Pattern', req(T.string), 'a regular expression the string must match'],
  ['MaxItems', req(T.int), 'the maximum length of a list'],
  ['MinItems', req(T.int), 'the minimum length of a list'],
  ['UniqueItems', req(T.bool), 'all items of the list must be unique'],
  ['Enum', req(T.list(T.any)), 'the exact values allowed'],
  ['Format', req(T.string), 'the OpenAPI format (date-time, int32, byte...)'],
  ['Type', req(T.string), 'overrides the schema type'],
  ['XPreserveUnknownFields', null, 'keeps unknown fields (x-kubernetes-preserve-unknown-fields)'],
  ['XEmbeddedResource', null, 'an embedded Kubernetes object (x-kubernetes-embedded-resource)'],
  ['XIntOrString', null, 'an integer or a string (x-kubernetes-int-or-string)'],
  [
    'XValidation',
    null,
    'a CEL validation rule',
    {
      rule: req(T.string),
      message: opt(T.string),
      messageExpression: opt(T.string),
      reason: opt(T.string),
      fieldPath: opt(T.string),
      optionalOldSelf: opt(T.bool),
    } as Record<string, ReturnType<typeof req>>,
  ],
];

function validationDefinitions(): MarkerDefinition[] {
  const out: MarkerDefinition[] = [];
  for (const [short, value, help, args] of VALIDATION) {
    for (const prefix of [V, ITEMS_PREFIX]) {
      out.push({
        name: prefix + short,
        targets: FIELD_AND_TYPE,
        ...(value ? { value } : {}),
        ...(args ? { args } : {}),
        help: prefix === V ? help : `for array items: ${help}`,
      });
    }
  }
  return out;
}

const flag = (
  name: string,
  targets: readonly Target[],
  help: string,
  extra: Partial<MarkerDefinition> = {},
) => ({ name, targets, help, ...extra }) satisfies MarkerDefinition;
const valued = (
  name: string,
  targets: readonly Target[],
  value: NonNullable<MarkerDefinition['value']>,
  help: string,
  extra: Partial<MarkerDefinition> = {},
) => ({ name, targets, value, help, ...extra }) satisfies MarkerDefinition;
const withArgs = (
  name: string,
  targets: readonly Target[],
  args: NonNullable<MarkerDefinition['args']>,
  help: string,
  extra: Partial<MarkerDefinition> = {},
) => ({ name, targets, args, help, ...extra }) satisfies MarkerDefinition;

const FIELD: readonly Target[] = ['field'];
const TYPE: readonly Target[] = ['type'];
const PACKAGE: readonly Target[] = ['package'];

export const DEFINITIONS: readonly MarkerDefinition[] = [
  ...validationDefinitions(),
  // Type-only validation.
  valued(`${V}AtMostOneOf`, TYPE, req(T.list(T.string)), 'at most one of these fields may be set'),
  valued(`${V}ExactlyOneOf`, TYPE, req(T.list(T.string)), 'exactly one of these fields must be set'),
  valued(`${V}AtLeastOneOf`, TYPE, req(T.list(T.string)), 'at least one of these fields must be set'),
  flag('k8s:enum', TYPE, 'the type is an enum of its string values'),
  // Field-only.
  flag(`${V}Required`, FIELD, 'the field is required (prefer +required)'),
  flag(`${V}Optional`, FIELD, 'the field is optional (prefer +optional)'),
  flag('required', FIELD, 'the field is required'),
  flag('optional', FIELD, 'the field is optional'),
  flag('k8s:required', FIELD, 'the field is required (and non-empty)'),
  flag('k8s:optional', FIELD, 'the field is optional'),
  flag('nullable', FIELD, 'the field may be null'),
  valued('kubebuilder:default', FIELD, req(T.any), 'the default value'),
  valued('default', FIELD, req(T.json), 'the default value, as JSON'),
  valued('kubebuilder:example', FIELD, req(T.any), 'an example value'),
  flag(`${V}EmbeddedResource`, FIELD, 'an embedded Kubernetes object'),
  flag(`${V}Schemaless`, FIELD, 'emit no schema for this field (use with PreserveUnknownFields)'),
  flag('k8s:immutable', FIELD, 'the field cannot change once set'),
  valued('k8s:maxItems', FIELD, req(T.int), 'the maximum length of a list'),
  valued('k8s:minimum', FIELD, req(T.number), 'the minimum numeric value'),
  valued('k8s:maximum', FIELD, req(T.number), 'the maximum numeric value'),
  // Field and type.
  flag('kubebuilder:pruning:PreserveUnknownFields', FIELD_AND_TYPE, 'keeps unknown fields'),
  valued('kubebuilder:title', FIELD_AND_TYPE, req(T.any), 'the schema title'),
  valued('listType', FIELD_AND_TYPE, req(T.string), 'atomic, set or map'),
  valued('listMapKey', FIELD_AND_TYPE, req(T.string), 'a key field of a map list'),
  valued('mapType', FIELD_AND_TYPE, req(T.string), 'atomic or granular'),
  valued('structType', FIELD_AND_TYPE, req(T.string), 'atomic or granular'),
  valued('k8s:listType', FIELD_AND_TYPE, req(T.string), 'atomic, set or map'),
  valued('k8s:listMapKey', FIELD_AND_TYPE, req(T.string), 'a key field of a map list'),
  withArgs(
    'kubebuilder:externalDocs',
    FIELD_AND_TYPE,
    { url: req(T.string), description: opt(T.string) },
    'a link to external documentation',
  ),
  // Package (file) level.
  valued('groupName', PACKAGE, opt(T.string), 'the API group of the version directory'),
  valued('versionName', PACKAGE, req(T.string), 'overrides the version name taken from the directory'),
  flag(`${V}Optional`, PACKAGE, 'all fields in this version are optional by default'),
  flag(`${V}Required`, PACKAGE, 'all fields in this version are required by default'),
  flag('kubebuilder:skip', PACKAGE, 'this version directory is not an API version'),
  // Kinds.
  valued('kubebuilder:object:root', TYPE, opt(T.bool), 'the type is a kind (or a list of a kind)'),
  flag('kubebuilder:subresource:status', TYPE, 'enable the status subresource', { kindOnly: true }),
  withArgs(
    'kubebuilder:subresource:scale',
    TYPE,
    { specpath: req(T.string), statuspath: req(T.string), selectorpath: opt(T.string) },
    'enable the scale subresource',
    { kindOnly: true },
  ),
  withArgs(
    'kubebuilder:printcolumn',
    TYPE,
    {
      name: req(T.string),
      type: req(T.string),
      JSONPath: req(T.string),
      description: opt(T.string),
      format: opt(T.string),
      priority: opt(T.int),
    },
    'an additional printer column for kubectl get',
    { kindOnly: true },
  ),
  withArgs(
    'kubebuilder:resource',
    TYPE,
    {
      path: opt(T.string),
      shortName: opt(T.list(T.string)),
      categories: opt(T.list(T.string)),
      singular: opt(T.string),
      scope: opt(T.string),
    },
    'resource names and scope',
    { kindOnly: true },
  ),
  flag('kubebuilder:storageversion', TYPE, 'this version is the storage version', { kindOnly: true }),
  flag('kubebuilder:skipversion', TYPE, 'leave this version out of the CRD', { kindOnly: true }),
  flag('kubebuilder:unservedversion', TYPE, 'this version is not served', { kindOnly: true }),
  withArgs('kubebuilder:deprecatedversion', TYPE, { warning: opt(T.string) }, 'this version is deprecated', {
    kindOnly: true,
  }),
  withArgs(
    'kubebuilder:metadata',
    TYPE,
    { annotations: opt(T.list(T.string)), labels: opt(T.list(T.string)) },
    'annotations and labels of the CRD',
    { kindOnly: true },
  ),
  withArgs('kubebuilder:selectablefield', TYPE, { JSONPath: req(T.string) }, 'a field selector', {
    kindOnly: true,
  }),
  // RBAC and webhooks: anywhere.
  withArgs(
    'kubebuilder:rbac',
    PACKAGE,
    {
      groups: opt(T.list(T.string)),
      resources: opt(T.list(T.string)),
      resourceNames: opt(T.list(T.string)),
      verbs: req(T.list(T.string)),
      urls: opt(T.list(T.string)),
      namespace: opt(T.string),
      roleName: opt(T.string),
    },
    'an RBAC rule of the manager role',
  ),
  withArgs(
    'kubebuilder:webhook',
    PACKAGE,
    {
      mutating: req(T.bool),
      failurePolicy: req(T.string),
      matchPolicy: opt(T.string),
      sideEffects: opt(T.string),
      timeoutSeconds: opt(T.int),
      groups: req(T.list(T.string)),
      resources: req(T.list(T.string)),
      verbs: req(T.list(T.string)),
      versions: req(T.list(T.string)),
      name: req(T.string),
      serviceName: opt(T.string),
      serviceNamespace: opt(T.string),
      path: opt(T.string),
      servicePort: opt(T.int),
      webhookVersions: opt(T.list(T.string)),
      admissionReviewVersions: req(T.list(T.string)),
      reinvocationPolicy: opt(T.string),
      url: opt(T.string),
      patch: opt(T.string),
    },
    'an admission webhook',
  ),
  withArgs(
    'kubebuilder:webhookconfiguration',
    PACKAGE,
    { mutating: req(T.bool), name: opt(T.string) },
    'the name of a webhook configuration',
  ),
  // Go code-generation markers: accepted (pasted from Go APIs) and ignored.
  valued(
    'kubebuilder:object:generate',
    ['package', 'type'],
    opt(T.bool),
    'Go deepcopy generation (ignored)',
    {
      ignored: true,
    },
  ),
  valued('k8s:deepcopy-gen', ['package', 'type'], opt(T.string), 'Go deepcopy generation (ignored)', {
    ignored: true,
  }),
  valued('k8s:deepcopy-gen:interfaces', ['package', 'type'], opt(T.string), 'Go deepcopy (ignored)', {
    ignored: true,
  }),
  valued('k8s:openapi-gen', ['package', 'type', 'field'], opt(T.string), 'Go OpenAPI generation (ignored)', {
    ignored: true,
  }),
];

/** A registry holding every kubesmith marker. */
export function defaultRegistry(): MarkerRegistry {
  return new MarkerRegistry().define(...DEFINITIONS);
}
