/**
 * The generator's program loads the smaller entries of @kubesmith/runtime and @kubernetes/client-node when
 * the API files' imports allow it (src/typescript/declarations.ts), the full declarations otherwise, and
 * writes the same bytes either way.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createContext } from '../../src/manifests/context.js';
import { formatDiagnostic, generateManifests } from '../../src/manifests/index.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const GROUP_VERSION = `/**
 * +groupName=shop.example.com
 */
import { groupVersion } from '@kubesmith/runtime';

export const GroupVersion = groupVersion('shop.example.com', 'v1');
`;

/** The Order kind; `imports` is its import of the runtime, `extra` more declarations. */
const orderTypes = (imports: string, prefix = '', extra = '') => `${imports}
import { GroupVersion } from './group-version.js';

export interface OrderSpec {
  /** +kubebuilder:validation:Minimum=1 */
  quantity: ${prefix}int32;
  total?: ${prefix}int64;
  placed?: ${prefix}Time;
  timeout?: ${prefix}Duration;
  size?: ${prefix}Quantity;
  port?: ${prefix}IntOrString;
  raw?: ${prefix}RawExtension;
  labels?: Partial<${prefix}ObjectMeta>['labels'];
}

export interface OrderStatus {
  /**
   * +listType=map
   * +listMapKey=type
   */
  conditions?: ${prefix}Condition[];
}
${extra}
/**
 * +kubebuilder:object:root=true
 * +kubebuilder:subresource:status
 */
export interface Order {
  apiVersion: 'shop.example.com/v1';
  kind: 'Order';
  metadata?: ${prefix}ObjectMeta;
  spec: OrderSpec;
  status?: OrderStatus;
}

export const OrderKind = GroupVersion.kind<Order>('Order', { plural: 'orders', namespaced: true });
`;

const NAMED =
  "import type { Condition, Duration, int32, int64, IntOrString, ObjectMeta, Quantity, RawExtension, Time } from '@kubesmith/runtime';";

const CONTROLLER = `// +kubebuilder:rbac:groups=shop.example.com,resources=orders,verbs=get;list;watch
import { Manager, type Reconciler } from '@kubesmith/runtime';
import type { V1Pod } from '@kubernetes/client-node';

export class OrderReconciler implements Partial<Reconciler> {
  constructor(readonly mgr?: Manager, readonly pod?: V1Pod) {}
}
`;

/**
 * A project with these files under src/ and the runtime installed: the repository's node_modules, or when
 * `files` has node_modules of its own, those.
 */
async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-declarations-'));
  dirs.push(dir);
  if (!Object.keys(files).some((f) => f.startsWith('node_modules/')))
    await symlink(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const all: Record<string, string> = {
    PROJECT: 'domain: example.com\nlayout:\n- typescript.kubesmith.dev/v1\nprojectName: shop\nversion: "3"\n',
    'package.json': '{ "name": "shop", "private": true, "type": "module" }\n',
    'tsconfig.json': JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true },
      include: ['src'],
    }),
    'src/api/shop/v1/group-version.ts': GROUP_VERSION,
    ...files,
  };
  for (const [file, content] of Object.entries(all)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
  return dir;
}

async function generate(dir: string): Promise<{ files: Record<string, string>; diagnostics: string[] }> {
  const result = await generateManifests({ root: dir, version: 'test' });
  return {
    files: Object.fromEntries(result.files.map((f) => [f.path, f.content])),
    diagnostics: result.diagnostics.map(formatDiagnostic),
  };
}

/** The client-node files of a context's program, relative to the package's dist/. */
function clientNodeFiles(ctx: ReturnType<typeof createContext>): string[] {
  return ctx.program
    .getSourceFiles()
    .map((sf) => sf.fileName)
    .filter((f) => f.includes('/@kubernetes/client-node/'))
    .map((f) => f.replace(/^.*\/@kubernetes\/client-node\/dist\//, ''));
}

describe('the declarations the generator loads', () => {
  it('are the smaller entries for imports as create api writes them, with the same output as the full ones', async () => {
    const subset = await project({
      'src/api/shop/v1/order.types.ts': orderTypes(NAMED),
      'src/controllers/order.controller.ts': CONTROLLER,
    });
    const ctx = createContext(subset);
    expect(ctx.declarations).toBe('subset');
    // ObjectMeta's model and the two models it references, not client-node's ~900 files.
    expect(clientNodeFiles(ctx).sort()).toEqual([
      'gen/models/V1ManagedFieldsEntry.d.ts',
      'gen/models/V1ObjectMeta.d.ts',
      'gen/models/V1OwnerReference.d.ts',
      'index.d.ts',
    ]);
    // The same types, with an import the smaller entry does not trace (KubernetesObject's module is
    // small, but `Reconciler` comes from reconcile.js, which imports more): the full declarations.
    const full = await project({
      'src/api/shop/v1/order.types.ts': orderTypes(
        NAMED.replace('Time }', 'Time, Reconciler }'),
        '',
        'export type Unused = Reconciler;\n',
      ),
      'src/controllers/order.controller.ts': CONTROLLER,
    });
    const fullCtx = createContext(full);
    expect(fullCtx.declarations).toBe('full');
    expect(clientNodeFiles(fullCtx).length).toBeGreaterThan(500);
    const a = await generate(subset);
    const b = await generate(full);
    expect(a.diagnostics).toEqual([]);
    expect(b.diagnostics).toEqual([]);
    expect(Object.keys(a.files).sort()).toEqual([
      'config/crd/bases/shop.example.com_orders.yaml',
      'config/rbac/role.yaml',
    ]);
    expect(a.files).toEqual(b.files);
  }, 120_000); // two programs with client-node's ~900 declaration files

  it('are the full ones for a namespace import, with the same output', async () => {
    const named = await project({ 'src/api/shop/v1/order.types.ts': orderTypes(NAMED) });
    const namespace = await project({
      'src/api/shop/v1/order.types.ts': orderTypes("import type * as rt from '@kubesmith/runtime';", 'rt.'),
    });
    expect(createContext(namespace).declarations).toBe('full');
    expect(await generate(namespace)).toEqual(await generate(named));
  }, 120_000);

  it('fall back to the full ones when a file the API files import asks the runtime for more', async () => {
    const dir = await project({
      'src/api/shop/v1/order.types.ts': orderTypes(
        NAMED,
        '',
        "import type { Note } from '../../../shared/note.js';\nexport interface OrderNote { note?: Note }\n",
      ),
      // Outside src/api: not a root of the program, reached through the import above.
      'src/shared/note.ts':
        "import type { ObjectReference } from '@kubesmith/runtime';\n\n/** Note about an object. */\nexport interface Note {\n  text: string;\n  about?: ObjectReference;\n}\n",
    });
    const ctx = createContext(dir);
    expect(ctx.declarations).toBe('full');
    expect(
      ctx.program.getSourceFile(path.join(dir, 'src/shared/note.ts').split(path.sep).join('/')),
    ).toBeDefined();
  }, 120_000);

  it('fall back to the full ones when a declaration file imports the cut entry by a relative path', async () => {
    // A runtime whose `testing` subpath imports its main entry: that file is not a package import.
    const runtime = 'node_modules/@kubesmith/runtime';
    const dir = await project({
      [`${runtime}/package.json`]: JSON.stringify({
        name: '@kubesmith/runtime',
        type: 'module',
        exports: {
          '.': { types: './dist/index.d.ts' },
          './testing': { types: './dist/testing.d.ts' },
        },
      }),
      [`${runtime}/dist/index.d.ts`]:
        "export type { int32 } from './types.js';\nexport { groupVersion } from './kinds.js';\nexport type { Big } from './big.js';\n",
      [`${runtime}/dist/types.d.ts`]:
        "export type int32 = number & { readonly __kubesmithType?: 'int32' };\n",
      [`${runtime}/dist/kinds.d.ts`]:
        'export declare function groupVersion(group: string, version: string): { kind<T>(kind: string, o: object): T };\n',
      [`${runtime}/dist/big.d.ts`]: 'export interface Big { size: number; name: string }\n',
      [`${runtime}/dist/testing.d.ts`]:
        "import type { Big } from './index.js';\nexport interface Fake { big?: Big }\n",
      'src/api/shop/v1/box.types.ts': `import type { int32 } from '@kubesmith/runtime';
import type { Fake } from '@kubesmith/runtime/testing';

/** +kubebuilder:object:root=true */
export interface Box {
  apiVersion: 'shop.example.com/v1';
  kind: 'Box';
  metadata?: { name?: string };
  spec?: { size?: int32; fake?: Fake };
}
`,
    });
    const ctx = createContext(dir);
    expect(ctx.declarations).toBe('full');
    const crd = (await generate(dir)).files['config/crd/bases/shop.example.com_boxes.yaml'];
    // Big resolved through the full entry: its fields are in the schema.
    expect(crd).toMatch(/big:\n\s+properties:\n\s+name:/);
  });

  it('map client-node types imported by API files from the models they need', async () => {
    const dir = await project({
      'src/api/shop/v1/order.types.ts': orderTypes(
        `${NAMED}\nimport type { V1LocalObjectReference } from '@kubernetes/client-node';`,
        '',
        'export interface OrderRef { secret?: V1LocalObjectReference }\n',
      ),
    });
    const ctx = createContext(dir);
    expect(ctx.declarations).toBe('subset');
    expect(clientNodeFiles(ctx)).toContain('gen/models/V1LocalObjectReference.d.ts');
    expect(clientNodeFiles(ctx).length).toBeLessThan(10);
    expect((await generate(dir)).diagnostics).toEqual([]);
  });

  it('read the markers of files outside src/api without type-checking them', async () => {
    const dir = await project({
      'src/api/shop/v1/order.types.ts': orderTypes(NAMED),
      'src/controllers/order.controller.ts': `${CONTROLLER}\n// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=.metadata.creationTimestamp\nexport const x = 1;\n`,
    });
    // A symbolic link back up the tree is walked once.
    await symlink('..', path.join(dir, 'src/controllers/loop'), 'dir');
    const ctx = createContext(dir);
    expect(ctx.sources.filter((sf) => sf.fileName.endsWith('/order.controller.ts'))).toHaveLength(1);
    const controller = ctx.sources.find((sf) => sf.fileName.endsWith('/order.controller.ts'));
    expect(controller).toBeDefined();
    expect(ctx.program.getSourceFile(controller!.fileName)).toBeUndefined();
    const { files, diagnostics } = await generate(dir);
    expect(files['config/rbac/role.yaml']).toContain('- orders');
    expect(diagnostics).toEqual([
      expect.stringMatching(
        /^src\/controllers\/order\.controller\.ts:9:4: error: marker \+kubebuilder:printcolumn /,
      ),
    ]);
  });
});
