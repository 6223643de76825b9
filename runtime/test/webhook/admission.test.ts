import { describe, expect, it } from 'vitest';
import { groupVersion, resourceKind } from '../../src/kinds.js';
import {
  DeniedError,
  ValidationError,
  defaulting,
  fieldError,
  validating,
  type AdmissionReview,
} from '../../src/webhook/admission.js';
import { applyJsonPatch } from '../../src/testing/jsonpatch.js';
import { mutatePath, validatePath } from '../../src/webhook/paths.js';
import type { Webhook } from '../../src/webhook/webhook.js';
import { admissionReview, memoryLogger } from './helpers.js';

interface Guestbook {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { replicas?: number; size?: string; tags?: string[] };
}

const Guestbook = groupVersion('webapp.example.com', 'v1').kind<Guestbook>('Guestbook', {
  plural: 'guestbooks',
});
const guestbook = (spec: Guestbook['spec']): Guestbook => ({
  apiVersion: 'webapp.example.com/v1',
  kind: 'Guestbook',
  metadata: { name: 'g' },
  spec,
});

async function answer(webhook: Webhook, body: Record<string, unknown>) {
  const { logger } = memoryLogger();
  const result = await webhook.answer(body, { signal: new AbortController().signal, logger });
  return { ...result, review: result.body as AdmissionReview };
}

describe('defaulting', () => {
  const defaulter = defaulting(Guestbook, {
    default(obj) {
      obj.spec.replicas ??= 1;
      obj.spec.tags = [...(obj.spec.tags ?? []), 'defaulted'];
      obj.metadata.annotations = { ...obj.metadata.annotations, 'webapp.example.com/defaulted': 'true' };
      delete obj.spec.size;
    },
  });

  it('answers a JSON patch that turns the object into the defaulted one, uid echoed', async () => {
    const object = guestbook({ size: 'M', tags: ['a'] });
    const { review } = await answer(defaulter, admissionReview({ object }));
    const response = review.response!;
    expect(review).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
    expect(response).toMatchObject({
      uid: 'a2b4c6d8-0000-4000-8000-000000000001',
      allowed: true,
      patchType: 'JSONPatch',
    });
    const patch = JSON.parse(Buffer.from(response.patch!, 'base64').toString('utf8'));
    expect(patch).toEqual([
      { op: 'add', path: '/metadata/annotations', value: { 'webapp.example.com/defaulted': 'true' } },
      { op: 'remove', path: '/spec/size' },
      { op: 'add', path: '/spec/tags/1', value: 'defaulted' },
      { op: 'add', path: '/spec/replicas', value: 1 },
    ]);
    expect(applyJsonPatch(object, patch)).toEqual({
      ...object,
      metadata: { name: 'g', annotations: { 'webapp.example.com/defaulted': 'true' } },
      spec: { replicas: 1, tags: ['a', 'defaulted'] },
    });
  });

  it('answers allowed without a patch when nothing changes, and on DELETE', async () => {
    const quiet = defaulting(Guestbook, { default: async () => {} });
    const { review } = await answer(quiet, admissionReview({ object: guestbook({ replicas: 2 }) }));
    expect(review.response).toEqual({
      uid: 'a2b4c6d8-0000-4000-8000-000000000001',
      allowed: true,
      status: { code: 200 },
    });
    const deleted = await answer(
      defaulter,
      admissionReview({ operation: 'DELETE', oldObject: guestbook({}) }),
    );
    expect(deleted.review.response).toMatchObject({ allowed: true });
    expect(deleted.review.response?.patch).toBeUndefined();
  });

  it('drops what JSON would not send: a property set to undefined is removed', async () => {
    const unset = defaulting(Guestbook, { default: (obj) => void (obj.spec.replicas = undefined) });
    const { review } = await answer(unset, admissionReview({ object: guestbook({ replicas: 2 }) }));
    expect(JSON.parse(Buffer.from(review.response!.patch!, 'base64').toString())).toEqual([
      { op: 'remove', path: '/spec/replicas' },
    ]);
  });

  it('refuses a request for another kind with a 400 that names both', async () => {
    const { review, failure } = await answer(
      defaulter,
      admissionReview({ kind: { group: 'apps', version: 'v1', kind: 'Deployment' }, object: {} }),
    );
    expect(review.response).toMatchObject({ allowed: false, status: { code: 400 } });
    expect(failure).toBe(
      'this webhook admits Guestbook.webapp.example.com, but was called for Deployment.apps: check the rules of the webhook configuration',
    );
  });

  it('answers 400 when a CREATE has no object', async () => {
    const { review } = await answer(defaulter, admissionReview({ object: null }));
    expect(review.response).toMatchObject({
      allowed: false,
      status: { code: 400, message: 'the request has no object for CREATE' },
    });
  });
});

describe('validating', () => {
  const validator = validating(Guestbook, {
    validateCreate(obj) {
      const errors = [];
      if ((obj.spec.replicas ?? 0) < 1)
        errors.push(fieldError.invalid('spec.replicas', obj.spec.replicas, 'must be at least 1'));
      if (obj.spec.size && !['S', 'M'].includes(obj.spec.size))
        errors.push(fieldError.notSupported('spec.size', obj.spec.size, ['S', 'M']));
      if (errors.length > 0) throw new ValidationError(errors, { warnings: ['spec.tags is deprecated'] });
      return { warnings: obj.spec.tags ? ['spec.tags is deprecated'] : [] };
    },
    validateUpdate(obj, old) {
      if (obj.spec.size !== old.spec.size)
        throw new ValidationError(fieldError.forbidden('spec.size', 'is immutable'));
    },
    validateDelete(obj) {
      if (obj.metadata.labels?.['protected'] === 'true') throw new DeniedError('this guestbook is protected');
    },
  });

  it('allows a valid object, with its warnings', async () => {
    const { review } = await answer(
      validator,
      admissionReview({ object: guestbook({ replicas: 1, tags: ['x'] }) }),
    );
    expect(review.response).toEqual({
      uid: 'a2b4c6d8-0000-4000-8000-000000000001',
      allowed: true,
      status: { code: 200 },
      warnings: ['spec.tags is deprecated'],
    });
  });

  it('denies an invalid object with a 422 Invalid Status whose causes name the fields', async () => {
    const { review, failure } = await answer(
      validator,
      admissionReview({ object: guestbook({ replicas: 0, size: 'XL' }) }),
    );
    expect(failure).toBeUndefined(); // a decision, not a failure: nothing to log
    expect(review.response).toEqual({
      uid: 'a2b4c6d8-0000-4000-8000-000000000001',
      allowed: false,
      warnings: ['spec.tags is deprecated'],
      status: {
        status: 'Failure',
        code: 422,
        reason: 'Invalid',
        message:
          'Guestbook.webapp.example.com "g" is invalid: [spec.replicas: Invalid value: 0: must be at least 1, ' +
          'spec.size: Unsupported value: "XL": supported values: "S", "M"]',
        details: {
          name: 'g',
          group: 'webapp.example.com',
          kind: 'Guestbook',
          causes: [
            {
              reason: 'FieldValueInvalid',
              field: 'spec.replicas',
              message: 'Invalid value: 0: must be at least 1',
            },
            {
              reason: 'FieldValueNotSupported',
              field: 'spec.size',
              message: 'Unsupported value: "XL": supported values: "S", "M"',
            },
          ],
        },
      },
    });
  });

  it('passes the new and the old object to validateUpdate', async () => {
    const { review } = await answer(
      validator,
      admissionReview({
        operation: 'UPDATE',
        object: guestbook({ size: 'M' }),
        oldObject: guestbook({ size: 'S' }),
      }),
    );
    expect(review.response?.status).toMatchObject({
      code: 422,
      message: 'Guestbook.webapp.example.com "g" is invalid: spec.size: Forbidden: is immutable',
      details: {
        causes: [{ reason: 'FieldValueForbidden', field: 'spec.size', message: 'Forbidden: is immutable' }],
      },
    });
  });

  it('passes the stored object to validateDelete; DeniedError is a 403', async () => {
    const protectedBook = { ...guestbook({}), metadata: { name: 'g', labels: { protected: 'true' } } };
    const { review } = await answer(
      validator,
      admissionReview({ operation: 'DELETE', oldObject: protectedBook }),
    );
    expect(review.response).toMatchObject({
      allowed: false,
      status: { status: 'Failure', code: 403, reason: 'Forbidden', message: 'this guestbook is protected' },
    });
  });

  it('allows operations without a validator, and CONNECT', async () => {
    const createOnly = validating(Guestbook, { validateCreate: () => {} });
    const update = await answer(
      createOnly,
      admissionReview({ operation: 'UPDATE', object: guestbook({}), oldObject: guestbook({}) }),
    );
    expect(update.review.response).toMatchObject({ allowed: true });
    const connect = await answer(createOnly, admissionReview({ operation: 'CONNECT' }));
    expect(connect.review.response).toMatchObject({ allowed: true });
  });

  it('answers a handler that throws anything else with allowed=false, code 500, and reports it for the log', async () => {
    const broken = validating(Guestbook, {
      validateCreate: () => {
        throw new TypeError("Cannot read properties of undefined (reading 'replicas')");
      },
    });
    const { review, failure, error } = await answer(broken, admissionReview({ object: guestbook({}) }));
    expect(review.response).toEqual({
      uid: 'a2b4c6d8-0000-4000-8000-000000000001',
      allowed: false,
      status: {
        status: 'Failure',
        code: 500,
        reason: 'InternalError',
        message: "internal error in the webhook: Cannot read properties of undefined (reading 'replicas')",
      },
    });
    expect(failure).toContain('internal error');
    expect(error).toBeInstanceOf(TypeError);
  });

  it('names core kinds without a group', async () => {
    const Pod = resourceKind({ group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true });
    const pods = validating(Pod, {
      validateCreate: () => {
        throw new ValidationError(fieldError.required('spec.containers'));
      },
    });
    const { review } = await answer(
      pods,
      admissionReview({
        kind: { group: '', version: 'v1', kind: 'Pod' },
        name: 'p',
        object: { metadata: {} },
      }),
    );
    expect(review.response?.status?.message).toBe('Pod "p" is invalid: spec.containers: Required value');
  });
});

describe('paths', () => {
  it('are kubebuilder’s: dots become dashes, the kind lower-cased, the core group empty', () => {
    expect(mutatePath(Guestbook)).toBe('/mutate-webapp-example-com-v1-guestbook');
    expect(validatePath(Guestbook)).toBe('/validate-webapp-example-com-v1-guestbook');
    expect(validatePath({ group: '', version: 'v1', kind: 'Pod' })).toBe('/validate--v1-pod');
  });
});
