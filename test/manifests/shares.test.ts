/**
 * How a run on two threads shares out the API files (src/manifests/shares.ts): whole kinds to each share,
 * the files every share reads for file-level markers, and the APIs that stay on one thread because their
 * schemas could depend on which kinds share a program.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultRegistry } from '../../src/manifests/registry.js';
import {
  confirm,
  mayHoldFileMarker,
  oneProgramReason,
  planShares,
  summarize,
} from '../../src/manifests/shares.js';
import { listingOf } from '../../src/manifests/sources.js';
import { parseApiFiles } from '../../src/typescript/api-program.js';
import { ts } from '../../src/typescript/compiler.cjs';

const temp: string[] = [];
afterAll(async () => {
  for (const dir of temp) await rm(dir, { recursive: true, force: true });
});

const GROUP_VERSION = (version: string) =>
  `// +groupName=shop.example.com\nimport { groupVersion } from '@kubesmith/runtime';\nexport const GroupVersion = groupVersion('shop.example.com', '${version}');\n`;
const kind = (name: string) =>
  `import type { ObjectMeta } from '@kubesmith/runtime';\n/** ${name} is a kind. */\nexport interface ${name} {\n  apiVersion: string;\n  kind: string;\n  metadata?: ObjectMeta;\n  /** +kubebuilder:validation:MinLength=1 */\n  name: string;\n}\n`;

async function project(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-shares-'));
  temp.push(root);
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), text);
  }
  return root;
}

/** The plan of a project and what its two shares' parsed files say of it. */
function planOf(root: string) {
  const listing = listingOf({ root });
  const plan = planShares(listing, defaultRegistry());
  const rel = (files: readonly string[]) => files.map((f) => path.relative(root, f));
  if (!plan) return undefined;
  const summaries = plan.owned.map((owned) => summarize(parseApiFiles(root, owned, listing.read).values()));
  return {
    owned: plan.owned.map(rel),
    packageFiles: rel(plan.packageFiles),
    confirmed: confirm([summaries[0]!, summaries[1]!]) !== undefined,
  };
}

const parse = (text: string) => ts.createSourceFile('/p/src/api/a/v1/x.ts', text, ts.ScriptTarget.ES2022);

describe('the plan of a run on two threads', () => {
  it('keeps every version of a kind in one share and gives every share the files with group markers', async () => {
    const root = await project({
      PROJECT: 'domain: example.com\n',
      'src/api/shop/v1/group-version.ts': GROUP_VERSION('v1'),
      'src/api/shop/v2/group-version.ts': GROUP_VERSION('v2'),
      'src/api/shop/v1/order.types.ts': kind('Order'),
      'src/api/shop/v2/order.types.ts': kind('Order'),
      'src/api/shop/v1/cart.types.ts': kind('Cart'),
      'src/api/shop/v1/item.types.ts': kind('Item'),
    });
    const plan = planOf(root)!;
    expect(plan.confirmed).toBe(true);
    const orders = ['src/api/shop/v1/order.types.ts', 'src/api/shop/v2/order.types.ts'];
    expect(plan.owned.filter((share) => orders.every((f) => share.includes(f)))).toHaveLength(1);
    expect(plan.owned.flat().sort()).toEqual(
      [
        ...orders,
        'src/api/shop/v1/cart.types.ts',
        'src/api/shop/v1/item.types.ts',
        'src/api/shop/v1/group-version.ts',
        'src/api/shop/v2/group-version.ts',
      ].sort(),
    );
    expect(plan.packageFiles).toEqual([
      'src/api/shop/v1/group-version.ts',
      'src/api/shop/v2/group-version.ts',
    ]);
  });

  it('is not confirmed when the text missed a name that both shares declare', async () => {
    // A comment between `export` and `interface` hides the name from the plan, not from the parser.
    const root = await project({
      'src/api/shop/v1/group-version.ts': GROUP_VERSION('v1'),
      'src/api/shop/v1/order.types.ts': kind('Order'),
      'src/api/shop/v2/group-version.ts': GROUP_VERSION('v2'),
      'src/api/shop/v2/order.types.ts': kind('Order').replace(
        'export interface',
        'export /* v2 */ interface',
      ),
    });
    const plan = planOf(root)!;
    expect(
      plan.owned.some(
        (share) =>
          share.includes('src/api/shop/v1/order.types.ts') &&
          share.includes('src/api/shop/v2/order.types.ts'),
      ),
    ).toBe(false);
    expect(plan.confirmed).toBe(false);
  });

  it('stays on one thread for an API whose schemas could depend on the order the checker made its types', () => {
    for (const text of [
      "export interface A { phase: B['phase'] }\nexport interface B { phase: 'x' | 'y' }",
      "export type Mode = (typeof MODES)[number];\nexport const MODES = ['b', 'a'] as const;",
      'export interface Box<T> { value: T }',
      "export interface A { box: Box<'x' | 'y'> }",
      "export interface A { byKey: Record<'a' | 'b', 'x' | 'y'> }",
      'export type Keys = keyof A;\nexport interface A { a: string }',
      'export type Id = `${string}-${number}`;',
      "export interface A extends Base<'x'> { a: string }",
      "export class A { readonly phase = Math.random() ? 'x' : 'y'; }",
      'declare global { interface Window { a: string } }\nexport {};',
      'interface NotAModule { a: string }',
    ])
      expect(oneProgramReason(parse(text)), text).toBeDefined();
    for (const text of [
      "import type { ObjectMeta } from '@kubesmith/runtime';\nexport interface A { metadata?: ObjectMeta; phase?: 'x' | 'y'; tags: string[]; labels?: Record<string, string> }",
      "export interface A { spec: Partial<Spec>; picked: Pick<Spec, 'a'> }\nexport interface Spec { a: string }",
      "export const AKind = GroupVersion.kind<A>('A', {});\nexport interface A { a: string }",
      'export const v = {} satisfies Validator<A>;\nexport class W implements Webhook<A> { name: string = "w"; }',
      'export enum Mode { A = "a", B = "b" }',
    ])
      expect(oneProgramReason(parse(text)), text).toBeUndefined();
  });

  it('reads every file that could hold a file-level marker, and no other', () => {
    const registry = defaultRegistry();
    expect(mayHoldFileMarker('// +groupName=shop.example.com\n', registry)).toBe(true);
    expect(mayHoldFileMarker('/** +kubebuilder:validation:Optional */\nexport {}', registry)).toBe(true);
    expect(
      mayHoldFileMarker(
        '/*\n * +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get\r\n */',
        registry,
      ),
    ).toBe(true);
    expect(
      mayHoldFileMarker(
        '/** +kubebuilder:validation:MinLength=1 */\nname: string;\nconst a = 1 + 2;',
        registry,
      ),
    ).toBe(false);
  });
});
