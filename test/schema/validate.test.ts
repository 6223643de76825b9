/** The validator's engine: what the recorded verdicts do not show (the object as stored, speed). */
import { describe, expect, it } from 'vitest';
import type { JSONSchemaProps } from '#validation/schema.js';
import { validateObject } from '#validation/validate.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        tls: {
          type: 'object',
          default: {},
          properties: { port: { type: 'integer', default: 443 }, note: { type: 'string' } },
        },
        list: {
          type: 'array',
          items: { type: 'object', properties: { w: { type: 'integer', default: 1 } } },
        },
      },
    },
  },
};

describe('validateObject', () => {
  it('defaults recursively into what it defaulted and into list items, prunes unknown fields, and leaves the input as it was', () => {
    const input = {
      apiVersion: 'a/v1',
      kind: 'K',
      metadata: { name: 'x' },
      spec: { list: [{}, { w: 5 }], extra: null },
    };
    const before = structuredClone(input);
    const verdict = validateObject(input, { schema, statusSubresource: false });
    expect(verdict.object.spec).toEqual({ tls: { port: 443 }, list: [{ w: 1 }, { w: 5 }] });
    expect(input).toEqual(before);
    expect(verdict.warnings.map((w) => w.message)).toEqual(['unknown field "spec.extra"']);
  });

  it('checks 1,000 objects against 50 rules in well under a second', () => {
    const props: Record<string, JSONSchemaProps> = { s: { type: 'string', maxLength: 50 } };
    for (let i = 0; i < 5; i++) props[`n${i}`] = { type: 'integer', minimum: 0 };
    const rules = Array.from({ length: 50 }, (_, i) => ({
      rule: `self.n${i % 5} >= 0 && self.s.size() < 100`,
    }));
    const big: JSONSchemaProps = {
      type: 'object',
      properties: { spec: { type: 'object', properties: props, 'x-kubernetes-validations': rules } },
    };
    const started = performance.now();
    for (let i = 0; i < 1000; i++) {
      const spec = { s: 'x'.repeat(i % 40), n0: i, n1: 1, n2: 2, n3: 3, n4: 4 };
      const verdict = validateObject(
        { metadata: { name: `o${i}` }, spec },
        { schema: big, statusSubresource: false },
      );
      expect(verdict.errors).toEqual([]);
    }
    // A second is the goal; the bound leaves room for a loaded machine.
    expect(performance.now() - started).toBeLessThan(3000);
  });
});
