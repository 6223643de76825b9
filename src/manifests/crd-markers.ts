/**
 * The markers of kinds and of API version directories, with what each does to a CRD, to a version of it,
 * or to the directory's group and version (DESIGN §3). crd.ts runs their effects; it knows none by name.
 */
import type { Fail } from '../markers/effects.js';
import { T } from '../markers/grammar.js';
import { defineMarker, optional, required, type MarkerDefinition, type Target } from '../markers/registry.js';
import { GROUP_RULE, isGroup, isLabel, LABEL_RULE } from './crd-names.js';

const TYPE: readonly Target[] = ['type'];
const PACKAGE: readonly Target[] = ['package'];
const V = 'kubebuilder:validation:';

/**
 * Whether `value`, the `what` of a marker, is a DNS-1035 label as the API server asks; if not, says so
 * with `example` as the fix. An invalid name is never used (a default stands in): it may name a file.
 */
function label(fail: Fail, what: string, value: string, example: string, where = ''): boolean {
  if (isLabel(value)) return true;
  fail(`invalid ${what} ${JSON.stringify(value)}${where}: it must be ${LABEL_RULE}`, `write e.g. ${example}`);
  return false;
}

/** A type is a kind by its shape (apiVersion, kind, metadata) or by this marker (crd.ts). */
export const OBJECT_ROOT = defineMarker({
  name: 'kubebuilder:object:root',
  targets: TYPE,
  value: optional(T.bool),
  help: 'the type is a kind (or a list of a kind)',
});

export const CRD_MARKERS: readonly MarkerDefinition[] = [
  // Package (file) level: the API version directory.
  defineMarker({
    name: 'groupName',
    targets: PACKAGE,
    value: optional(T.string),
    help: 'the API group of the version directory',
    directory(dir, group, fail) {
      if ('group' in dir) return; // the first one counts
      dir.group = group;
      if (group === undefined || isGroup(group)) return;
      fail(
        `invalid +groupName ${JSON.stringify(group)}: a CRD's group must be ${GROUP_RULE}`,
        "write the group qualified with the project's domain, e.g. +groupName=webapp.example.com",
      );
      dir.group = undefined;
      dir.invalidGroup = true;
    },
  }),
  defineMarker({
    name: 'versionName',
    targets: PACKAGE,
    value: required(T.string),
    help: 'overrides the version name taken from the directory',
    directory(dir, version, fail) {
      if (dir.version === undefined && label(fail, '+versionName', version, '+versionName=v1beta1'))
        dir.version = version;
    },
  }),
  // Read where fields are mapped (ManifestContext's optionalByDefault): they change every field's default.
  defineMarker({
    name: `${V}Optional`,
    targets: PACKAGE,
    help: 'all fields in this version are optional by default',
  }),
  defineMarker({
    name: `${V}Required`,
    targets: PACKAGE,
    help: 'all fields in this version are required by default',
  }),
  defineMarker({
    name: 'kubebuilder:skip',
    targets: PACKAGE,
    help: 'this version directory is not an API version',
    directory: (dir) => void (dir.skip = true),
  }),
  // Kinds.
  OBJECT_ROOT,
  defineMarker({
    name: 'kubebuilder:subresource:status',
    targets: TYPE,
    help: 'enable the status subresource',
    version: (v) => void (v.subresources['status'] = {}),
  }),
  defineMarker({
    name: 'kubebuilder:subresource:scale',
    targets: TYPE,
    args: { specpath: required(T.string), statuspath: required(T.string), selectorpath: optional(T.string) },
    help: 'enable the scale subresource',
    version(v, { specpath, statuspath, selectorpath }) {
      v.subresources['scale'] = {
        specReplicasPath: specpath,
        statusReplicasPath: statuspath,
        ...(selectorpath !== undefined ? { labelSelectorPath: selectorpath } : {}),
      };
    },
  }),
  defineMarker({
    name: 'kubebuilder:printcolumn',
    targets: TYPE,
    args: {
      name: required(T.string),
      type: required(T.string),
      JSONPath: required(T.string),
      description: optional(T.string),
      format: optional(T.string),
      priority: optional(T.int),
    },
    help: 'an additional printer column for kubectl get',
    version(v, c) {
      v.columns.push({
        name: c.name,
        type: c.type,
        jsonPath: c.JSONPath,
        ...(c.description ? { description: c.description } : {}),
        ...(c.format ? { format: c.format } : {}),
        ...(c.priority ? { priority: c.priority } : {}),
      });
    },
  }),
  defineMarker({
    name: 'kubebuilder:resource',
    targets: TYPE,
    args: {
      path: optional(T.string),
      shortName: optional(T.list(T.string)),
      categories: optional(T.list(T.string)),
      singular: optional(T.string),
      scope: optional(T.string),
    },
    help: 'resource names and scope',
    crd(crd, r, fail) {
      const names = (arg: string, values: string[], example: string) =>
        values.map((value) => label(fail, arg, value, example, ' in +kubebuilder:resource')).every(Boolean);
      if (r.path && names('path (the plural)', [r.path], 'path=guestbooks')) crd.names.plural = r.path;
      if (r.singular && names('singular', [r.singular], 'singular=guestbook'))
        crd.names['singular'] = r.singular;
      if (r.shortName && names('shortName', r.shortName, 'shortName=gb;gbook'))
        crd.names['shortNames'] = r.shortName;
      if (r.categories && names('categories', r.categories, 'categories=all'))
        crd.names['categories'] = r.categories;
      crd.scope = r.scope || 'Namespaced';
      if (crd.scope !== 'Namespaced' && crd.scope !== 'Cluster')
        fail(
          `invalid scope ${JSON.stringify(crd.scope)} in +kubebuilder:resource`,
          'use scope=Namespaced or scope=Cluster',
        );
    },
  }),
  defineMarker({
    name: 'kubebuilder:storageversion',
    targets: TYPE,
    help: 'this version is the storage version',
    version: (v) => void (v.storage = true),
  }),
  defineMarker({
    name: 'kubebuilder:skipversion',
    targets: TYPE,
    help: 'leave this version out of the CRD',
    version: (v) => void (v.skip = true),
  }),
  defineMarker({
    name: 'kubebuilder:unservedversion',
    targets: TYPE,
    help: 'this version is not served',
    version: (v) => void (v.served = false),
  }),
  defineMarker({
    name: 'kubebuilder:deprecatedversion',
    targets: TYPE,
    args: { warning: optional(T.string) },
    help: 'this version is deprecated',
    version(v, { warning }) {
      v.deprecated = true;
      if (warning !== undefined) v.deprecationWarning = warning;
    },
  }),
  defineMarker({
    name: 'kubebuilder:metadata',
    targets: TYPE,
    args: { annotations: optional(T.list(T.string)), labels: optional(T.list(T.string)) },
    help: 'annotations and labels of the CRD',
    crd(crd, { annotations, labels }, fail) {
      for (const a of annotations ?? []) {
        const eq = a.indexOf('=');
        if (eq < 0) fail(`annotation ${a} is not in 'key=value' format`);
        else crd.annotations[a.slice(0, eq)] = a.slice(eq + 1);
      }
      for (const l of labels ?? []) {
        const eq = l.indexOf('=');
        crd.labels[eq < 0 ? l : l.slice(0, eq)] = eq < 0 ? '' : l.slice(eq + 1);
      }
    },
  }),
  defineMarker({
    name: 'kubebuilder:selectablefield',
    targets: TYPE,
    args: { JSONPath: required(T.string) },
    help: 'a field selector',
    version: (v, { JSONPath }) => void v.selectableFields.push({ jsonPath: JSONPath }),
  }),
];
