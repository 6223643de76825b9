import { describe, expect, it } from 'vitest';
import { crdSchemaProblems, structuralProblems } from './structural.js';
import type { JSONSchemaProps } from './types.js';

const root = (spec: JSONSchemaProps): JSONSchemaProps => ({
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec,
  },
});
const messages = (schema: JSONSchemaProps) => crdSchemaProblems(schema).map((p) => p.message);

describe('crdSchemaProblems', () => {
  it('accepts a structural schema', () => {
    expect(
      messages(
        root({
          type: 'object',
          properties: {
            port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
            free: { 'x-kubernetes-preserve-unknown-fields': true },
            tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
            name: { type: 'string', pattern: '^[a-z]+$', default: 'abc' },
            rule: { type: 'string', 'x-kubernetes-validations': [{ rule: "self != ''" }] },
          },
        }),
      ),
    ).toEqual([]);
  });

  it('holds the root to an object with metadata {type: object}', () => {
    expect(messages({ type: 'string' })).toEqual(['the root schema is not an object']);
    expect(
      messages({
        type: 'object',
        properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } },
      }),
    ).toEqual(['.metadata must be {type: object} (only name and generateName may be constrained)']);
    expect(
      messages({
        type: 'object',
        properties: { metadata: { type: 'object', properties: { name: { type: 'string' } } } },
      }),
    ).toEqual([]);
  });

  it('finds every rule the apiserver holds, with the path', () => {
    const spec = {
      type: 'object',
      properties: {
        untyped: {},
        nullType: { type: 'null' },
        ref: { type: 'object', $ref: '#/definitions/x' },
        both: {
          type: 'object',
          properties: { a: { type: 'string' } },
          additionalProperties: { type: 'string' },
        },
        unique: { type: 'array', items: { type: 'string' }, uniqueItems: true },
        noItems: { type: 'array' },
        lookahead: { type: 'string', pattern: '(?=a)' },
        badRule: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.size( > 1' }] },
        badDefault: { type: 'integer', maximum: 3, default: 5 },
        setOfObjects: {
          type: 'array',
          'x-kubernetes-list-type': 'set',
          items: { type: 'object', properties: { a: { type: 'string' } } },
        },
        embedded: { type: 'string', 'x-kubernetes-embedded-resource': true },
        nested: { type: 'array', items: { type: 'object', properties: { deep: {} } } },
        oneOfType: { type: 'object', oneOf: [{ type: 'string' }] },
      },
    } as JSONSchemaProps;
    expect(messages(root(spec))).toEqual([
      '.spec.untyped: has no type',
      '.spec.nullType: has the type "null"',
      '.spec.ref: uses $ref, which CRD schemas do not support',
      '.spec.both: has both properties and additionalProperties',
      '.spec.unique: sets uniqueItems: true, which the apiserver rejects',
      '.spec.noItems: is an array without items',
      '.spec.lookahead: lookahead ((?=...), (?!...)) is not supported by RE2',
      '.spec.badRule: the CEL expression leaves ( unclosed',
      '.spec.badDefault: the default 5 is above the maximum 3',
      '.spec.setOfObjects: is a set list of non-scalar items',
      '.spec.embedded: is an embedded resource that is not an object',
      '.spec.embedded: is an embedded resource without properties',
      '.spec.nested[].deep: has no type',
      '.spec.oneOfType: oneOf holds type, which is not a value validation',
    ]);
  });
});

describe('structuralProblems', () => {
  it('checks a node with its items and values, not its properties', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: { a: {} },
      additionalProperties: undefined,
    };
    expect(structuralProblems(schema)).toEqual([]);
    expect(structuralProblems({ type: 'array', items: {} }).map((p) => p.message)).toEqual([
      'items: has no type',
    ]);
  });
});
