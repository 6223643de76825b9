/**
 * @kubesmith/runtime/testing: test doubles for unit tests of reconcilers and controllers, without an API
 * server: an in-memory Client (FakeClient), an informer fed by hand (ManualInformer), an event recorder
 * that keeps what it is given (FakeRecorder), a reconcile context (reconcileContext), and the RFC 6902
 * JSON patch applier they use (applyJsonPatch). Tests against a real API server use
 * @kubesmith/runtime/envtest.
 */
export { FakeClient, type FakeClientOptions } from './fake-client.js';
export { ManualInformer } from './informer.js';
export { FakeRecorder, type RecordedEvent } from './recorder.js';
export { reconcileContext } from './context.js';
export { applyJsonPatch, JsonPatchError, type JsonPatchOperation } from './jsonpatch.js';
