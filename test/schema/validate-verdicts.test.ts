/**
 * The recorded-verdict suite: each case of test/fixtures/validate/cases.mjs was given to a real
 * kube-apiserver (1.37.2; 1.36.3 gives the same) by test/fixtures/validate/record.mjs, which wrote its
 * verdict (accepted, or its field errors, and its warnings) into verdicts.json; kubesmith's validator must
 * say the same, word for word.
 */
import { describe, expect, it } from 'vitest';
import type { JSONSchemaProps } from '#validation/schema.js';
import { validateObject } from '#validation/validate.js';
import verdicts from '../fixtures/validate/verdicts.json' with { type: 'json' };

interface Recorded {
  name: string;
  schema: JSONSchemaProps;
  status?: boolean;
  object: Record<string, unknown>;
  statusValue?: Record<string, unknown>;
  old?: Record<string, unknown>;
  oldSchema?: JSONSchemaProps;
  accepted: boolean;
  errors: string[];
  warnings: string[];
}

const object = (spec: unknown, status?: unknown): Record<string, unknown> => ({
  apiVersion: 'verdicts.example.com/v1',
  kind: 'Case',
  metadata: { name: 'x', namespace: 'default' },
  spec,
  ...(status !== undefined ? { status } : {}),
});

describe('kubesmith validate agrees with kube-apiserver', () => {
  const cases = verdicts as unknown as Recorded[];
  it('covers accepted and rejected cases', () => {
    expect(cases.filter((c) => c.accepted).length).toBeGreaterThan(10);
    expect(cases.filter((c) => !c.accepted).length).toBeGreaterThan(10);
  });
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    let old: Record<string, unknown> | undefined;
    if (c.old) {
      // The stored object, as the API server stored it under the schema of its day (defaults applied).
      old = validateObject(object(c.old), {
        schema: c.oldSchema!,
        statusSubresource: c.status === true,
      }).object;
    }
    const verdict = validateObject(
      object(c.object, c.statusValue),
      { schema: c.schema, statusSubresource: c.status === true },
      old,
    );
    expect({
      errors: verdict.errors.map((e) => `${e.path}: ${e.message}`).sort(),
      warnings: verdict.warnings.map((w) => w.message).sort(),
    }).toEqual({ errors: [...c.errors].sort(), warnings: [...c.warnings].sort() });
  });
});
