/**
 * A resource as `create api` and `create webhook` see it: group, version and kind from the flags,
 * checked with kubebuilder's rules, plus the names derived from them.
 */
import { KubesmithError, UsageError } from '../errors.js';
import type { ProjectConfig, ResourceConfig } from './config.js';
import { crdDefaultPlural, kubebuilderPlural } from './plural.js';
import {
  validateGroup,
  validateKind,
  validatePlural,
  validateVersion,
  type NameProblem,
} from './validation.js';

/**
 * Groups of the Kubernetes API that come with the cluster, and the domain that qualifies them
 * (`networking` -> `networking.k8s.io`, `apps` -> `apps`). A controller for one of these watches a
 * built-in kind (`--resource=false`); its RBAC group is the qualified group, `""` for core.
 */
export const BUILTIN_GROUPS: Readonly<Record<string, string>> = {
  admissionregistration: 'k8s.io',
  apps: '',
  authentication: 'k8s.io',
  authorization: 'k8s.io',
  autoscaling: '',
  batch: '',
  certificates: 'k8s.io',
  coordination: 'k8s.io',
  core: '',
  discovery: 'k8s.io',
  events: 'k8s.io',
  networking: 'k8s.io',
  node: 'k8s.io',
  policy: '',
  rbac: 'authorization.k8s.io',
  scheduling: 'k8s.io',
  storage: 'k8s.io',
};

/** Built-in kinds that are not namespaced; every other built-in kind is. */
const CLUSTER_SCOPED_BUILTINS = new Set([
  'Namespace',
  'Node',
  'PersistentVolume',
  'ClusterRole',
  'ClusterRoleBinding',
  'StorageClass',
  'PriorityClass',
  'IngressClass',
  'CustomResourceDefinition',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
  'CertificateSigningRequest',
  'RuntimeClass',
  'CSIDriver',
  'CSINode',
  'VolumeAttachment',
]);

export interface Resource {
  group: string;
  version: string;
  kind: string;
  /**
   * The plural, decided here once for every file that names it (roles, markers, the CRD and its file,
   * kustomizations, webhooks, PROJECT): `--plural`, else the one PROJECT records for the kind, else
   * kubebuilder's default.
   */
  plural: string;
  /** The plural as PROJECT records it: undefined when it is kubebuilder's default, which PROJECT leaves out. */
  recordedPlural: string | undefined;
  /**
   * `path=` of the kind's `+kubebuilder:resource` marker: the plural whenever it differs from the CRD
   * generator's own default, so the CRD's name always matches PROJECT, the roles and
   * config/crd/kustomization.yaml. kubebuilder writes it only when the plural is not its own default; the
   * two defaults differ for a few kinds (`ClusterDNS`: clusterdns for kubebuilder, clusterdnses for
   * controller-gen), where a kubebuilder project's CRD then misses its kustomization entry.
   */
  pluralMarker: string | undefined;
  /** The full API group: `webapp.example.com`, `apps`, `networking.k8s.io`, `''` for core. */
  qualifiedGroup: string;
  /** The domain that qualifies the group, `''` for core-style groups. */
  domain: string;
  namespaced: boolean;
  /** A kind that comes with Kubernetes, typed by @kubernetes/client-node. */
  builtin: boolean;
  /** A kind `kubesmith import crd` imported into src/external (external.ts): `group` is its whole group. */
  external?: boolean;
}

export interface ResourceFlags {
  group: string;
  version: string;
  kind: string;
  plural?: string;
  namespaced?: boolean;
}

function fail(problem: NameProblem | undefined): void {
  if (problem) throw new UsageError(problem.message, problem.hint);
}

/** The lower-case plural kubebuilder would pick: `guestbooks`, `policies`, `ingresses`. */
export function defaultPlural(kind: string): string {
  return kubebuilderPlural(kind);
}

/**
 * Builds and validates the resource named by the flags. `builtin` asks for a kind of a built-in group
 * (with `--resource=false`); otherwise the group is qualified with the project's domain.
 */
export function resolveResource(flags: ResourceFlags, project: ProjectConfig, builtin: boolean): Resource {
  const builtinDomain = BUILTIN_GROUPS[flags.group];
  const isBuiltin = builtin && builtinDomain !== undefined;
  const domain = isBuiltin ? builtinDomain : project.domain;
  fail(validateVersion(flags.version));
  fail(validateGroup(flags.group, domain));
  fail(validateKind(flags.kind));
  const given = flags.plural ?? findResource(project, flags)?.plural;
  const plural = given ?? defaultPlural(flags.kind);
  const pluralProblem = validatePlural(plural);
  if (pluralProblem && given === undefined) {
    // kubebuilder's inflection upper-cases acronyms it knows (`dns` -> `dnsDNSes`): name one.
    throw new UsageError(
      `the default plural of ${flags.kind} is ${plural} (kubebuilder's), which is not a DNS-1035 label`,
      `pass the plural, e.g. --plural ${crdDefaultPlural(flags.kind)}`,
    );
  }
  fail(pluralProblem);
  const qualifiedGroup = isBuiltin
    ? flags.group === 'core'
      ? ''
      : [flags.group, builtinDomain].filter(Boolean).join('.')
    : [flags.group, project.domain].filter(Boolean).join('.');
  return {
    group: flags.group,
    version: flags.version,
    kind: flags.kind,
    plural,
    recordedPlural: plural === defaultPlural(flags.kind) ? undefined : plural,
    pluralMarker: plural === crdDefaultPlural(flags.kind) ? undefined : plural,
    qualifiedGroup,
    domain,
    namespaced: isBuiltin ? !CLUSTER_SCOPED_BUILTINS.has(flags.kind) : (flags.namespaced ?? true),
    builtin: isBuiltin,
  };
}

function sameGvk(resource: Pick<Resource, 'group' | 'version' | 'kind'>, config: ResourceConfig): boolean {
  return (
    config.group === resource.group && config.version === resource.version && config.kind === resource.kind
  );
}

export function findResource(project: ProjectConfig, resource: Pick<Resource, 'group' | 'version' | 'kind'>) {
  return project.resources.find((config) => sameGvk(resource, config));
}

/** kubebuilder's rule: a single-group project holds the APIs of one group only. */
export function checkSingleGroup(project: ProjectConfig, resource: Resource): void {
  if (project.multigroup) return;
  const groups = new Set(project.resources.filter((config) => config.api).map((config) => config.group));
  if (groups.size > 0 && !groups.has(resource.group)) {
    throw new KubesmithError(
      `multiple groups are not allowed by default: this project's APIs are in group ${[...groups].join(', ')}, not ${resource.group}`,
      {
        hint: 'set `multigroup: true` in PROJECT (or start with `kubesmith init --multigroup`) to have APIs in several groups',
      },
    );
  }
}

/** The resource of an imported kind (external.ts read its plural and scope from the copy of its CRD). */
export function externalResource(kind: {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}): Resource {
  return {
    group: kind.group,
    version: kind.version,
    kind: kind.kind,
    plural: kind.plural,
    recordedPlural: kind.plural === defaultPlural(kind.kind) ? undefined : kind.plural,
    pluralMarker: undefined,
    qualifiedGroup: kind.group,
    domain: '',
    namespaced: kind.namespaced,
    builtin: false,
    external: true,
  };
}

/** The `V1Pod`-style type name @kubernetes/client-node exports for a built-in kind. */
export function clientNodeTypeName(resource: Pick<Resource, 'version' | 'kind'>): string {
  return `${resource.version.charAt(0).toUpperCase()}${resource.version.slice(1)}${resource.kind}`;
}
