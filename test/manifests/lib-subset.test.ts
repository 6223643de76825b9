/**
 * The generator's program takes the smaller lib.es5.d.ts (src/typescript/lib-subset.ts) when no file could
 * observe what it lacks, and generates the same CRDs and diagnostics as with the full library: on every
 * fixture, and on API types built to tell the two apart, which must take the full library.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { getLibFiles, ts } from '@ts-morph/common';
import { afterAll, describe, expect, it } from 'vitest';
import { createContext } from '../../src/manifests/context.js';
import { generateCrds } from '../../src/manifests/crd.js';
import { formatDiagnostic } from '../../src/manifests/index.js';
import { SUBSET_LIB, subsetLibText } from '../../src/typescript/lib-subset.js';
import type { LibVariant } from '../../src/typescript/program.js';
import { writeYamlDocuments } from '../../src/manifests/yaml.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURES = path.join(repo, 'test/fixtures');
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** The CRDs and diagnostics of a project, and which library its program took (and why not the subset). */
function crds(root: string, lib?: LibVariant) {
  const ctx = createContext(root, undefined, lib ? { lib } : {});
  const files = [...generateCrds(ctx, { version: 'test' })].map((f) => ({
    path: f.path,
    content: writeYamlDocuments(f.documents),
  }));
  return {
    lib: ctx.lib,
    blocker: ctx.libBlocker,
    output: { files, diagnostics: ctx.report.diagnostics.map(formatDiagnostic) },
  };
}

/** Top-level names a declaration file declares. */
function declaredNames(text: string): string[] {
  const sf = ts.createSourceFile('lib.d.ts', text, ts.ScriptTarget.Latest);
  const names: string[] = [];
  for (const stmt of sf.statements) {
    if (ts.isVariableStatement(stmt))
      for (const d of stmt.declarationList.declarations) names.push(d.name.getText(sf));
    else if ('name' in stmt && stmt.name) names.push((stmt.name as ts.Identifier).text);
  }
  return names.sort();
}

describe('the smaller lib.es5.d.ts', () => {
  const es5 = getLibFiles().find((f) => f.fileName === SUBSET_LIB)!.text;
  const subset = subsetLibText(es5);

  it('declares every name of the full one, with their properties, without their methods', () => {
    expect(declaredNames(subset)).toEqual(declaredNames(es5));
    expect(subset.length).toBeLessThan(es5.length / 2);
    const sf = ts.createSourceFile(SUBSET_LIB, subset, ts.ScriptTarget.Latest);
    const iface = (name: string) =>
      sf.statements.find(
        (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name,
      )!;
    const members = (name: string) =>
      iface(name).members.map((m) => m.name?.getText(sf) ?? ts.SyntaxKind[m.kind]);
    expect(members('String')).toEqual(['length', 'IndexSignature']);
    expect(members('Error')).toEqual(['name', 'message', 'stack']);
    expect(members('ArrayConstructor')).toEqual(['prototype']);
    expect(subset).toMatch(/^\/\/\/ <reference no-default-lib="true"\/>/);
    expect(subset).toContain('/// <reference lib="decorators" />');
  });
});

const fixtures = readdirSync(FIXTURES)
  .filter((name) => existsSync(path.join(FIXTURES, name, 'PROJECT')))
  .sort();

describe('every fixture', () => {
  it('generates the same CRDs and diagnostics with the smaller library as with the full one', () => {
    const served: string[] = [];
    for (const name of fixtures) {
      const root = path.join(FIXTURES, name);
      const subset = crds(root);
      if (subset.lib === 'subset') served.push(name);
      expect(subset.output, name).toEqual(crds(root, 'full').output);
    }
    // The subset serves most fixtures; the others load @types/node (cronjob) or full declarations.
    expect(served).toEqual(
      expect.arrayContaining([
        'bad-types_error',
        'crd-aliases',
        'crd-basic',
        'crd-markers',
        'crd-semantics',
        'crd-typescript',
        'crd-validation',
        'runtime',
        'schema-checks_error',
      ]),
    );
  }, 120_000);
});

/** A project whose src/api/shop/v1/ holds the Order kind, with `spec` and `extra` declarations. */
async function project(spec: string, extra = '', more: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-lib-subset-'));
  dirs.push(dir);
  await symlink(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const files: Record<string, string> = {
    PROJECT: 'domain: example.com\nlayout:\n- typescript.kubesmith.dev/v1\nprojectName: shop\nversion: "3"\n',
    'package.json': '{ "name": "shop", "private": true, "type": "module" }\n',
    'tsconfig.json': JSON.stringify({
      compilerOptions: { module: 'NodeNext', strict: true },
      include: ['src'],
    }),
    'src/api/shop/v1/group-version.ts':
      "// +groupName=shop.example.com\nimport { groupVersion } from '@kubesmith/runtime';\n\nexport const GroupVersion = groupVersion('shop.example.com', 'v1');\n",
    'src/api/shop/v1/order.types.ts': `import type { int32, ObjectMeta } from '@kubesmith/runtime';
import { GroupVersion } from './group-version.js';

export interface Line {
  sku: string;
  count?: int32;
}
${extra}
export interface OrderSpec {
  lines?: Line[];
${spec}
}

/** +kubebuilder:object:root=true */
export interface Order {
  apiVersion: 'shop.example.com/v1';
  kind: 'Order';
  metadata?: ObjectMeta;
  spec: OrderSpec;
}

export const OrderKind = GroupVersion.kind<Order>('Order', { plural: 'orders', namespaced: true });
`,
    ...more,
  };
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
  return dir;
}

describe('API types', () => {
  it.each([
    ['arrays, records and dates', 'a?: string[];\n  b?: ReadonlyArray<Line>;\n  c?: Record<string, Date>;'],
    ['a mapping alias over a project interface', 'a?: Partial<Line>;\n  b?: Required<Pick<Line, "count">>;'],
    ['an intersection of project interfaces and literals', 'a?: Line & { note?: string };'],
    ['a branded integer', 'a?: int32;'],
  ])('take the smaller library with %s', async (_, spec) => {
    const dir = await project(spec);
    const subset = crds(dir);
    expect(subset.blocker).toBeUndefined();
    expect(subset.lib).toBe('subset');
    expect(subset.output).toEqual(crds(dir, 'full').output);
  });

  // Each of these reads members of a library type, or could. All but the inferred class member and the
  // augmentation give other CRDs or diagnostics with the smaller library (RegExp's methods are
  // function-typed properties, an error; without them it is an object), which is why they block it; the
  // mapper reads neither an inferred class member nor an augmentation today, and they block it so that it
  // never depends on that.
  it.each([
    ['a library type as a field', 'e?: RegExp;', '', /:\d+: the library type RegExp$/],
    [
      'an interface that extends one',
      'e?: Pattern;',
      'export interface Pattern extends RegExp {}',
      /the library type RegExp/,
    ],
    ['a mapping alias over a primitive', 'o?: Omit<string, "length">;', '', /the library type Omit/],
    [
      'a mapping alias over a type parameter',
      'o?: Wrap<string>;',
      'export interface Wrap<T> { v?: Omit<T, "x"> }',
      /the library type Omit/,
    ],
    ['keyof', 'k?: Record<keyof string, string>;', '', /`keyof`/],
    ['an indexed access', 'n?: string["charAt"];', '', /an indexed access type/],
    [
      'a conditional type',
      'c?: string extends { slice(): string } ? string : int32;',
      '',
      /a conditional type/,
    ],
    ['a mapped type', 'm?: { [K in keyof string]?: string };', '', /a mapped type/],
    ['typeof', 'q?: typeof upper;', "export const upper = 'a'.toUpperCase();", /`typeof` in a type/],
    [
      'an intersection with a type parameter',
      'b?: Tagged<string>;',
      'export type Tagged<T> = T & { tag?: "x" };',
      /an intersection/,
    ],
    [
      // Its first brand property is not a brand the mapper knows: it maps Number's members, not an int32.
      'a brand-like intersection the mapper does not take for a brand',
      'b?: Tagged<number>;',
      'export type Tagged<T> = T & { readonly __kubesmithType?: "int8"; readonly __brand?: "int32" };',
      /an intersection/,
    ],
    [
      'an inferred class member',
      'p?: Part;',
      "export class Part { name = 'a'.toUpperCase(); }",
      /a class member whose type is inferred/,
    ],
    [
      'a global augmentation',
      'a?: string;',
      'declare global { interface String { extra: string } }',
      /a module or global augmentation/,
    ],
  ])('take the full library with %s, and generate what it gives', async (_, spec, extra, why) => {
    const dir = await project(spec, extra);
    const result = crds(dir);
    expect(result.lib).toBe('full');
    expect(result.blocker).toMatch(why);
    expect(result.blocker).toContain('order.types.ts:');
    expect(result.output).toEqual(crds(dir, 'full').output);
  });
  it('take the full library when a project declaration file named like a library file needs it', async () => {
    // TypeScript's library files are lib.*.d.ts: the check knows them from the program, not by name.
    const dir = await project('p?: Pattern;', "import type { Pattern } from './lib.patterns.js';", {
      'src/api/shop/v1/lib.patterns.d.ts': 'export interface Pattern extends RegExp {}\n',
    });
    const result = crds(dir);
    expect(result.lib).toBe('full');
    expect(result.blocker).toMatch(/lib\.patterns\.d\.ts:1: the library type RegExp$/);
    expect(result.output).toEqual(crds(dir, 'full').output);
  });
  it('map a type of a project declaration file named like a library file as the project declares it', async () => {
    // A calendar Date of the project's own, in lib.calendar.d.ts: an object, not TypeScript's Date
    // (a date-time string). Library files are known by their no-default-lib directive, not their name.
    const dir = await project('due?: Date;', "import type { Date } from './lib.calendar.js';", {
      'src/api/shop/v1/lib.calendar.d.ts': 'export interface Date {\n  day: string;\n}\n',
    });
    const { output } = crds(dir);
    expect(output.diagnostics).toEqual([]);
    const crd = output.files[0]?.content ?? '';
    expect(crd).toMatch(/due:\n\s+properties:\n\s+day:/);
    expect(crd).not.toContain('date-time');
  });
});
