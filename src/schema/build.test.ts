import { describe, expect, it } from 'vitest';
import { Project, ts } from 'ts-morph';
import { schemaOf } from '../../test/helpers/schema.js';
import { defaultRegistry } from '../manifests/registry.js';
import { formatDiagnostic, MarkerIndex, Report, type Diagnostic } from '../markers/index.js';
import { SchemaBuilder } from './build.js';
import type { JSONSchemaProps } from './types.js';

const props = (source: string) => {
  const { schema, diagnostics } = schemaOf(source);
  expect(diagnostics).toEqual([]);
  return schema.properties ?? {};
};

const RUNTIME = `import type { int32, int64, IntOrString, Quantity, Time, Condition } from '@kubesmith/runtime';\n`;

describe('type mapping (DESIGN §4)', () => {
  it('maps scalars', () => {
    expect(props('export interface Root { s: string; b: boolean; n: number }')).toEqual({
      s: { type: 'string' },
      b: { type: 'boolean' },
      n: { type: 'number' },
    });
  });

  it('maps int32 and int64 from @kubesmith/runtime, also unresolved, also inside Record and arrays', () => {
    expect(
      props(`${RUNTIME}export interface Root { a: int32; b: int64; c: Record<string, int32>; d: int64[] }`),
    ).toEqual({
      a: { type: 'integer', format: 'int32' },
      b: { type: 'integer', format: 'int64' },
      c: { type: 'object', additionalProperties: { type: 'integer', format: 'int32' } },
      d: { type: 'array', items: { type: 'integer', format: 'int64' } },
    });
  });

  it('maps branded integer aliases declared locally', () => {
    const source = `type int32 = number & { readonly __kubesmithType?: 'int32' };
      export interface Root { a: int32; b: Partial<{ x: int32 }> }`;
    expect(props(source)).toEqual({
      a: { type: 'integer', format: 'int32' },
      b: { type: 'object', properties: { x: { type: 'integer', format: 'int32' } } },
    });
  });

  it('maps string-literal unions and string enums in source order', () => {
    const source = `export enum Color { Red = 'red', Blue = 'blue' }
      export type Mode = 'b' | 'a';
      export interface Root { color: Color; mode: Mode; inline: 'x' | 'y' }`;
    expect(props(source)).toEqual({
      color: { type: 'string', enum: ['red', 'blue'] },
      mode: { type: 'string', enum: ['b', 'a'] },
      inline: { type: 'string', enum: ['x', 'y'] },
    });
  });

  it('maps T | null to nullable and ?/+optional/+required to required', () => {
    const { schema } = schemaOf(`export interface Root {
        a: string | null;
        b?: string;
        /** +optional */
        c: string;
        /** +required */
        d?: string;
        e: string;
      }`);
    expect(schema.properties?.['a']).toEqual({ type: 'string', nullable: true });
    expect(schema.required).toEqual(['a', 'd', 'e']);
  });

  it('maps arrays in every spelling', () => {
    expect(
      props(
        'export interface Root { a: string[]; b: readonly string[]; c: Array<string>; d: ReadonlyArray<boolean> }',
      ),
    ).toEqual({
      a: { type: 'array', items: { type: 'string' } },
      b: { type: 'array', items: { type: 'string' } },
      c: { type: 'array', items: { type: 'string' } },
      d: { type: 'array', items: { type: 'boolean' } },
    });
  });

  it('maps maps, nested types, extends, intersections and generics', () => {
    const source = `interface Base {
        /** Base doc. */
        base: string;
      }
      interface Extra { extra?: number }
      interface Box<T> { value: T }
      export interface Root extends Base {
        m: { [key: string]: boolean };
        nested: { inner: { deep: string } };
        both: Base & Extra;
        box: Box<string>;
        picked: Pick<Base & Extra, 'extra'>;
      }`;
    const { schema, diagnostics } = schemaOf(source);
    expect(diagnostics).toEqual([]);
    expect(schema.properties).toEqual({
      base: { type: 'string', description: 'Base doc.' },
      m: { type: 'object', additionalProperties: { type: 'boolean' } },
      nested: {
        type: 'object',
        properties: {
          inner: { type: 'object', properties: { deep: { type: 'string' } }, required: ['deep'] },
        },
        required: ['inner'],
      },
      both: {
        type: 'object',
        properties: { base: { type: 'string', description: 'Base doc.' }, extra: { type: 'number' } },
        required: ['base'],
      },
      box: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] },
      picked: { type: 'object', properties: { extra: { type: 'number' } } },
    });
    expect(schema.required).toEqual(['base', 'both', 'box', 'm', 'nested', 'picked']);
  });

  it('maps Time, Date, IntOrString, Quantity, Condition and unknown', () => {
    const p = props(
      `${RUNTIME}export interface Root { t: Time; d: Date; i: IntOrString; q: Quantity; c: Condition; u: unknown }`,
    );
    expect(p['t']).toEqual({ type: 'string', format: 'date-time' });
    expect(p['d']).toEqual({ type: 'string', format: 'date-time' });
    expect(p['i']).toEqual({
      anyOf: [{ type: 'integer' }, { type: 'string' }],
      'x-kubernetes-int-or-string': true,
    });
    expect(p['q']?.pattern).toMatch(/^\^\(\\\+\|-\)\?/);
    expect(p['c']?.required).toEqual(['lastTransitionTime', 'message', 'reason', 'status', 'type']);
    expect(p['u']).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
  });

  it('maps a discriminated union to one object with oneOf branches', () => {
    const source = `interface Cat { kind: 'cat'; meow: string }
      interface Dog { kind: 'dog'; bark?: string }
      export interface Root { pet: Cat | Dog }`;
    expect(props(source)['pet']).toEqual({
      type: 'object',
      properties: {
        kind: { type: 'string', enum: ['cat', 'dog'] },
        meow: { type: 'string' },
        bark: { type: 'string' },
      },
      required: ['kind'],
      oneOf: [
        { properties: { kind: { enum: ['cat'] } }, required: ['kind', 'meow'] },
        { properties: { kind: { enum: ['dog'] } }, required: ['kind'] },
      ],
    });
  });

  it('takes descriptions from JSDoc without markers or TODOs, cut at ---, the property over its type', () => {
    const source = `/**
       * Inner is a thing.
       * +kubebuilder:validation:MinProperties=1
       */
      interface Inner { a?: string }
      export interface Root {
        /**
         * First line.
         * Second line.
         *
         * Next paragraph.
         * TODO: drop this.
         * +optional
         * ---
         * Hidden.
         */
        documented?: Inner;
        plain?: Inner;
      }`;
    const p = props(source);
    expect(p['documented']?.description).toBe('First line.\nSecond line.\n\nNext paragraph.');
    expect(p['plain']?.description).toBe('Inner is a thing.');
    expect(p['plain']?.minProperties).toBe(1);
  });
});

describe('known types are recognised by the package they come from, never by a path', () => {
  /** The schema of Root in `files` (an in-memory project), reading package.json files from there too. */
  function rootSchema(files: Record<string, string>, rootFile: string): JSONSchemaProps {
    const project = new Project({
      useInMemoryFileSystem: true,
      compilerOptions: {
        strict: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
      },
    });
    const fs = project.getFileSystem();
    for (const [name, text] of Object.entries(files)) {
      if (name.endsWith('.ts')) project.createSourceFile(name, text);
      else fs.writeFileSync(name, text);
    }
    const diagnostics: Diagnostic[] = [];
    const report = new Report((sf) => sf.fileName, diagnostics);
    const builder = new SchemaBuilder({
      checker: project.getTypeChecker().compilerObject,
      markers: new MarkerIndex(defaultRegistry(), report),
      report,
      readFile: (f) => (fs.fileExistsSync(f) ? fs.readFileSync(f) : undefined),
    });
    const sf = project.getSourceFileOrThrow(rootFile).compilerNode;
    const root = sf.statements.find(
      (st): st is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(st) && st.name.text === 'Root',
    );
    if (!root) throw new Error('no Root');
    const schema = builder.declarationSchema(root, 'Root');
    expect(diagnostics.map(formatDiagnostic)).toEqual([]);
    return schema;
  }
  const OWN_DURATION = `export interface Duration { amount: number }
    export interface Root { d: Duration }`;
  const OBJECT = { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] };

  it("keep a project's own Duration under a path holding @kubesmith/runtime/ and runtime/src/", () => {
    const dir = '/home/me/@kubesmith/runtime';
    const schema = rootSchema(
      {
        [`${dir}/package.json`]: '{"name": "my-operator"}',
        [`${dir}/src/api/types.ts`]: OWN_DURATION,
      },
      `${dir}/src/api/types.ts`,
    );
    expect(schema.properties?.['d']).toEqual(OBJECT);
    // Without any package.json nothing says it is the runtime's either.
    const bare = rootSchema({ '/x/runtime/src/types.ts': OWN_DURATION }, '/x/runtime/src/types.ts');
    expect(bare.properties?.['d']).toEqual(OBJECT);
  });

  it("map the runtime's Duration and Time reached through the project's own re-export", () => {
    const pkg = '/p/node_modules/@kubesmith/runtime';
    const schema = rootSchema(
      {
        '/p/package.json': '{"name": "my-operator", "type": "module"}',
        [`${pkg}/package.json`]:
          '{"name": "@kubesmith/runtime", "type": "module", "types": "./dist/index.d.ts"}',
        // A nameless package.json below the package's own (as dual packages have) does not hide it.
        [`${pkg}/dist/package.json`]: '{"type": "module"}',
        [`${pkg}/dist/index.d.ts`]: `export type Duration = string;
          export interface Time { seconds: number }`,
        '/p/src/api/common.ts': `export type { Duration, Time } from '@kubesmith/runtime';`,
        '/p/src/api/types.ts': `import type { Duration, Time } from './common.js';
          export interface Root { d: Duration; t: Time }`,
      },
      '/p/src/api/types.ts',
    );
    expect(schema.properties).toEqual({
      d: { type: 'string' },
      t: { type: 'string', format: 'date-time' },
    });
  });
});

describe('@kubernetes/client-node types', () => {
  it('take the schema controller-gen emits for the k8s.io/api type', () => {
    const p = props(`import type { V1ServicePort } from '@kubernetes/client-node';
      import * as k8s from '@kubernetes/client-node';
      export interface Root { port: V1ServicePort; selector: k8s.V1LabelSelector }`);
    expect(p['port']?.properties?.['port']).toMatchObject({ type: 'integer', format: 'int32' });
    expect(p['port']?.properties?.['targetPort']?.['x-kubernetes-int-or-string']).toBe(true);
    expect(p['selector']?.['x-kubernetes-map-type']).toBe('atomic');
  });

  it('without schema data are an error, never read from the .d.ts', () => {
    const { diagnostics } = schemaOf(`import type { V1Nope } from '@kubernetes/client-node';
      export interface Root { nope: V1Nope }`);
    expect(diagnostics[0]).toMatch(
      /^types.ts:2:37: error: no schema data for V1Nope from @kubernetes\/client-node/,
    );
  });
});

describe('validation markers', () => {
  it('apply with items: variants and in priority order', () => {
    const p = props(`${RUNTIME}export interface Root {
      /**
       * +kubebuilder:validation:items:Minimum=1
       * +kubebuilder:validation:MaxItems=3
       */
      a: int32[];
      /**
       * +kubebuilder:validation:XIntOrString
       * +kubebuilder:validation:Pattern=^a
       */
      b: string;
      c: AB;
    }
    /** +kubebuilder:validation:AtLeastOneOf=a;b */
    interface AB { a?: string; b?: string }`);
    expect(p['a']).toEqual({
      type: 'array',
      maxItems: 3,
      items: { type: 'integer', format: 'int32', minimum: 1 },
    });
    expect(p['b']).toEqual({ type: 'string', 'x-kubernetes-int-or-string': true, pattern: '^a' });
    expect(p['c']?.['x-kubernetes-validations']).toEqual([
      { rule: 'has(self.a)||has(self.b)', message: 'at least one of the fields in [a b] must be set' },
    ]);
  });

  it('are type-checked as controller-gen does', () => {
    const { diagnostics } = schemaOf(`${RUNTIME}export interface Root {
      /** +kubebuilder:validation:Minimum=1 */
      s: string;
      /** +kubebuilder:validation:Maximum=2.5 */
      i: int32;
      /** +kubebuilder:validation:items:MaxLength=2 */
      n: number;
      /** +kubebuilder:validation:MinItems=1 */
      o: { a: string };
      /**
       * +kubebuilder:validation:Enum=a;b
       * +kubebuilder:default=c
       */
      e: string;
      /** +kubebuilder:default=1 */
      d: string;
    }`);
    expect(diagnostics.map((d) => d.split('\n')[0])).toEqual([
      'types.ts:3:11: error: +kubebuilder:validation:Minimum on Root.s: minimum applies to numbers, not to a string',
      'types.ts:5:11: error: +kubebuilder:validation:Maximum on Root.i: cannot apply the non-integral maximum 2.5 to an integer',
      'types.ts:7:11: error: +kubebuilder:validation:items:MaxLength on Root.n: items markers apply to arrays, not to a number',
      'types.ts:9:11: error: +kubebuilder:validation:MinItems on Root.o: minItems applies to arrays, not to an object',
      'types.ts:13:10: error: +kubebuilder:default on Root.e: the default "c" is not one of the allowed values "a", "b"',
      'types.ts:16:11: error: +kubebuilder:default on Root.d: the default 1 is an integer, but the field is a string',
    ]);
  });
});

describe('markers on a use of a named type (as controller-gen flattens $ref + field)', () => {
  it("combine with the type's: allOf for a keyword both set, the field's rules first", () => {
    const source = `/**
       * +kubebuilder:validation:MinLength=1
       * +kubebuilder:validation:MaxLength=255
       * +kubebuilder:validation:XValidation:rule="self != 'a'"
       */
      type Name = string;
      export interface Root {
        /**
         * +kubebuilder:validation:MinLength=10
         * +kubebuilder:validation:XValidation:rule="self != 'b'"
         */
        a: Name;
        /** +kubebuilder:validation:items:MaxLength=30 */
        b: Name[];
      }`;
    expect(props(source)).toEqual({
      a: {
        type: 'string',
        maxLength: 255,
        allOf: [{ minLength: 1 }, { minLength: 10 }],
        'x-kubernetes-validations': [{ rule: "self != 'b'" }, { rule: "self != 'a'" }],
      },
      b: {
        type: 'array',
        items: {
          type: 'string',
          minLength: 1,
          allOf: [{ maxLength: 255 }, { maxLength: 30 }],
          'x-kubernetes-validations': [{ rule: "self != 'a'" }],
        },
      },
    });
  });

  it('cannot change the type', () => {
    const { diagnostics } = schemaOf(`type Count = number;
      export interface Root {
        /** +kubebuilder:validation:Type=string */
        a: Count;
      }`);
    expect(diagnostics.map((d) => d.split('\n')[0])).toEqual([
      'types.ts:3:13: error: +kubebuilder:validation:Type on Root.a: conflicting types: the type is number, the marker makes it string',
    ]);
  });
});

describe('+k8s:immutable', () => {
  it('adds a rule on the parent refusing to remove an optional field once set, also through extends', () => {
    const source = `interface Base {
        /** +k8s:immutable */
        a?: string;
      }
      export interface Root extends Base {
        /** +k8s:immutable */
        b?: string;
        /** +k8s:immutable */
        c: string;
      }`;
    const { schema, diagnostics } = schemaOf(source);
    expect(diagnostics).toEqual([]);
    const immutable = { rule: 'self == oldSelf', message: 'field is immutable' };
    expect(schema.properties?.['b']).toEqual({ type: 'string', 'x-kubernetes-validations': [immutable] });
    expect(schema.required).toEqual(['c']);
    expect(schema['x-kubernetes-validations']).toEqual([
      { rule: '!has(oldSelf.a) || has(self.a)', message: 'field a is immutable once set' },
      { rule: '!has(oldSelf.b) || has(self.b)', message: 'field b is immutable once set' },
    ]);
  });
});

describe('unsupported constructs', () => {
  it('are errors naming the property path and the fix', () => {
    const { diagnostics } = schemaOf(`interface Node { next?: Node }
      interface A { a: string }
      interface B { b: string }
      export interface Root {
        any: any;
        fn: (x: number) => void;
        rec: Node;
        union: A | B;
        mixed: string | number;
        big: bigint;
      }`);
    expect(diagnostics.map((d) => d.split('\n')[0])).toEqual([
      'types.ts:1:25: error: recursive type Node at Root.rec.next: CRD schemas cannot be recursive',
      'types.ts:5:14: error: Root.any: `any` has no CRD schema',
      'types.ts:6:13: error: Root.fn: a function type has no CRD schema',
      'types.ts:8:16: error: Root.union: an untagged union of object types has no CRD schema',
      'types.ts:9:16: error: Root.mixed: a union of different types has no CRD schema',
      'types.ts:10:14: error: Root.big: `bigint` has no CRD schema',
    ]);
  });

  it('find recursion through a generic type too', () => {
    const { diagnostics } = schemaOf(`interface Tree<T> { value: T; children?: Tree<T>[] }
      export interface Root { tree: Tree<string> }`);
    expect(diagnostics.map((d) => d.split('\n')[0])).toEqual([
      'types.ts:2:37: error: recursive type Tree<string> at Root.tree.children[]: CRD schemas cannot be recursive',
    ]);
  });
});
