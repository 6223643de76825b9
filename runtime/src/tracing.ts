/**
 * OpenTelemetry spans of the runtime: one per reconcile, per request of the HttpClient and per webhook
 * request, through `@opentelemetry/api`, an optional peer dependency. The package is loaded only when the
 * manager's `tracing` option turns tracing on: without it nothing of OpenTelemetry is loaded and every
 * hook below is a check of `undefined`. Every call into OpenTelemetry is an exception boundary: a tracer,
 * span processor or exporter that throws costs its span, never a reconcile, a request or a review.
 *
 * The reconcile's span is made the active span of OpenTelemetry's context while the reconciler runs, and
 * an API call's span is a child of the active span: the calls a reconciler makes through `mgr.client`
 * become children of its reconcile span when a context manager is registered (the OpenTelemetry Node SDK
 * registers its AsyncLocalStorage one). The runtime makes no AsyncLocalStorage of its own: on Node 20 one
 * slows every promise of the process once used (about 1 us per reconcile of 4 awaits, measured), a cost a
 * process that exports no traces should not pay.
 */
import type * as Otel from '@opentelemetry/api';
import type { Logger } from './logger.js';

// node:module as `require` takes it, without building its ES face (see internal/node-modules.ts).
const { createRequire } = process.getBuiltinModule('node:module');

/** An OpenTelemetry TracerProvider (`@opentelemetry/api`'s, typed here so the runtime's types need no peer). */
export interface TracerProviderLike {
  getTracer(name: string, version?: string): unknown;
}

/**
 * The manager's `tracing` option: OpenTelemetry spans for reconciles, API calls and webhook requests.
 * `withDefaults` (options.ts) applies the defaults.
 */
export interface TracingOptions {
  /**
   * Make spans. Default: true when `tracerProvider` is given, else false (and `@opentelemetry/api` is not
   * even loaded). `true` without a provider uses the global one (`trace.setGlobalTracerProvider`, what the
   * OpenTelemetry Node SDK's `start()` registers).
   */
  enabled?: boolean;
  /** The provider whose tracer makes the spans. Default: the global provider of `@opentelemetry/api`. */
  tracerProvider?: TracerProviderLike;
}

/** The tracer's name and the prefix of the runtime's own span attributes. */
export const TRACER_NAME = '@kubesmith/runtime';

type Attributes = Record<string, string | number | boolean | undefined>;

/** A span being made: attributes to add, and its end. Never throws. */
export interface SpanHandle {
  set(attributes: Attributes): void;
  /** Marks the span failed: status ERROR with the error's message, and `error.type`. */
  fail(error: unknown, errorType?: string): void;
  /** Ends the span; with `error`, marks it failed first. */
  end(error?: unknown, errorType?: string): void;
}

const require = createRequire(import.meta.url);

/** `@opentelemetry/api`, or undefined when it cannot be loaded. */
function loadApi(): typeof Otel | undefined {
  try {
    return require('@opentelemetry/api') as typeof Otel;
  } catch {
    return undefined;
  }
}

/**
 * The tracer the manager hands its components, or undefined when tracing is off (or
 * `@opentelemetry/api` cannot be loaded: then a warning says so, once).
 */
export function createTracing(
  options: { enabled: boolean; tracerProvider: TracerProviderLike | undefined },
  logger: Logger,
): Tracing | undefined {
  if (!options.enabled) return undefined;
  const api = loadApi();
  if (!api) {
    logger.warn(
      'tracing is enabled but @opentelemetry/api cannot be loaded: no spans are made\n' +
        'hint: npm install @opentelemetry/api (and an SDK to export the spans), or turn tracing off',
    );
    return undefined;
  }
  try {
    const provider =
      (options.tracerProvider as Otel.TracerProvider | undefined) ?? api.trace.getTracerProvider();
    return new Tracing(api, provider.getTracer(TRACER_NAME), logger);
  } catch (error) {
    logger.error('tracing is enabled but its tracer cannot be made: no spans are made', { error });
    return undefined;
  }
}

export class Tracing {
  /** The first failure of OpenTelemetry is logged; later ones only cost their spans (no line per span). */
  private failed = false;

  private readonly api: typeof Otel;
  private readonly tracer: Otel.Tracer;

  /** `api` is `@opentelemetry/api`, `tracer` one of its Tracers (untyped here: the peer is optional). */
  constructor(
    api: unknown,
    tracer: unknown,
    private readonly logger: Logger,
  ) {
    this.api = api as typeof Otel;
    this.tracer = tracer as Otel.Tracer;
  }

  /**
   * Runs `fn` (a reconcile, a webhook request) inside a new root span `name` with `attributes`, the
   * active span of OpenTelemetry's context while it runs. The caller ends the span it returns.
   */
  inSpan<T>(
    name: string,
    attributes: Attributes,
    fn: (span: SpanHandle) => Promise<T>,
    kind: 'internal' | 'server' = 'internal',
  ): { span: SpanHandle; running: Promise<T> } {
    const api = this.api;
    const span = this.start(name, attributes, kind, api.ROOT_CONTEXT);
    // No span to be the parent of others (the global provider without an SDK): no context to carry.
    if (!span.otel) return { span, running: fn(span) };
    let ran = false;
    try {
      const active = api.trace.setSpan(api.ROOT_CONTEXT, span.otel);
      return {
        span,
        running: api.context.with(active, () => {
          ran = true;
          return fn(span);
        }),
      };
    } catch (error) {
      if (ran) throw error;
      this.fail(error);
      return { span, running: fn(span) };
    }
  }

  /** A span `name`, child of the active span (an API call's, within its reconcile's). */
  child(name: string, attributes: Attributes, kind: 'client' | 'server' = 'client'): SpanHandle {
    let parent: Otel.Context;
    try {
      parent = this.api.context.active();
    } catch (error) {
      this.fail(error);
      parent = this.api.ROOT_CONTEXT;
    }
    return this.start(name, attributes, kind, parent);
  }

  private start(
    name: string,
    attributes: Attributes,
    kind: 'internal' | 'client' | 'server',
    parent: Otel.Context,
  ): SpanHandle & { otel?: Otel.Span } {
    let span: Otel.Span;
    try {
      const options = { kind: SPAN_KINDS[kind], attributes: defined(attributes) };
      span = this.tracer.startSpan(name, options, parent);
      // A span of the no-op provider (none registered): nothing to record, and no trace to carry on.
      // A span a sampler dropped has a valid context still: its children must know they are dropped too.
      if (!span.isRecording() && !this.api.trace.isSpanContextValid(span.spanContext())) return NO_SPAN;
    } catch (error) {
      this.fail(error);
      return NO_SPAN;
    }
    const handle: SpanHandle & { otel: Otel.Span } = {
      otel: span,
      set: (more) => {
        try {
          span.setAttributes(defined(more));
        } catch (error) {
          this.fail(error);
        }
      },
      fail: (error, errorType) => {
        try {
          const message = error instanceof Error ? error.message : String(error);
          span.setAttribute('error.type', errorType ?? (error instanceof Error ? error.name : 'Error'));
          span.setStatus({ code: this.api.SpanStatusCode.ERROR, message });
        } catch (failure) {
          this.fail(failure);
        }
      },
      end: (error, errorType) => {
        if (error !== undefined) handle.fail(error, errorType);
        try {
          span.end();
        } catch (failure) {
          this.fail(failure);
        }
      },
    };
    return handle;
  }

  private fail(error: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.logger.error('tracing failed: the span is dropped (further failures are not logged)', { error });
  }
}

const NO_SPAN: SpanHandle = { set: () => {}, fail: () => {}, end: () => {} };

/** `@opentelemetry/api`'s SpanKind values (an enum of the package, not loaded until tracing is on). */
const SPAN_KINDS = { internal: 0, server: 1, client: 2 } as Record<string, Otel.SpanKind>;

/** `attributes` without the undefined ones (OpenTelemetry drops them with a diagnostic). */
function defined(attributes: Attributes): Otel.Attributes {
  const out: Otel.Attributes = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}
