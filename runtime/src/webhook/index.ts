/**
 * Webhooks: admission (defaulting and validation) and conversion, served over TLS by the WebhookServer.
 * The counterpart of controller-runtime's `pkg/webhook`.
 */
export {
  DEFAULT_WEBHOOK_PORT,
  FORWARD_SECRET_CIPHERS,
  WebhookServer,
  type WebhookServerOptions,
} from './server.js';
export type { Answer, Webhook, WebhookContext } from './webhook.js';
export {
  ADMISSION_API_VERSION,
  DeniedError,
  ValidationError,
  defaulting,
  fieldError,
  fieldErrorBody,
  validating,
  type AdmissionContext,
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionReview,
  type Defaulter,
  type FieldError,
  type FieldErrorType,
  type Operation,
  type ReviewStatus,
  type ValidationOutcome,
  type ValidationResult,
  type Validator,
} from './admission.js';
export {
  CONVERSION_API_VERSION,
  ConversionWebhook,
  conversion,
  convertible,
  registerConversion,
  type ConversionRequest,
  type ConversionResponse,
  type ConversionReview,
  type Convertible,
} from './conversion.js';
export { CONVERT_PATH, mutatePath, validatePath } from './paths.js';
export {
  SELF_SIGNED_CERTIFICATE_KINDS,
  SelfSignedCertificates,
  type RotationFigures,
  type SelfSignedCertificatesOptions,
} from './self-signed.js';
