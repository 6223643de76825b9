/**
 * RBAC: `+kubebuilder:rbac` markers from anywhere in the scanned sources into the ClusterRole `manager-role`
 * and a Role per namespace (or per `roleName`), merged, de-duplicated and sorted exactly as controller-gen
 * v0.23 does, so a Go project and its TypeScript twin get the same role.yaml.
 */
import type { RbacRule } from '../markers/effects.js';
import { T } from '../markers/grammar.js';
import { defineMarker, optional, required, type Marker } from '../markers/registry.js';

const DEFAULT_ROLE_NAME = 'manager-role';

/** `+kubebuilder:rbac`: one rule of the manager's role (or of the role it names), from anywhere. */
export const RBAC_MARKER = defineMarker({
  name: 'kubebuilder:rbac',
  targets: ['package'],
  args: {
    groups: optional(T.list(T.string)),
    resources: optional(T.list(T.string)),
    resourceNames: optional(T.list(T.string)),
    verbs: required(T.list(T.string)),
    urls: optional(T.list(T.string)),
    namespace: optional(T.string),
    roleName: optional(T.string),
  },
  help: 'an RBAC rule of the manager role',
  rbac: (rules, rule) => void rules.push(rule),
});

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}

export interface RoleObject {
  apiVersion: 'rbac.authorization.k8s.io/v1';
  kind: 'ClusterRole' | 'Role';
  metadata: { name: string; namespace?: string };
  rules: PolicyRule[];
}

interface WorkRule {
  groups: string[];
  resources: string[];
  resourceNames: string[];
  urls: string[];
  verbs: string[];
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const dedupSort = (values: readonly string[]): string[] => [...new Set(values)].sort(cmp);

function normalize(rule: WorkRule): void {
  rule.groups = dedupSort(rule.groups);
  rule.resources = dedupSort(rule.resources);
  rule.resourceNames = dedupSort(rule.resourceNames);
  rule.urls = dedupSort(rule.urls);
  rule.verbs = dedupSort(rule.verbs);
}

type Field = 'groups' | 'resources' | 'resourceNames' | 'urls' | 'verbs';
/** The rule's key over some of its fields (each normalized and joined with `&`). */
function keyOf(rule: WorkRule, fields: readonly Field[]): string {
  normalize(rule);
  return fields.map((f) => rule[f].join('&')).join(' + ');
}
const RULE_KEY: readonly Field[] = ['groups', 'resources', 'resourceNames', 'urls'];

/** Merges rules that differ only in `field` into one, as controller-gen's three de-duplication passes. */
function mergeOn(rules: WorkRule[], field: 'groups' | 'resources' | 'urls'): WorkRule[] {
  const others = (['groups', 'resources', 'resourceNames', 'urls', 'verbs'] as const).filter(
    (f) => f !== field,
  );
  const groups = new Map<string, WorkRule[]>();
  for (const rule of rules) {
    const key = keyOf(rule, others);
    groups.set(key, [...(groups.get(key) ?? []), rule]);
  }
  const merged = new Map<string, WorkRule>();
  for (const group of groups.values()) {
    const [first, ...rest] = group;
    if (!first) continue;
    for (const other of rest) first[field] = [...first[field], ...other[field]];
    merged.set(keyOf(first, RULE_KEY), first);
  }
  return [...merged.values()];
}

function normalizeRules(rules: WorkRule[]): PolicyRule[] {
  const byKey = new Map<string, WorkRule>();
  for (const rule of rules) {
    rule.groups = rule.groups.map((g) => (g === 'core' ? '' : g));
    const key = keyOf(rule, RULE_KEY);
    const existing = byKey.get(key);
    if (existing) existing.verbs = dedupSort([...existing.verbs, ...rule.verbs]);
    else byKey.set(key, rule);
  }
  let merged = [...byKey.values()];
  merged = mergeOn(merged, 'resources');
  merged = mergeOn(merged, 'groups');
  merged = mergeOn(merged, 'urls');
  const sorted = merged
    .map((rule) => ({ key: keyOf(rule, RULE_KEY), rule }))
    .sort((a, b) => cmp(a.key, b.key))
    .map(({ rule }) => rule);
  return sorted.map((rule) => {
    const verbs = rule.verbs.includes('*') ? ['*'] : rule.verbs;
    const out: PolicyRule = { verbs };
    if (rule.groups.length > 0) out.apiGroups = rule.groups;
    if (rule.resources.length > 0) out.resources = rule.resources;
    if (rule.resourceNames.length > 0) out.resourceNames = rule.resourceNames;
    if (rule.urls.length > 0) out.nonResourceURLs = rule.urls;
    return out;
  });
}

/** The ClusterRole and Roles of a set of rules, sorted by namespace, then role name. */
export function generateRoles(rules: readonly RbacRule[], roleName = DEFAULT_ROLE_NAME): RoleObject[] {
  const byRole = new Map<string, { namespace: string; roleName: string; rules: WorkRule[] }>();
  for (const rule of rules) {
    const namespace = rule.namespace ?? '';
    const name = rule.roleName || roleName;
    const key = `${namespace}\u0000${name}`;
    let entry = byRole.get(key);
    if (!entry) {
      entry = { namespace, roleName: name, rules: [] };
      byRole.set(key, entry);
    }
    const base = {
      groups: [...(rule.groups ?? [])],
      resourceNames: [...(rule.resourceNames ?? [])],
      urls: [...(rule.urls ?? [])],
      verbs: [...rule.verbs],
    };
    const resources = rule.resources ?? [];
    if (resources.length === 0) entry.rules.push({ ...base, resources: [] });
    for (const resource of resources) {
      entry.rules.push({
        ...base,
        groups: [...base.groups],
        resourceNames: [...base.resourceNames],
        urls: [...base.urls],
        verbs: [...base.verbs],
        resources: [resource],
      });
    }
  }
  const entries = [...byRole.values()].sort(
    (a, b) => cmp(a.namespace, b.namespace) || cmp(a.roleName, b.roleName),
  );
  const out: RoleObject[] = [];
  for (const entry of entries) {
    const policyRules = normalizeRules(entry.rules);
    if (policyRules.length === 0) continue;
    out.push(
      entry.namespace === ''
        ? {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'ClusterRole',
            metadata: { name: entry.roleName },
            rules: policyRules,
          }
        : {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'Role',
            metadata: { name: entry.roleName, namespace: entry.namespace },
            rules: policyRules,
          },
    );
  }
  return out;
}

/** The roles of the `+kubebuilder:rbac` markers among `markers`. */
export function rolesFromMarkers(markers: readonly Marker[], roleName = DEFAULT_ROLE_NAME): RoleObject[] {
  const rules: RbacRule[] = [];
  for (const m of markers) m.definition.rbac?.(rules, m.value);
  return generateRoles(rules, roleName);
}
