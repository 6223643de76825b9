/**
 * The one type mapper: a type gives the same schema whether it is written (`v: Mode`) or computed (`T`
 * of `Box<Mode>`), because every construct is mapped in one place and the written node only adds names.
 */
import { describe, expect, it } from 'vitest';
import { builderOf, schemaOf } from '../../test/helpers/schema.js';
import { RULE_ORIGIN } from './types.js';

describe('the type mapper', () => {
  it('maps a type written and the same type reached through a type argument alike', () => {
    const { schema, diagnostics } = schemaOf(`
      type int32 = number & { readonly __kubesmithType?: 'int32' };
      /** Mode of operation. */
      type Mode = 'b' | 'a';
      enum Color { Red = 'red', Blue = 'blue' }
      /** An item. */
      interface Item { name: string; count?: int32 }
      interface Box<T> { v: T }
      export interface Root {
        mode: Mode; boxedMode: Box<Mode>;
        color: Color; boxedColor: Box<Color>;
        count: int32; boxedCount: Box<int32>;
        item: Item; boxedItem: Box<Item>;
        items: Item[]; boxedItems: Box<Item[]>;
        flag: boolean | null; boxedFlag: Box<boolean | null>;
      }`);
    expect(diagnostics).toEqual([]);
    const props = schema.properties ?? {};
    for (const name of ['mode', 'color', 'count', 'item', 'items', 'flag']) {
      const boxed = `boxed${name[0]!.toUpperCase()}${name.slice(1)}`;
      expect(props[boxed]?.properties?.['v'], name).toEqual(props[name]);
    }
    expect(props['mode']).toEqual({ description: 'Mode of operation.', type: 'string', enum: ['b', 'a'] });
    expect(props['flag']).toEqual({ type: 'boolean', nullable: true });
  });

  it('maps mapped types written as an alias, negative number literals, and generic aliases of arrays', () => {
    const { schema, diagnostics } = schemaOf(`
      type int32 = number & { readonly __kubesmithType?: 'int32' };
      type Flags = { [K in 'x' | 'y']?: boolean };
      type Values<K, V> = V[];
      export interface Root { flags: Flags; level: -1 | 0 | 1; values: Values<string, int32> }`);
    expect(diagnostics).toEqual([]);
    expect(schema.properties?.['flags']).toEqual({
      type: 'object',
      properties: { x: { type: 'boolean' }, y: { type: 'boolean' } },
    });
    expect(schema.properties?.['level']).toEqual({ type: 'number', enum: [-1, 0, 1] });
    expect(schema.properties?.['values']).toEqual({
      type: 'array',
      items: { type: 'integer', format: 'int32' },
    });
  });

  it('reports a construct the same way written or computed', () => {
    const { diagnostics } = schemaOf(`
      interface Box<T> { v: T }
      export interface Root { pair: [string, number]; boxedPair: Box<[string, number]> }`);
    expect(diagnostics.map((d) => d.split('\n')[1])).toEqual([
      '  hint: use an array T[] or an object with named properties',
      '  hint: use an array T[] or an object with named properties',
    ]);
    expect(diagnostics.map((d) => d.split('\n')[0])).toEqual([
      'types.ts:3:37: error: Root.pair: a tuple has no CRD schema',
      'types.ts:3:66: error: Root.boxedPair.v: a tuple has no CRD schema',
    ]);
  });

  it("reports a class's public constructor parameter properties, which its property declarations leave out", () => {
    const { schema, diagnostics } = schemaOf(`
      class Crew {
        size?: number;
        constructor(public captain: string, readonly mate?: string, private cook?: string, plain?: string) {}
        get full(): boolean { return true; }
      }
      export interface Root { crew: Crew }`);
    expect(schema.properties?.['crew']?.properties).toEqual({ size: { type: 'number' } });
    expect(diagnostics.map((d) => d.split('\n')[0])).toEqual([
      "types.ts:4:21: error: Root.crew.captain is declared as a constructor parameter; a class's schema is read from its property declarations",
      "types.ts:4:45: error: Root.crew.mate is declared as a constructor parameter; a class's schema is read from its property declarations",
    ]);
  });

  it('reads a name declared again in a namespace, or shadowed by a type parameter, as that, after the file-level one', () => {
    const { schema, diagnostics } = schemaOf(`
      type int32 = number & { readonly __kubesmithType?: 'int32' };
      interface Item { name: string }
      namespace inner {
        export interface Item { size: number }
        export interface Holder { item: Item; count: int32 }
      }
      interface Box<Item> { v: Item }
      export interface Root {
        item: Item; count: int32;
        held: inner.Holder; boxed: Box<boolean>;
        again: Item;
      }`);
    expect(diagnostics).toEqual([]);
    const props = schema.properties ?? {};
    const item = { type: 'object', required: ['name'], properties: { name: { type: 'string' } } };
    expect(props['item']).toEqual(item);
    expect(props['again']).toEqual(item);
    expect(props['held']?.properties).toEqual({
      item: { type: 'object', required: ['size'], properties: { size: { type: 'number' } } },
      count: { type: 'integer', format: 'int32' },
    });
    expect(props['boxed']?.properties).toEqual({ v: { type: 'boolean' } });
  });
});

describe("a named type's cached schema", () => {
  it('is the same for every use, whatever markers and description another use carries', () => {
    const { schema, diagnostics } = schemaOf(`
      /** +kubebuilder:validation:MinLength=1 */
      type Name = string;
      /** Names. */
      type Names = Name[];
      export interface Root {
        /**
         * The first use.
         * +kubebuilder:validation:items:MaxLength=5
         * +kubebuilder:validation:items:MinLength=2
         * +kubebuilder:validation:MinItems=1
         */
        first: Names;
        second: Names;
        /**
         * +kubebuilder:validation:MinLength=3
         */
        name: Name;
        plain: Name;
      }`);
    expect(diagnostics).toEqual([]);
    const props = schema.properties ?? {};
    const name = { type: 'string', minLength: 1 };
    expect(props['first']).toEqual({
      description: 'The first use.',
      type: 'array',
      minItems: 1,
      items: { type: 'string', maxLength: 5, allOf: [{ minLength: 1 }, { minLength: 2 }] },
    });
    expect(props['second']).toEqual({ description: 'Names.', type: 'array', items: name });
    expect(props['name']).toEqual({ type: 'string', allOf: [{ minLength: 1 }, { minLength: 3 }] });
    expect(props['plain']).toEqual(name);
  });

  it("keeps its rules' origins: a rule a type's markers take over is a copy", () => {
    const { builder, decl, diagnostics } = builderOf(`
      interface Base {
        /** +k8s:immutable */
        x?: string;
      }
      /** +kubebuilder:validation:XValidation:rule="has(self.x)" */
      interface Derived extends Base {}
      export interface Root { derived: Derived; base: Base }`);
    const schema = builder.declarationSchema(decl('Root'), 'Root');
    expect(diagnostics).toEqual([]);
    const [derivedOnceSet] = schema.properties?.['derived']?.['x-kubernetes-validations'] ?? [];
    const [baseOnceSet] = schema.properties?.['base']?.['x-kubernetes-validations'] ?? [];
    expect(derivedOnceSet?.rule).toBe('!has(oldSelf.x) || has(self.x)');
    expect(derivedOnceSet?.[RULE_ORIGIN]?.line).toBe(6);
    expect(baseOnceSet?.rule).toBe('!has(oldSelf.x) || has(self.x)');
    expect(baseOnceSet?.[RULE_ORIGIN]).toBeUndefined();
  });

  it("is not changed by a kind's root schema", () => {
    const { builder, decl, diagnostics } = builderOf(`
      interface ObjectMeta { name?: string }
      export interface Root { apiVersion: 'v1'; kind: 'Root'; metadata: ObjectMeta; spec: string }
      export interface Holder { root: Root }`);
    const root = builder.rootSchema(decl('Root'));
    expect(root.properties?.['metadata']).toEqual({ type: 'object' });
    expect(root.properties?.['kind']?.type).toBe('string');
    const held = builder.declarationSchema(decl('Holder'), 'Holder').properties?.['root'];
    expect(held?.properties?.['metadata']).toEqual({
      type: 'object',
      properties: { name: { type: 'string' } },
    });
    expect(held?.properties?.['kind']).toEqual({ type: 'string', enum: ['Root'] });
    expect(held?.required).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
    expect(diagnostics).toEqual([]);
  });
});
