/**
 * The typed contexts templates receive (docs/templates.md lists every field). Deriving every name here,
 * once, keeps the templates free of logic.
 */
import path from 'node:path';
import type { CertProvider, ProjectConfig } from '../project/config.js';
import type { DeployImageOptions, ServiceType } from '../project/deploy-image.js';
import { clientNodeTypeName, type Resource } from '../project/resource.js';
import { kubesmithVersion } from '../version.js';
import { blockComment, tsStringArray } from './escape.js';
import { importPath, kindLayout, LOCAL_PACKAGES_DIR, MAIN_FILE, rootFrom } from '../project/layout.js';

export type License = 'apache2' | 'none';

export interface InitContext {
  projectName: string;
  domain: string;
  owner: string;
  year: number;
  license: License;
  licenseApache: boolean;
  boilerplate: string;
  namespaced: boolean;
  multigroup: boolean;
  /** `init --cert-provider self`: the manager provides its webhook serving certificate, not cert-manager. */
  selfCertificates: boolean;
  kubesmithVersion: string;
  runtimeDependency: string;
  cliDependency: string;
  /** kubesmith's packages are tarballs in `.kubesmith/` (the Dockerfile copies them before `npm ci`). */
  localPackages: boolean;
  nodeMajor: number;
}

export interface ApiContext extends InitContext {
  group: string;
  version: string;
  kind: string;
  kindLower: string;
  kindCamel: string;
  plural: string;
  qualifiedGroup: string;
  apiVersion: string;
  rbacGroup: string;
  rbacGroupMarker: string;
  resourceNamespaced: boolean;
  /**
   * The arguments of the kind's `+kubebuilder:resource` marker, `''` for none: `path=<plural>` when the
   * plural is not the one the CRD generator picks by itself, `scope=Cluster` for a cluster-scoped kind.
   */
  resourceMarkerArgs: string;
  clientType: string;
  controllerDir: string;
  controllerFile: string;
  controllerImportFromMain: string;
  typesImportFromController: string;
  reconcilerClass: string;
  sampleFile: string;
  rolePrefix: string;
  crdFile: string;
  controllerName: string;
  /** `,namespace=system` in a namespaced project: RBAC markers then make a Role, not a ClusterRole. */
  rbacNamespace: string;
  testDir: string;
  /** From a file in testDir to the project root, with a trailing slash. */
  rootFromTest: string;
  /** The namespace of the object in generated tests: `default`, or `''` when cluster-scoped. */
  testNamespace: string;
}

/** What the templates of an imported kind's controller (templates/api/external-controller) add. */
export interface ExternalContext {
  /** From the controller's tests to the kind's types in src/external. */
  typesImportFromTest: string;
  /** The fields of the tests' object besides apiVersion, kind and metadata, as TypeScript properties. */
  sampleFields: string;
  /** Whether the object holds every field the CRD requires for certain (else its API server test is skipped). */
  sampleComplete: boolean;
  /** The field it could not fill in, when not complete. */
  sampleUnsure: string;
  /** The version has the status subresource: the controller's RBAC names it. */
  statusSubresource: boolean;
}

/** Fields of an object as TypeScript properties: JSON is TypeScript, keys and strings JSON string literals. */
export function sampleFieldsOf(fields: Record<string, unknown>): string {
  return Object.entries(fields)
    .map(([key, value]) => `${JSON.stringify(key)}: ${JSON.stringify(value)},`)
    .join(' ');
}

export function externalContext(
  context: ApiContext,
  kind: { typesFile: string; statusSubresource: boolean },
  sample: { fields: Record<string, unknown>; unsure: string | undefined },
): ExternalContext {
  return {
    typesImportFromTest: importPath(context.testDir, kind.typesFile),
    sampleFields: sampleFieldsOf(sample.fields),
    sampleComplete: sample.unsure === undefined,
    // In a line comment: a JSON string, with the line separators JSON leaves as they are escaped too.
    sampleUnsure: JSON.stringify(sample.unsure ?? '')
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029'),
    statusSubresource: kind.statusSubresource,
  };
}

/** What the templates of `create api --image` (templates/api/deploy-image) add to the ApiContext. */
export interface DeployImageContext {
  image: string;
  /** The manager's environment variable naming the default image: `DEMOAPPLICATION_IMAGE`. */
  imageEnvVar: string;
  hasContainerPort: boolean;
  /** 0 when not given. */
  containerPort: number;
  hasCommand: boolean;
  /** The command as words, for a comment (through `{{blockComment}}`): `memcached -m=64`. */
  commandText: string;
  /** The command as a TypeScript array literal: `['memcached', '-m=64']`, `[]` when not given. */
  commandLiteral: string;
  hasRunAsUser: boolean;
  /** 0 when not given. */
  runAsUser: number;
  serviceType: ServiceType;
  hasNodePort: boolean;
  /** 0 when not given. */
  nodePort: number;
  /** `demo.example.com/finalizer` */
  finalizer: string;
  /** The server-side apply field manager: `demoapplication-controller`. */
  fieldManager: string;
  /** The most replicas the CRD accepts. */
  maxReplicas: number;
}

export function deployImageContext(context: ApiContext, options: DeployImageOptions): DeployImageContext {
  const command = options.containerCommand;
  return {
    image: options.image,
    imageEnvVar: `${context.kind.toUpperCase()}_IMAGE`,
    hasContainerPort: options.containerPort !== undefined,
    containerPort: options.containerPort ?? 0,
    hasCommand: command.length > 0,
    commandText: command.join(' '),
    commandLiteral: tsStringArray(command),
    hasRunAsUser: options.runAsUser !== undefined,
    runAsUser: options.runAsUser ?? 0,
    serviceType: options.serviceType,
    hasNodePort: options.nodePort !== undefined,
    nodePort: options.nodePort ?? 0,
    finalizer: `${context.qualifiedGroup}/finalizer`,
    fieldManager: `${context.controllerName}-controller`,
    maxReplicas: 50,
  };
}

/** Words that cannot name a variable in strict-mode TypeScript. */
const RESERVED = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false finally ' +
    'for function if implements import in instanceof interface let new null package private protected public ' +
    'return static super switch this throw true try typeof var void while with yield await arguments eval'
  ).split(' '),
);

/** A variable name for an object of `kind`: `guestbook` for Guestbook, `pkgObj`-style when reserved. */
function variableName(kind: string): string {
  const camel = kind.charAt(0).toLowerCase() + kind.slice(1);
  return RESERVED.has(camel) ? `${camel}Obj` : camel;
}

/**
 * The copyright year from `SOURCE_DATE_EPOCH` (seconds since 1970, the reproducible-builds convention),
 * so that a project made again later (the examples of this repository) is made the same; undefined when
 * it is not set or not a plain number.
 */
export function sourceDateYear(env: NodeJS.ProcessEnv): number | undefined {
  const epoch = env['SOURCE_DATE_EPOCH'];
  if (epoch === undefined || !/^[0-9]{1,12}$/.test(epoch)) return undefined;
  return new Date(Number(epoch) * 1000).getUTCFullYear();
}

/** The Node major of the generated Dockerfile's image: the active LTS line. */
export const NODE_MAJOR = 22;

/** The comment every generated source file starts with, as kubebuilder's hack/boilerplate.go.txt. */
function boilerplateFor(license: License, owner: string, year: number): string {
  if (license === 'none') return '';
  const holder = owner ? `${year} ${blockComment(owner)}` : `${year}`;
  return [
    '/*',
    `Copyright ${holder}.`,
    '',
    'Licensed under the Apache License, Version 2.0 (the "License");',
    'you may not use this file except in compliance with the License.',
    'You may obtain a copy of the License at',
    '',
    '    http://www.apache.org/licenses/LICENSE-2.0',
    '',
    'Unless required by applicable law or agreed to in writing, software',
    'distributed under the License is distributed on an "AS IS" BASIS,',
    'WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.',
    'See the License for the specific language governing permissions and',
    'limitations under the License.',
    '*/',
    '',
    '',
  ].join('\n');
}

export function initContext(options: {
  projectName: string;
  domain: string;
  owner: string;
  license: License;
  namespaced: boolean;
  multigroup: boolean;
  certProvider?: CertProvider;
  year?: number;
  boilerplate?: string;
  /** npm specs of @kubesmith/runtime and kubesmith. Default: this version from the registry. */
  packages?: { runtime: string; cli: string };
}): InitContext {
  const year = options.year ?? new Date().getFullYear();
  const specs = options.packages ?? { runtime: `^${kubesmithVersion}`, cli: `^${kubesmithVersion}` };
  return {
    projectName: options.projectName,
    domain: options.domain,
    owner: options.owner,
    year,
    license: options.license,
    licenseApache: options.license === 'apache2',
    boilerplate: options.boilerplate ?? boilerplateFor(options.license, options.owner, year),
    namespaced: options.namespaced,
    multigroup: options.multigroup,
    selfCertificates: options.certProvider === 'self',
    kubesmithVersion,
    runtimeDependency: specs.runtime,
    cliDependency: specs.cli,
    localPackages: [specs.runtime, specs.cli].some((spec) => spec.startsWith(`file:${LOCAL_PACKAGES_DIR}/`)),
    nodeMajor: NODE_MAJOR,
  };
}

/** The context of `create api`, from the project and the resolved resource. */
export function apiContext(project: ProjectConfig, resource: Resource, boilerplate: string): ApiContext {
  const base = initContext({
    projectName: project.projectName,
    domain: project.domain,
    owner: '',
    license: boilerplate === '' ? 'none' : 'apache2',
    namespaced: project.namespaced ?? false,
    multigroup: project.multigroup ?? false,
    ...(project.certProvider ? { certProvider: project.certProvider } : {}),
    boilerplate,
  });
  const kindLower = resource.kind.toLowerCase();
  const multigroup = project.multigroup ?? false;
  const layout = kindLayout(resource, multigroup);
  const { controllerDir, controllerTestDir: testDir } = layout;
  return {
    ...base,
    group: resource.group,
    version: resource.version,
    kind: resource.kind,
    kindLower,
    kindCamel: variableName(resource.kind),
    plural: resource.plural,
    qualifiedGroup: resource.qualifiedGroup,
    apiVersion: resource.qualifiedGroup ? `${resource.qualifiedGroup}/${resource.version}` : resource.version,
    rbacGroup: resource.qualifiedGroup,
    rbacGroupMarker: resource.qualifiedGroup || 'core',
    resourceNamespaced: resource.namespaced,
    resourceMarkerArgs: resourceMarkerArgs(resource),
    clientType: resource.builtin ? clientNodeTypeName(resource) : resource.kind,
    controllerDir,
    controllerFile: path.posix.basename(layout.controllerFile),
    controllerImportFromMain: importPath(path.posix.dirname(MAIN_FILE), layout.controllerFile),
    typesImportFromController: importPath(controllerDir, layout.typesFile),
    reconcilerClass: `${resource.kind}Reconciler`,
    sampleFile: path.posix.basename(layout.sampleFile),
    rolePrefix: layout.rolePrefix,
    crdFile: path.posix.basename(layout.crdFile),
    controllerName: multigroup ? `${resource.group}-${kindLower}` : kindLower,
    rbacNamespace: project.namespaced ? ',namespace=system' : '',
    testDir,
    rootFromTest: rootFrom(testDir),
    testNamespace: resource.namespaced ? 'default' : '',
  };
}

/** The kind's `+kubebuilder:resource` marker: the plural's `path=` (resource.ts decides it) and its scope. */
function resourceMarkerArgs(resource: Resource): string {
  const args: string[] = [];
  if (resource.pluralMarker) args.push(`path=${resource.pluralMarker}`);
  if (!resource.namespaced) args.push('scope=Cluster');
  return args.join(',');
}
