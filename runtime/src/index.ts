/** @kubesmith/runtime: what kubesmith operators run on, the counterpart of controller-runtime. */
export type {
  Condition,
  Duration,
  int32,
  int64,
  IntOrString,
  KubernetesObject,
  MicroTime,
  ObjectMeta,
  Quantity,
  RawExtension,
  Time,
} from './types.js';
export { groupVersion, resourceKind, objectKey, type GroupVersion, type ResourceKind } from './kinds.js';
export {
  ApiError,
  isAlreadyExists,
  isConflict,
  isLeadershipLost,
  isNotFound,
  isRequestTimeout,
  LeadershipLostError,
  RequestTimeoutError,
  type Status,
} from './errors.js';
export {
  DEFAULT_REQUEST_TIMEOUT_MS,
  HttpClient,
  requestUrl,
  resourcePath,
  type ApplyOptions,
  type Client,
  type ClientOptions,
  type DeleteOptions,
  type GetOptions,
  type HttpClientOptions,
  type IndexLookup,
  type ListOptions,
  type PatchOptions,
  type PatchType,
  type Reader,
  type RequestOptions,
} from './client.js';
export {
  DEFAULT_BACKOFF,
  DEFAULT_RETRY,
  onError,
  retryOnConflict,
  type Backoff,
  type RetryOptions,
} from './retry.js';
export type { Request, Result, Reconciler, ReconcileContext } from './reconcile.js';
export {
  WorkQueue,
  ExponentialRateLimiter,
  BucketRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
  LOW_PRIORITY,
  type AddOptions,
  type RateLimiter,
} from './queue.js';
export {
  InformerCache,
  reflectorInformerFactory,
  type Informer,
  type InformerFactory,
  type InformerOptions,
  type KindSelector,
  type CacheOptions,
  type InformerCacheConfig,
  type InformerChoice,
  type InformerFactoryConfig,
  type InformerStats,
} from './cache.js';
export type { IndexFunction } from './internal/field-index.js';
export { Controller, type ControllerDefaults, type MapFunction } from './controller.js';
export {
  controllerManagedBy,
  requestsForOwner,
  type Builder,
  type BuilderOptions,
  type WatchOptions,
  type ControllerHost,
} from './builder.js';
export {
  and,
  annotationChangedPredicate,
  generationChangedPredicate,
  labelChangedPredicate,
  or,
  type Predicate,
  type WatchEvent,
} from './predicate.js';
export {
  EventKind,
  newEventRecorder,
  type Event,
  type EventRecorder,
  type EventRecorderOptions,
  type EventType,
  type ObjectReference,
} from './events.js';
export { Manager, parseBindAddress } from './manager.js';
export {
  KubeconfigError,
  loadInClusterConfig,
  loadKubeConfig,
  RestConfig,
  SERVICE_ACCOUNT_DIR,
  TOKEN_FILE_REFRESH_MS,
  type ClusterAccess,
  type ConnectionSettings,
  type LoadKubeConfigOptions,
} from './kubeconfig.js';
export {
  DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS,
  metricsConfig,
  webhookServerConfig,
  withDefaults,
  type ManagerConfig,
  type ManagerOptions,
  type MetricsConfig,
  type WebhookServerConfig,
} from './options.js';
export type { MetricsOptions, MetricsServingOptions } from './metrics-server.js';
export { TRACER_NAME, type TracerProviderLike, type TracingOptions } from './tracing.js';
export {
  LeaderElector,
  LeaseKind,
  type Lease,
  type LeaderElectionOptions,
  type LeaderElectorOptions,
} from './leaderelection.js';
export {
  addFinalizer,
  containsFinalizer,
  findCondition,
  removeFinalizer,
  setCondition,
  setControllerReference,
  type NewCondition,
} from './helpers.js';
export {
  createLogger,
  logFormat,
  type Fields,
  type JsonLoggerOptions,
  type Logger,
  type Level,
  type LogFormat,
} from './logger.js';
export {
  Metrics,
  processRegistry,
  RECONCILE_BUCKETS,
  type BoundCounter,
  type BoundGauge,
  type BoundHistogram,
} from './metrics.js';
export { realClock, type Clock } from './clock.js';
export * from './webhook/index.js';
export { makeServingCertificates, type ServingCertificates } from './serving-certificates.js';
