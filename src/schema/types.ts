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
 * with the rule through copies of it but is never written out nor compared (withRuleOrigin sets it).
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
