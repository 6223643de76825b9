/**
 * Every marker kubesmith knows (DESIGN §3: controller-gen's crd, rbac and webhook markers), gathered from
 * where each is defined with what it does: schema markers in src/schema/markers.ts, kind and API version
 * markers in src/manifests/crd-markers.ts, `+kubebuilder:rbac` in src/manifests/rbac.ts, the webhook
 * markers in src/manifests/webhook.ts; Go code-generation markers, accepted and ignored, here.
 */
import { CRD_MARKERS } from '../manifests/crd-markers.js';
import { RBAC_MARKER } from '../manifests/rbac.js';
import { WEBHOOK_CONFIGURATION_MARKER, WEBHOOK_MARKER } from '../manifests/webhook.js';
import { SCHEMA_MARKERS } from '../schema/markers.js';
import { T } from './grammar.js';
import { defineMarker, MarkerRegistry, optional, type MarkerDefinition } from './registry.js';

export { ITEMS_PREFIX } from '../schema/markers.js';

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
