/**
 * KNOWN_TYPES: types mapped to a fixed schema instead of their TypeScript structure, keyed by
 * `'module#Export'`. The TypeScript declarations of these types lose what the schema needs (an int32 is a
 * `number`, a Quantity a `string`), so they are recognised by name and origin, never by structure.
 */
import { deepFreeze } from '../deep-freeze.js';
import { CONDITION_SCHEMA, QUANTITY_PATTERN } from './k8s-data.js';
import { K8S_TYPES_DATA } from './k8s-types.data.js';
import type { JSONSchemaProps } from './types.js';

const RUNTIME = '@kubesmith/runtime';
const CLIENT = '@kubernetes/client-node';

/**
 * Condition's schema, shared by every use (each gets its own top level, as a cached declaration's use
 * does) and frozen, so that nothing can change it for the others.
 */
const condition = deepFreeze(CONDITION_SCHEMA);

const intOrString = (): JSONSchemaProps => ({
  anyOf: [{ type: 'integer' }, { type: 'string' }],
  'x-kubernetes-int-or-string': true,
});

export const KNOWN_TYPES: Readonly<Record<string, () => JSONSchemaProps>> = {
  [`${RUNTIME}#int32`]: () => ({ type: 'integer', format: 'int32' }),
  [`${RUNTIME}#int64`]: () => ({ type: 'integer', format: 'int64' }),
  [`${RUNTIME}#IntOrString`]: intOrString,
  [`${RUNTIME}#Quantity`]: () => ({ ...intOrString(), pattern: QUANTITY_PATTERN }),
  [`${RUNTIME}#Time`]: () => ({ type: 'string', format: 'date-time' }),
  [`${RUNTIME}#MicroTime`]: () => ({ type: 'string', format: 'date-time' }),
  [`${RUNTIME}#Duration`]: () => ({ type: 'string' }),
  [`${RUNTIME}#Condition`]: () => ({ ...condition }),
  [`${RUNTIME}#ObjectMeta`]: () => ({ type: 'object' }),
  [`${RUNTIME}#RawExtension`]: () => ({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }),
  [`${CLIENT}#V1ObjectMeta`]: () => ({ type: 'object' }),
  [`${CLIENT}#V1Condition`]: () => ({ ...condition }),
  [`${CLIENT}#IntOrString`]: intOrString,
  ['#Date']: () => ({ type: 'string', format: 'date-time' }),
};

/** Brand values of `number & { readonly __kubesmithType?: 'int32' }` aliases. */
export const BRANDS: Readonly<Record<string, () => JSONSchemaProps>> = {
  int32: () => ({ type: 'integer', format: 'int32' }),
  int64: () => ({ type: 'integer', format: 'int64' }),
};
export const BRAND_PROPERTIES = ['__kubesmithType', '__brand'];

/**
 * The schema controller-gen emits for a k8s.io/api type, by its @kubernetes/client-node name
 * (`V1PodTemplateSpec`), or undefined when the data has no such type. The data (k8s-types.data.ts) is
 * controller-gen's output for a Go catalog of these types, with identical subtrees stored once.
 */
export function clientNodeSchema(name: string): JSONSchemaProps | undefined {
  const data = loadK8sTypes();
  const id = data.roots[name];
  return id === undefined ? undefined : expand(data, id);
}

interface K8sTypesData {
  roots: Record<string, number>;
  nodes: Record<string, unknown>[];
}

let k8sTypes: K8sTypesData | undefined;
function loadK8sTypes(): K8sTypesData {
  k8sTypes ??= JSON.parse(K8S_TYPES_DATA) as K8sTypesData;
  return k8sTypes;
}

function expand(data: K8sTypesData, id: number): JSONSchemaProps {
  const node = data.nodes[id];
  if (!node) throw new Error(`k8s type data: no node ${id}`);
  const out: Record<string, unknown> = { ...node };
  const props = node['properties'] as Record<string, number> | undefined;
  if (props)
    out['properties'] = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, expand(data, v)]));
  for (const key of ['items', 'additionalProperties', 'not']) {
    const child = node[key];
    if (typeof child === 'number') out[key] = expand(data, child);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    const list = node[key] as number[] | undefined;
    if (list) out[key] = list.map((child) => expand(data, child));
  }
  return out as JSONSchemaProps;
}
