/**
 * The marker registry, assembled here as controller-tools' genall does, from the markers each generator
 * owns (DESIGN §3: controller-gen's crd, rbac and webhook markers): schema markers in
 * src/schema/markers.ts, kind and API version markers in crd-markers.ts, `+kubebuilder:rbac` in rbac.ts,
 * the webhook markers in webhook.ts; Go code-generation markers, accepted and ignored, here.
 */
import { T } from '../markers/grammar.js';
import { defineMarker, MarkerRegistry, optional, type MarkerDefinition } from '../markers/registry.js';
import { SCHEMA_MARKERS } from '../schema/markers.js';
import { CRD_MARKERS } from './crd-markers.js';
import { RBAC_MARKER } from './rbac.js';
import { WEBHOOK_CONFIGURATION_MARKER, WEBHOOK_MARKER } from './webhook.js';

/** Pasted from Go APIs, they mean nothing to kubesmith. */
const IGNORED: readonly MarkerDefinition[] = [
  defineMarker({
    name: 'kubebuilder:object:generate',
    targets: ['package', 'type'],
    value: optional(T.bool),
    help: 'Go deepcopy generation (ignored)',
    ignored: true,
  }),
  defineMarker({
    name: 'k8s:deepcopy-gen',
    targets: ['package', 'type'],
    value: optional(T.string),
    help: 'Go deepcopy generation (ignored)',
    ignored: true,
  }),
  defineMarker({
    name: 'k8s:deepcopy-gen:interfaces',
    targets: ['package', 'type'],
    value: optional(T.string),
    help: 'Go deepcopy (ignored)',
    ignored: true,
  }),
  defineMarker({
    name: 'k8s:openapi-gen',
    targets: ['package', 'type', 'field'],
    value: optional(T.string),
    help: 'Go OpenAPI generation (ignored)',
    ignored: true,
  }),
];

export const DEFINITIONS: readonly MarkerDefinition[] = [
  ...SCHEMA_MARKERS,
  ...CRD_MARKERS,
  RBAC_MARKER,
  WEBHOOK_MARKER,
  WEBHOOK_CONFIGURATION_MARKER,
  ...IGNORED,
];

/** A registry holding every kubesmith marker. */
export function defaultRegistry(): MarkerRegistry {
  return new MarkerRegistry().define(...DEFINITIONS);
}
