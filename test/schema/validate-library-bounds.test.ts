/**
 * Rules whose inputs Go would take minutes or gigabytes on (a quantity with an exponent of two billion
 * digits, a format precision of billions): kubesmith validate answers at once, with the result Go would
 * give where it can compute it cheaply and an evaluation error where it cannot. The rules come from CRD
 * files a pull request may write (docs/security.md), so none may stall the CI that validates them.
 */
import { describe, expect, it } from 'vitest';
import type { JSONSchemaProps } from '#validation/schema.js';
import { validateObject } from '#validation/validate.js';

const errorsOf = (rule: string, v: string): string[] => {
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: {
      spec: { type: 'object', properties: { v: { type: 'string', 'x-kubernetes-validations': [{ rule }] } } },
    },
  };
  const object = { apiVersion: 'x.example.com/v1', kind: 'X', metadata: { name: 'x' }, spec: { v } };
  return validateObject(object, { schema, statusSubresource: false }).errors.map((e) => e.message);
};

describe('library functions on huge inputs answer at once', () => {
  it('compares and converts quantities with huge exponents without writing their digits', () => {
    expect(errorsOf("quantity(self).compareTo(quantity('1')) == 1", '1e2000000000')).toEqual([]);
    expect(errorsOf('quantity(self).asApproximateFloat() > 1.0', '1e2000000000')).toEqual([]);
    // Under a nano a quantity rounds up to one nano, however many zeros it has.
    expect(errorsOf("quantity(self) == quantity('1n')", '123456789012345678901e-2000000000')).toEqual([]);
    expect(errorsOf("quantity(self) == quantity('-1n')", '-0.0000000000000000000001')).toEqual([]);
  }, 2_000);

  it('refuses with an evaluation error a sum or a decimal Go could not write in memory', () => {
    expect(errorsOf("quantity(self).add(quantity('1')).isInteger()", '1e2000000000')).toEqual([
      'Invalid value: "string": quantities too far apart to add evaluating rule: quantity(self).add(quantity(\'1\')).isInteger()',
    ]);
    expect(errorsOf('isQuantity(self)', '1234567890123456789012e2000000000')[0]).toMatch(
      /is too large to evaluate evaluating rule/,
    );
  }, 2_000);

  it('refuses a format precision over a million, as Go’s fmt takes none', () => {
    expect(errorsOf("'%.3000000000f'.format([1.5]) != ''", 'x')).toEqual([
      "Invalid value: \"string\": error during formatting: precision 3000000000 is over 1000000 evaluating rule: '%.3000000000f'.format([1.5]) != ''",
    ]);
    expect(errorsOf("'%.3000000000e'.format([1.5]) != ''", 'x')[0]).toMatch(/precision 3000000000 is over/);
  }, 2_000);
});
