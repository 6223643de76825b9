/**
 * The generator's program loads the smaller entries of @kubesmith/runtime and @kubernetes/client-node when
 * the API files' imports allow it (src/manifests/declarations.ts), the full declarations otherwise, and
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

/** A project with the runtime installed (the repository's node_modules) and these files under src/. */
async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-declarations-'));
  dirs.push(dir);
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

/** The client-node files of the context's program, relative to the package's dist/. */
function clientNodeFiles(dir: string): string[] {
  return createContext(dir)
    .program.getSourceFiles()
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
    expect(clientNodeFiles(subset).sort()).toEqual([
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
    expect(createContext(full).declarations).toBe('full');
    expect(clientNodeFiles(full).length).toBeGreaterThan(500);
    const a = await generate(subset);
    const b = await generate(full);
    expect(a.diagnostics).toEqual([]);
    expect(b.diagnostics).toEqual([]);
    expect(Object.keys(a.files).sort()).toEqual([
      'config/crd/bases/shop.example.com_orders.yaml',
      'config/rbac/role.yaml',
    ]);
    expect(a.files).toEqual(b.files);
  });

  it('are the full ones for a namespace import, with the same output', async () => {
    const named = await project({ 'src/api/shop/v1/order.types.ts': orderTypes(NAMED) });
    const namespace = await project({
      'src/api/shop/v1/order.types.ts': orderTypes("import type * as rt from '@kubesmith/runtime';", 'rt.'),
    });
    expect(createContext(namespace).declarations).toBe('full');
    expect(await generate(namespace)).toEqual(await generate(named));
  });

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
  });

  it('map client-node types imported by API files from the models they need', async () => {
    const dir = await project({
      'src/api/shop/v1/order.types.ts': orderTypes(
        `${NAMED}\nimport type { V1LocalObjectReference } from '@kubernetes/client-node';`,
        '',
        'export interface OrderRef { secret?: V1LocalObjectReference }\n',
      ),
    });
    expect(createContext(dir).declarations).toBe('subset');
    expect(clientNodeFiles(dir)).toContain('gen/models/V1LocalObjectReference.d.ts');
    expect(clientNodeFiles(dir).length).toBeLessThan(10);
    expect((await generate(dir)).diagnostics).toEqual([]);
  });

  it('read the markers of files outside src/api without type-checking them', async () => {
    const dir = await project({
      'src/api/shop/v1/order.types.ts': orderTypes(NAMED),
      'src/controllers/order.controller.ts': `${CONTROLLER}\n// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=.metadata.creationTimestamp\nexport const x = 1;\n`,
    });
    const ctx = createContext(dir);
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
