/** The subset of apiextensions.k8s.io/v1 JSONSchemaProps that CRD schemas use. */
export interface JSONSchemaProps {
  type?: string;
  format?: string;
  title?: string;
  description?: string;
  default?: unknown;
  example?: unknown;
  enum?: unknown[];
  nullable?: boolean;
  maximum?: number;
  exclusiveMaximum?: boolean;
  minimum?: number;
  exclusiveMinimum?: boolean;
  multipleOf?: number;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  maxProperties?: number;
  minProperties?: number;
  required?: string[];
  items?: JSONSchemaProps;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  externalDocs?: { url: string; description?: string };
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: ValidationRule[];
}

/**
 * Where a rule comes from (the marker that made it), kept under a non-enumerable symbol so that it travels
 * with the rule through copies (clone) but is never written out nor compared (withRuleOrigin sets it).
 */
export const RULE_ORIGIN: unique symbol = Symbol('kubesmith.ruleOrigin');

export interface RuleOrigin {
  file: string;
  line: number;
  col: number;
  /** The marker text from `+`, to find the expression's column in it. */
  raw: string;
}

/**
 * The rule with the marker it comes from: the rule itself if it has an origin already, else a copy (the
 * rule may be a cached type's, shared by every use of it).
 */
export function withRuleOrigin(rule: ValidationRule, origin: RuleOrigin): ValidationRule {
  if (rule[RULE_ORIGIN]) return rule;
  const copy = { ...rule };
  Object.defineProperty(copy, RULE_ORIGIN, { value: origin, enumerable: false, configurable: true });
  return copy;
}

export interface ValidationRule {
  [RULE_ORIGIN]?: RuleOrigin;
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/**
 * A deep copy, as `structuredClone` makes it (shared and cyclic references stay shared), but in plain
 * JavaScript for the plain objects and arrays schemas are made of, which is several times faster. Anything
 * else goes to `structuredClone`.
 */
export function clone<T>(value: T): T {
  return copy(value, new Map()) as T;
}

function copy(value: unknown, seen: Map<object, unknown>): unknown {
  if (typeof value !== 'object' || value === null) {
    return typeof value === 'function' || typeof value === 'symbol' ? structuredClone(value) : value;
  }
  const known = seen.get(value);
  if (known !== undefined) return known;
  if (Array.isArray(value) && Object.getPrototypeOf(value) === Array.prototype) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (let i = 0; i < value.length; i++) out.push(copy(value[i], seen));
    return out;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  for (const key of Object.keys(value)) out[key] = copy((value as Record<string, unknown>)[key], seen);
  // Symbol keys carry facts about the value (a rule's origin), shared rather than copied.
  for (const key of Object.getOwnPropertySymbols(value))
    Object.defineProperty(out, key, Object.getOwnPropertyDescriptor(value, key)!);
  return out;
}
