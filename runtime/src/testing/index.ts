/**
 * @kubesmith/runtime/testing: test doubles for unit tests of reconcilers and controllers, without an API
 * server: an in-memory Client (FakeClient), an informer fed by hand (ManualInformer), an event recorder
 * that keeps what it is given (FakeRecorder), a reconcile context (reconcileContext), and the RFC 6902
 * JSON patch applier they use (applyJsonPatch); and validate(), the API server's verdict on an object
 * against its CRD (schema and CEL rules), whose engine loads only when it is called. Tests against a real
 * API server use @kubesmith/runtime/envtest.
 */
export { FakeClient, type FakeClientOptions } from './fake-client.js';
export { ManualInformer } from './informer.js';
export { FakeRecorder, type RecordedEvent } from './recorder.js';
export { reconcileContext } from './context.js';
export { applyJsonPatch, JsonPatchError, type JsonPatchOperation } from './jsonpatch.js';
export {
  Crds,
  loadCrds,
  validate,
  type FieldCause,
  type ValidateOptions,
  type Validation,
} from './validate.js';
