/**
 * A synthetic API tree for the generator benchmark: `kinds` kinds in one group-version, each with nested
 * types (interfaces and inline object types three deep), a string-literal union and a string enum, maps,
 * arrays of objects and validation markers (Minimum, Maximum, MinLength, MaxLength, MaxItems, Pattern, Enum,
 * listType=map), all importing one shared file. The runtime's types come from a local declaration file
 * (node_modules/@kubesmith/runtime), so every tool resolves them to the same plain types.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

const RUNTIME_TYPES = `export type int32 = number & { readonly __kubesmithType?: 'int32' };
export type int64 = number & { readonly __kubesmithType?: 'int64' };
export type Time = string;
export interface ObjectMeta { name?: string; namespace?: string; labels?: Record<string, string> }
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}
export declare function groupVersion(group: string, version: string): { group: string; version: string };
`;

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
`;
}

/** Writes a project with `kinds` kinds into `dir`; returns the kinds' names. */
export async function writeSyntheticProject(dir, kinds) {
  const api = path.join(dir, 'src/api/bench/v1');
  await mkdir(api, { recursive: true });
  await mkdir(path.join(dir, 'node_modules/@kubesmith/runtime'), { recursive: true });
  const names = Array.from({ length: kinds }, (_, i) => `Widget${String(i).padStart(3, '0')}`);
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
    'node_modules/@kubesmith/runtime/package.json':
      '{ "name": "@kubesmith/runtime", "version": "0.0.0", "types": "index.d.ts" }\n',
    'node_modules/@kubesmith/runtime/index.d.ts': RUNTIME_TYPES,
    'src/api/bench/v1/group-version.ts':
      "/**\n * +groupName=bench.example.com\n */\nimport { groupVersion } from '@kubesmith/runtime';\n\nexport const GroupVersion = groupVersion('bench.example.com', 'v1');\n",
    'src/api/bench/v1/shared.ts': SHARED,
  };
  for (const name of names) files[`src/api/bench/v1/${name.toLowerCase()}.types.ts`] = kindSource(name);
  for (const [file, content] of Object.entries(files)) await writeFile(path.join(dir, file), content);
  return names;
}
