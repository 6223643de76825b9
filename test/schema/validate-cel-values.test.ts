/**
 * Recorded verdicts (test/fixtures/validate/cel-values.cases.mjs, recorded from kube-apiserver 1.37.2 by
 * record.mjs into cel-values.verdicts.json) on what the CEL conformance run led to: string formats given
 * to rules as timestamps, durations and bytes; the cel-go functions cel-js lacked; strings.quote; a rule
 * that fails to evaluate; values quoted as Go quotes them. kubesmith's validator must say the same, word
 * for word, as in validate-verdicts.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { JSONSchemaProps } from '#validation/schema.js';
import { validateObject } from '#validation/validate.js';
import verdicts from '../fixtures/validate/cel-values.verdicts.json' with { type: 'json' };

interface Recorded {
  name: string;
  schema: JSONSchemaProps;
  object: Record<string, unknown>;
  accepted: boolean;
  errors: string[];
  warnings: string[];
}

describe('kubesmith validate agrees with kube-apiserver on CEL values', () => {
  const cases = verdicts as unknown as Recorded[];
  it('covers accepted and rejected cases', () => {
    expect(cases.filter((c) => c.accepted).length).toBeGreaterThan(5);
    expect(cases.filter((c) => !c.accepted).length).toBeGreaterThan(5);
  });
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const verdict = validateObject(
      {
        apiVersion: 'verdicts.example.com/v1',
        kind: 'Case',
        metadata: { name: 'x', namespace: 'default' },
        spec: c.object,
      },
      { schema: c.schema, statusSubresource: false },
    );
    expect({
      errors: verdict.errors.map((e) => `${e.path}: ${e.message}`).sort(),
      warnings: verdict.warnings.map((w) => w.message).sort(),
    }).toEqual({ errors: [...c.errors].sort(), warnings: [...c.warnings].sort() });
  });
});
