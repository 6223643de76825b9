/**
 * A synthetic API tree for the generator benchmark: `kinds` kinds in one group-version, each with nested
 * types (interfaces and inline object types three deep), a string-literal union and a string enum, maps,
 * arrays of objects and validation markers (Minimum, Maximum, MinLength, MaxLength, MaxItems, Pattern, Enum,
 * listType=map), all importing one shared file. The project is real: `@kubesmith/runtime` is this repository's
 * built runtime package, linked into the project's node_modules (its `@kubernetes/client-node` resolves from
 * the repository's node_modules), and each kind's file imports it as `create api` writes it (ObjectMeta,
 * Condition, the group-version's `GroupVersion.kind`). `writeGoTwin` writes the same API in Go for
 * controller-gen: the same markers, the same documentation, the same required and optional fields.
 */
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));

const SHARED = `import type { int32 } from '@kubesmith/runtime';

/** Endpoint is where a component is served. */
export interface Endpoint {
  /**
   * Host name.
   * +kubebuilder:validation:MinLength=1
   * +kubebuilder:validation:MaxLength=253
   */
  host: string;
  /**
   * +kubebuilder:validation:Minimum=1
   * +kubebuilder:validation:Maximum=65535
   */
  port: int32;
}

/** Tier of service. */
export type Tier = 'bronze' | 'silver' | 'gold';
`;

function kindSource(kind) {
  return `import type { Condition, int32, int64, ObjectMeta, Time } from '@kubesmith/runtime';
import { GroupVersion } from './group-version.js';
import type { Endpoint, Tier } from './shared.js';

/** ${kind}Mode says how a ${kind} runs. */
export enum ${kind}Mode {
  Active = 'active',
  Standby = 'standby',
}

/** ${kind}Container is one container of a ${kind}. */
export interface ${kind}Container {
  /**
   * +kubebuilder:validation:Pattern=\`^[a-z0-9-]+$\`
   */
  name: string;
  image: string;
  /** +kubebuilder:validation:Enum=Always;IfNotPresent;Never */
  pullPolicy?: string;
  /** Arguments. */
  args?: string[];
  env?: Record<string, string>;
  endpoints?: Endpoint[];
  resources?: { cpu?: string; memory?: string; limits?: Record<string, string> };
}

/** ${kind}Spec defines the desired state of ${kind}. */
export interface ${kind}Spec {
  /**
   * +kubebuilder:validation:Minimum=0
   * +kubebuilder:validation:Maximum=100
   */
  replicas?: int32;
  mode: ${kind}Mode;
  tier?: Tier;
  /** +kubebuilder:validation:MaxItems=20 */
  containers: ${kind}Container[];
  selector?: Record<string, string>;
  primary?: Endpoint;
  budget?: int64;
  schedule?: { cron: string; suspend?: boolean; history?: { successful?: int32; failed?: int32 } };
}

/** ${kind}Status defines the observed state of ${kind}. */
export interface ${kind}Status {
  /**
   * +listType=map
   * +listMapKey=type
   */
  conditions?: Condition[];
  readyReplicas?: int32;
  lastUpdated?: Time;
}

/**
 * ${kind} is the Schema for the ${kind.toLowerCase()}s API.
 * +kubebuilder:object:root=true
 * +kubebuilder:subresource:status
 */
export interface ${kind} {
  apiVersion: 'bench.example.com/v1';
  kind: '${kind}';
  metadata?: ObjectMeta;
  spec: ${kind}Spec;
  status?: ${kind}Status;
}

/** ${kind}Kind names the ${kind.toLowerCase()}s resource for the client and the controller builder. */
export const ${kind}Kind = GroupVersion.kind<${kind}>('${kind}', {
  plural: '${kind.toLowerCase()}s',
  namespaced: true,
});
`;
}

const GROUP_VERSION = `/**
 * Package v1 contains API Schema definitions for the bench v1 API group.
 * +groupName=bench.example.com
 */
import { groupVersion } from '@kubesmith/runtime';

/** GroupVersion is the group and version of the kinds in this directory. */
export const GroupVersion = groupVersion('bench.example.com', 'v1');
`;

/** The kinds' names: Widget000, Widget001... */
export const kindNames = (kinds) =>
  Array.from({ length: kinds }, (_, i) => `Widget${String(i).padStart(3, '0')}`);

/**
 * Writes a project with `kinds` kinds into `dir`, with the repository's runtime package (built by
 * `npm run build`) linked as node_modules/@kubesmith/runtime; returns the kinds' names.
 */
export const writeSyntheticProject = (dir, kinds) => writeProject(dir, kinds, { shared: SHARED, kindSource });

/**
 * Writes a project of one group-version (`bench.example.com/v1`) into `dir`: `shared` as
 * src/api/bench/v1/shared.ts and `kindSource(name)` as each kind's file, the runtime linked as above.
 * Each corpus (this one, realistic.mjs) gives its own sources; returns the kinds' names.
 */
export async function writeProject(dir, kinds, { shared, kindSource: source }) {
  const api = path.join(dir, 'src/api/bench/v1');
  await mkdir(api, { recursive: true });
  await mkdir(path.join(dir, 'node_modules/@kubesmith'), { recursive: true });
  await symlink(path.join(repo, 'runtime'), path.join(dir, 'node_modules/@kubesmith/runtime'), 'dir');
  const names = kindNames(kinds);
  const files = {
    PROJECT:
      'domain: example.com\nlayout:\n- typescript.kubesmith.dev/v1\nprojectName: bench\nversion: "3"\n',
    'tsconfig.json': `${JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: true,
          noEmit: true,
        },
        include: ['src'],
      },
      null,
      2,
    )}\n`,
    'package.json': '{ "name": "bench", "private": true, "type": "module" }\n',
    'src/api/bench/v1/group-version.ts': GROUP_VERSION,
    'src/api/bench/v1/shared.ts': shared,
  };
  for (const name of names) files[`src/api/bench/v1/${name.toLowerCase()}.types.ts`] = source(name);
  for (const [file, content] of Object.entries(files)) await writeFile(path.join(dir, file), content);
  return names;
}

const GO_GROUP_VERSION = `// Package v1 contains API Schema definitions for the bench v1 API group.
// +groupName=bench.example.com
package v1
`;

const GO_SHARED = `package v1

// Endpoint is where a component is served.
type Endpoint struct {
	// Host name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Host string \`json:"host"\`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 \`json:"port"\`
}

// Tier of service.
// +kubebuilder:validation:Enum=bronze;silver;gold
type Tier string
`;

function goKindSource(kind) {
  return `package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ${kind}Mode says how a ${kind} runs.
// +kubebuilder:validation:Enum=active;standby
type ${kind}Mode string

type ${kind}Resources struct {
	CPU    string            \`json:"cpu,omitempty"\`
	Memory string            \`json:"memory,omitempty"\`
	Limits map[string]string \`json:"limits,omitempty"\`
}

// ${kind}Container is one container of a ${kind}.
type ${kind}Container struct {
	// +kubebuilder:validation:Pattern=\`^[a-z0-9-]+$\`
	Name  string \`json:"name"\`
	Image string \`json:"image"\`
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	PullPolicy string \`json:"pullPolicy,omitempty"\`
	// Arguments.
	Args      []string           \`json:"args,omitempty"\`
	Env       map[string]string  \`json:"env,omitempty"\`
	Endpoints []Endpoint         \`json:"endpoints,omitempty"\`
	Resources *${kind}Resources \`json:"resources,omitempty"\`
}

type ${kind}History struct {
	Successful int32 \`json:"successful,omitempty"\`
	Failed     int32 \`json:"failed,omitempty"\`
}

type ${kind}Schedule struct {
	Cron    string            \`json:"cron"\`
	Suspend bool              \`json:"suspend,omitempty"\`
	History *${kind}History \`json:"history,omitempty"\`
}

// ${kind}Spec defines the desired state of ${kind}.
type ${kind}Spec struct {
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Replicas int32 \`json:"replicas,omitempty"\`
	Mode     ${kind}Mode \`json:"mode"\`
	Tier     Tier \`json:"tier,omitempty"\`
	// +kubebuilder:validation:MaxItems=20
	Containers []${kind}Container \`json:"containers"\`
	Selector   map[string]string \`json:"selector,omitempty"\`
	Primary    *Endpoint \`json:"primary,omitempty"\`
	Budget     int64 \`json:"budget,omitempty"\`
	Schedule   *${kind}Schedule \`json:"schedule,omitempty"\`
}

// ${kind}Status defines the observed state of ${kind}.
type ${kind}Status struct {
	// +listType=map
	// +listMapKey=type
	Conditions    []metav1.Condition \`json:"conditions,omitempty"\`
	ReadyReplicas int32 \`json:"readyReplicas,omitempty"\`
	LastUpdated   *metav1.Time \`json:"lastUpdated,omitempty"\`
}

// ${kind} is the Schema for the ${kind.toLowerCase()}s API.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type ${kind} struct {
	metav1.TypeMeta   \`json:",inline"\`
	metav1.ObjectMeta \`json:"metadata,omitempty"\`

	Spec   ${kind}Spec   \`json:"spec"\`
	Status ${kind}Status \`json:"status,omitempty"\`
}
`;
}

/**
 * Writes the Go twin of `writeSyntheticProject`'s API into `dir` (a Go module, `api/v1`) for controller-gen.
 * go.mod and go.sum are those of test/fixtures/runtime/go (k8s.io/apimachinery, as every Go twin here).
 */
export const writeGoTwin = (dir, kinds) =>
  writeGoModule(dir, kinds, { shared: GO_SHARED, kindSource: goKindSource });

/** Writes a Go twin of `writeProject`'s API: `shared` as api/v1/shared.go, `kindSource(name)` per kind. */
export async function writeGoModule(dir, kinds, { shared, kindSource: source }) {
  const api = path.join(dir, 'api/v1');
  await mkdir(api, { recursive: true });
  const fixture = path.join(repo, 'test/fixtures/runtime/go');
  const goMod = (await readFile(path.join(fixture, 'go.mod'), 'utf8')).replace(
    /^module .*$/m,
    'module example.com/bench',
  );
  const files = {
    'go.mod': goMod,
    'go.sum': await readFile(path.join(fixture, 'go.sum'), 'utf8'),
    'api/v1/groupversion_info.go': GO_GROUP_VERSION,
    'api/v1/shared.go': shared,
  };
  for (const name of kindNames(kinds)) files[`api/v1/${name.toLowerCase()}_types.go`] = source(name);
  for (const [file, content] of Object.entries(files)) await writeFile(path.join(dir, file), content);
}
