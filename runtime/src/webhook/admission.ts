/**
 * Admission webhooks: AdmissionReview admission.k8s.io/v1 in and out, the counterpart of
 * controller-runtime's `webhook/admission` (`WithCustomDefaulter`, `WithCustomValidator`).
 *
 * - `defaulting(kind, { default(obj) })` runs `default` on a copy of the object and answers with the
 *   RFC 6902 JSON patch from the object the apiserver sent to the defaulted one.
 * - `validating(kind, { validateCreate, validateUpdate, validateDelete })` answers allowed, with the
 *   returned warnings; a thrown `ValidationError` denies with a 422 `Invalid` Status whose causes name the
 *   fields, as the apiserver's own validation does; a thrown `DeniedError` denies with a 403.
 *
 * Anything else a handler throws is a bug, not a decision: the answer is allowed=false with code 500 and
 * the error's message, and the server logs it.
 */
import { deepCopy } from '../internal/deepcopy.js';
import type { ResourceKind } from '../kinds.js';
import { createPatch, type JsonValue } from './internal/jsonpatch.js';
import { messages } from './internal/messages.js';
import type { Answer, Webhook, WebhookContext } from './webhook.js';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

/** A Kubernetes `metav1.Status`, as webhooks answer it. */
export interface ReviewStatus {
  status?: 'Success' | 'Failure';
  code?: number;
  reason?: string;
  message?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    /** `reason` holds the cause's type, as `FieldValueInvalid` (metav1.StatusCause's JSON name). */
    causes?: { reason?: string; field?: string; message?: string }[];
  };
}

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** `admission.k8s.io/v1` AdmissionRequest. */
export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  requestKind?: { group: string; version: string; kind: string };
  requestResource?: { group: string; version: string; resource: string };
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  /** The object as it would be stored; absent for DELETE. */
  object?: unknown;
  /** The stored object, for UPDATE and DELETE. */
  oldObject?: unknown;
  dryRun?: boolean;
  options?: unknown;
}

/** `admission.k8s.io/v1` AdmissionResponse. */
export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  /** The Status (metav1.Status); the JSON name of Go's `Result` field is `status`. */
  status?: ReviewStatus;
  /** Base64 of the JSON patch. */
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

export interface AdmissionReview {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/** What defaulting and validation handlers receive besides the object. */
export interface AdmissionContext extends WebhookContext {
  request: AdmissionRequest;
}

/** apimachinery's `field.ErrorType`s, as a Status cause's `type`. */
export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError'
  | 'FieldValueTypeInvalid';

/** One invalid field: apimachinery's `field.Error`. Build them with `fieldError.invalid(...)` and friends. */
export interface FieldError {
  type: FieldErrorType;
  /** The field's path, as `spec.replicas` or `spec.containers[0].image`. */
  field: string;
  /** The offending value, shown in the message; leave it out for types that show none. */
  value?: unknown;
  detail?: string;
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
  FieldValueTypeInvalid: 'Invalid value',
};

const SHOWS_VALUE = new Set<FieldErrorType>([
  'FieldValueInvalid',
  'FieldValueTypeInvalid',
  'FieldValueNotSupported',
  'FieldValueNotFound',
  'FieldValueDuplicate',
  'FieldValueTooMany',
]);

/** The text after the field's path, as apimachinery's `ErrorBody()`: `Invalid value: 0: must be at least 1`. */
export function fieldErrorBody(error: FieldError): string {
  let body = TYPE_TEXT[error.type];
  if (SHOWS_VALUE.has(error.type) && 'value' in error) {
    const value = error.value;
    const shown =
      typeof value === 'string'
        ? JSON.stringify(value)
        : typeof value === 'number' || typeof value === 'boolean'
          ? String(value)
          : (JSON.stringify(value) ?? String(value));
    body += `: ${shown}`;
  }
  return error.detail ? `${body}: ${error.detail}` : body;
}

/** Field errors with apimachinery's types and messages: `fieldError.invalid('spec.replicas', 0, 'must be at least 1')`. */
export const fieldError = {
  invalid: (field: string, value: unknown, detail: string): FieldError => ({
    type: 'FieldValueInvalid',
    field,
    value,
    detail,
  }),
  required: (field: string, detail = ''): FieldError => ({ type: 'FieldValueRequired', field, detail }),
  forbidden: (field: string, detail: string): FieldError => ({ type: 'FieldValueForbidden', field, detail }),
  duplicate: (field: string, value: unknown): FieldError => ({ type: 'FieldValueDuplicate', field, value }),
  notFound: (field: string, value: unknown): FieldError => ({ type: 'FieldValueNotFound', field, value }),
  notSupported: (field: string, value: unknown, validValues: string[]): FieldError => ({
    type: 'FieldValueNotSupported',
    field,
    value,
    detail: `supported values: ${validValues.map((v) => JSON.stringify(v)).join(', ')}`,
  }),
  tooLong: (field: string, maxLength: number): FieldError => ({
    type: 'FieldValueTooLong',
    field,
    detail: `may not be more than ${maxLength} bytes`,
  }),
  tooMany: (field: string, actual: number, max: number): FieldError => ({
    type: 'FieldValueTooMany',
    field,
    value: actual,
    detail: `must have at most ${max} items`,
  }),
};

/** Thrown by a validator (or a defaulter): the object is invalid. Answered 422 `Invalid` with the fields as causes. */
export class ValidationError extends Error {
  override readonly name = 'ValidationError';
  readonly errors: FieldError[];
  readonly warnings: string[];
  constructor(errors: FieldError | FieldError[], options: { warnings?: string[] } = {}) {
    const list = Array.isArray(errors) ? errors : [errors];
    super(aggregate(list));
    this.errors = list;
    this.warnings = options.warnings ?? [];
  }
}

/** Thrown by a validator (or a defaulter) to refuse without naming a field. Answered 403 `Forbidden`. */
export class DeniedError extends Error {
  override readonly name = 'DeniedError';
  readonly warnings: string[];
  constructor(message: string, options: { warnings?: string[] } = {}) {
    super(message);
    this.warnings = options.warnings ?? [];
  }
}

/** apimachinery's aggregate: one error as it is, several as `[a, b]`. */
function aggregate(errors: FieldError[]): string {
  const texts = [...new Set(errors.map((e) => `${e.field}: ${fieldErrorBody(e)}`))];
  return texts.length === 1 ? (texts[0] as string) : `[${texts.join(', ')}]`;
}

/** `Kind.group`, or `Kind` for the core group: apimachinery's `GroupKind.String()`. */
function qualifiedKind(group: string, kind: string): string {
  return group ? `${kind}.${group}` : kind;
}

export interface Defaulter<T> {
  /** Sets defaults on `obj` in place (a copy of the request's object). May throw ValidationError or DeniedError. */
  default(obj: T, context: AdmissionContext): void | Promise<void>;
}

export interface ValidationResult {
  warnings?: string[];
}

export interface Validator<T> {
  validateCreate?(obj: T, context: AdmissionContext): ValidationOutcome;
  validateUpdate?(obj: T, old: T, context: AdmissionContext): ValidationOutcome;
  validateDelete?(obj: T, context: AdmissionContext): ValidationOutcome;
}

export type ValidationOutcome = ValidationResult | void | Promise<ValidationResult | void>;

/** The base of both admission webhooks: review checks, answers and failures. */
abstract class AdmissionWebhook<T> implements Webhook {
  readonly review = { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview' };

  constructor(readonly kind: ResourceKind<T>) {}

  protected abstract admit(request: AdmissionRequest, context: AdmissionContext): Promise<AdmissionResponse>;

  async answer(body: Record<string, unknown>, context: WebhookContext): Promise<Answer> {
    const request = body['request'] as AdmissionRequest | undefined;
    if (typeof request !== 'object' || request === null) {
      return badReview(messages.missingRequest('AdmissionReview'));
    }
    if (typeof request.uid !== 'string' || request.uid === '') {
      return badReview(messages.missingUid('AdmissionReview'));
    }
    const fail = (message: string) => ({
      body: this.failure(body, 400, message, 'BadRequest'),
      failure: message,
    });
    const got = request.kind;
    if (got?.kind !== this.kind.kind || got.group !== this.kind.group) {
      return fail(
        messages.wrongKind(
          qualifiedKind(got?.group ?? '', got?.kind ?? '?'),
          qualifiedKind(this.kind.group, this.kind.kind),
        ),
      );
    }
    const logger = context.logger.child(requestFields(request));
    try {
      const response = await this.admit(request, { ...context, logger, request });
      return { body: review(response) };
    } catch (error) {
      if (error instanceof BadRequest) return fail(error.message);
      if (error instanceof ValidationError) return { body: review(this.invalid(request, error)) };
      if (error instanceof DeniedError) {
        return {
          body: review(
            denied(request.uid, { code: 403, reason: 'Forbidden', message: error.message }, error.warnings),
          ),
        };
      }
      const message = messages.handlerFailed(error instanceof Error ? error.message : String(error));
      return { body: this.failure(body, 500, message, 'InternalError'), failure: message, error };
    }
  }

  failure(body: Record<string, unknown>, code: number, message: string, reason?: string): AdmissionReview {
    const request = body['request'] as Partial<AdmissionRequest> | undefined;
    return review(
      denied(typeof request?.uid === 'string' ? request.uid : '', {
        code,
        ...(reason ? { reason } : {}),
        message,
      }),
    );
  }

  private invalid(request: AdmissionRequest, error: ValidationError): AdmissionResponse {
    const name = objectName(request);
    return denied(
      request.uid,
      {
        code: 422,
        reason: 'Invalid',
        message: `${qualifiedKind(this.kind.group, this.kind.kind)} ${JSON.stringify(name)} is invalid: ${error.message}`,
        details: {
          name,
          group: this.kind.group,
          kind: this.kind.kind,
          causes: error.errors.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field })),
        },
      },
      error.warnings,
    );
  }
}

class BadRequest extends Error {}

function badReview(message: string): Answer {
  return {
    status: 400,
    body: review(denied('', { code: 400, reason: 'BadRequest', message })),
    failure: message,
  };
}

function review(response: AdmissionResponse): AdmissionReview {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}

function denied(
  uid: string,
  status: Omit<ReviewStatus, 'status'>,
  warnings: string[] = [],
): AdmissionResponse {
  return {
    uid,
    allowed: false,
    status: { status: 'Failure', ...status },
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}

function allowed(uid: string, warnings: string[] = []): AdmissionResponse {
  return { uid, allowed: true, status: { code: 200 }, ...(warnings.length > 0 ? { warnings } : {}) };
}

function objectName(request: AdmissionRequest): string {
  if (request.name) return request.name;
  const object = (request.object ?? request.oldObject) as {
    metadata?: { name?: string; generateName?: string };
  };
  return object?.metadata?.name ?? object?.metadata?.generateName ?? '';
}

function requestFields(request: AdmissionRequest): Record<string, unknown> {
  return {
    requestID: request.uid,
    operation: request.operation,
    namespace: request.namespace ?? '',
    name: request.name ?? '',
    user: request.userInfo?.username ?? '',
  };
}

function objectOf(request: AdmissionRequest, field: 'object' | 'oldObject'): unknown {
  const value = request[field];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BadRequest(messages.missingObject(field, request.operation));
  }
  return value;
}

class DefaultingWebhook<T> extends AdmissionWebhook<T> {
  constructor(
    kind: ResourceKind<T>,
    private readonly defaulter: Defaulter<T>,
  ) {
    super(kind);
  }

  protected async admit(request: AdmissionRequest, context: AdmissionContext): Promise<AdmissionResponse> {
    // As controller-runtime: nothing to default on DELETE (there is no object) or CONNECT.
    if (request.operation === 'DELETE' || request.operation === 'CONNECT') return allowed(request.uid);
    const original = objectOf(request, 'object') as JsonValue;
    const obj = deepCopy(original);
    await this.defaulter.default(obj as T, context);
    // The JSON round trip drops what would not be sent: undefined values, functions.
    const defaulted = JSON.parse(JSON.stringify(obj)) as JsonValue;
    const patch = createPatch(original, defaulted);
    if (patch.length === 0) return allowed(request.uid);
    return {
      ...allowed(request.uid),
      patchType: 'JSONPatch',
      patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
    };
  }
}

class ValidatingWebhook<T> extends AdmissionWebhook<T> {
  constructor(
    kind: ResourceKind<T>,
    private readonly validator: Validator<T>,
  ) {
    super(kind);
  }

  protected async admit(request: AdmissionRequest, context: AdmissionContext): Promise<AdmissionResponse> {
    const v = this.validator;
    let result: ValidationResult | void;
    switch (request.operation) {
      case 'CREATE':
        result = await v.validateCreate?.(objectOf(request, 'object') as T, context);
        break;
      case 'UPDATE':
        result = await v.validateUpdate?.(
          objectOf(request, 'object') as T,
          objectOf(request, 'oldObject') as T,
          context,
        );
        break;
      case 'DELETE':
        result = await v.validateDelete?.(objectOf(request, 'oldObject') as T, context);
        break;
      case 'CONNECT':
        result = undefined;
        break;
      default:
        throw new BadRequest(messages.unknownOperation(String(request.operation)));
    }
    return allowed(request.uid, result?.warnings ?? []);
  }
}

/** A mutating webhook that defaults objects of `kind`: register it at `mutatePath(kind)`. */
export function defaulting<T>(kind: ResourceKind<T>, defaulter: Defaulter<T>): Webhook {
  return new DefaultingWebhook(kind, defaulter);
}

/** A validating webhook for objects of `kind`: register it at `validatePath(kind)`. */
export function validating<T>(kind: ResourceKind<T>, validator: Validator<T>): Webhook {
  return new ValidatingWebhook(kind, validator);
}
