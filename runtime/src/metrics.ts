/**
 * Prometheus metrics through prom-client, with controller-runtime's series names. Each Manager has its own
 * `Metrics` and so its own prom-client `Registry` (two managers in one process do not clash); users
 * register their metrics on `mgr.metrics.registry` and /metrics serves them with the runtime's:
 *
 * ```ts
 * const synced = new Counter({ name: 'widgets_synced_total', help: '...', registers: [mgr.metrics.registry] });
 * ```
 *
 * The process metrics prom-client collects (`process_cpu_seconds_total`, `nodejs_heap_size_used_bytes`
 * ...) are the process's, not a manager's: they live once per process, in `processRegistry()`, and every
 * manager's /metrics adds them.
 */
import type * as PromClient from 'prom-client';
import type { Counter, Gauge, Histogram, LabelValues, Metric, Registry } from 'prom-client';

// node:module as `require` takes it, without building its ES face (see internal/node-modules.ts).
const { createRequire } = process.getBuiltinModule('node:module');

/** The parts of prom-client a manager's registry uses. */
interface PromClientCore {
  Registry: typeof PromClient.Registry;
  Counter: typeof PromClient.Counter;
  Gauge: typeof PromClient.Gauge;
  Histogram: typeof PromClient.Histogram;
}

let promClientModule: PromClientCore | undefined;

/**
 * prom-client's registry and metric classes, required when the first registry is made (a manager's), not
 * when the runtime is imported: each from its own file, not through prom-client's index, which also
 * loads its default metrics, Pushgateway and cluster aggregation (100 to 300 ms of a manager's start on a
 * busy machine; the default metrics load at the first scrape, processRegistry()). It is CommonJS, so a
 * user's `import { Counter } from 'prom-client'` gets these same classes (the same files).
 */
function promClient(): PromClientCore {
  if (!promClientModule) {
    const require = createRequire(import.meta.url);
    promClientModule = {
      Registry: require('prom-client/lib/registry') as typeof PromClient.Registry,
      Counter: require('prom-client/lib/counter') as typeof PromClient.Counter,
      Gauge: require('prom-client/lib/gauge') as typeof PromClient.Gauge,
      Histogram: require('prom-client/lib/histogram') as typeof PromClient.Histogram,
    };
  }
  return promClientModule;
}

type Labels = Record<string, string>;

/** A counter series bound to its labels (`Metrics.boundCounter`). */
export interface BoundCounter {
  inc(by?: number): void;
}

/** A gauge series bound to its labels (`Metrics.boundGauge`). */
export interface BoundGauge {
  set(value: number): void;
  inc(by?: number): void;
}

/** A histogram series bound to its labels (`Metrics.boundHistogram`). */
export interface BoundHistogram {
  observe(value: number): void;
}

/**
 * How prom-client 15 keeps one series of a histogram (`histogram.hashMap[hash]`): the count of each
 * bucket by its upper bound (not cumulative; a value above every bound counts in `count` only), the sum
 * and the count. Not part of prom-client's typed API: boundHistogram checks it is there, and its test
 * compares the text output with prom-client's own `observe`.
 */
interface HistogramSeries {
  labels: Labels;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}

interface Pending {
  value: number;
  flush(): void;
}

/** controller-runtime's buckets of reconcile and work-queue durations, in seconds. */
export const RECONCILE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class Metrics {
  private made: Registry | undefined;
  /**
   * The runtime's own series declared before the registry was made (a manager's controllers and cache
   * declare theirs as they are built), declared on it when it is made.
   */
  private readonly deferred: (() => void)[] = [];

  /**
   * With no `registry`, this Metrics makes its own when it is first needed: the first scrape, or your
   * first use of `registry` or of a method that reads or writes a series. Loading prom-client and making
   * the series is then off a manager's start to synced caches (about 10 ms of it).
   */
  constructor(registry?: Registry) {
    this.made = registry;
  }

  /** The prom-client registry /metrics serves: register your own metrics on it. */
  get registry(): Registry {
    if (this.made === undefined) {
      this.made = new (promClient().Registry)();
      for (const declare of this.deferred.splice(0)) declare();
    }
    return this.made;
  }

  /** Runs `declare` now when the registry is made, else once it is (in the order of the calls). */
  private whenMade(declare: () => void): void {
    if (this.made === undefined) this.deferred.push(declare);
    else declare();
  }

  /** The counter `name`, created on first use with these label names. */
  counter(name: string, help: string, labelNames: readonly string[] = []): Counter<string> {
    return this.metric(
      name,
      promClient().Counter,
      () =>
        new (promClient().Counter)({
          name,
          help,
          labelNames,
          registers: [this.registry],
          collect: () => this.flush(name),
        }),
    );
  }

  /** The gauge `name`, created on first use with these label names. */
  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge<string> {
    return this.metric(
      name,
      promClient().Gauge,
      () =>
        new (promClient().Gauge)({
          name,
          help,
          labelNames,
          registers: [this.registry],
          collect: () => this.flush(name),
        }),
    );
  }

  /** The histogram `name`, created on first use with these label names and buckets. */
  histogram(
    name: string,
    help: string,
    labelNames: readonly string[] = [],
    buckets: readonly number[] = RECONCILE_BUCKETS,
  ): Histogram<string> {
    return this.metric(
      name,
      promClient().Histogram,
      () =>
        new (promClient().Histogram)({
          name,
          help,
          labelNames,
          buckets: [...buckets],
          registers: [this.registry],
          collect: () => this.flush(name),
        }),
    );
  }

  /**
   * One series of the counter `name`, bound to `labels`, for hot paths: `inc()` adds to a plain number,
   * which the counter takes up when it is read (a scrape of /metrics, or `value()`). prom-client hashes
   * the labels on every update of its own (about 180 ns); the work queue and the reconcile loop update
   * several series per reconcile. The series exists, at 0, from the start.
   */
  boundCounter(name: string, help: string, labels: Labels): BoundCounter {
    let counter: Counter<string> | undefined;
    const series: BoundCounter & Pending = {
      value: 0,
      // Called when the counter is read: the registry, and so the counter, exists.
      flush: () => {
        if (series.value === 0 || counter === undefined) return;
        counter.inc(labels, series.value);
        series.value = 0;
      },
      inc: (by = 1) => {
        series.value += by;
      },
    };
    this.whenMade(() => {
      counter = this.counter(name, help, Object.keys(labels));
      counter.inc(labels, 0);
    });
    this.pendingOf(name).push(series);
    return series;
  }

  /** One series of the gauge `name`, bound to `labels`, set as a plain number (see boundCounter). */
  boundGauge(name: string, help: string, labels: Labels, initial = 0): BoundGauge {
    let gauge: Gauge<string> | undefined;
    const series: BoundGauge & Pending = {
      value: initial,
      flush: () => gauge?.set(labels, series.value),
      set: (value) => {
        series.value = value;
      },
      inc: (by = 1) => {
        series.value += by;
      },
    };
    this.whenMade(() => {
      gauge = this.gauge(name, help, Object.keys(labels));
      series.flush();
    });
    this.pendingOf(name).push(series);
    return series;
  }

  /**
   * One series of the histogram `name`, bound to `labels` (see boundCounter): `observe()` counts in a
   * plain array, which the histogram takes up when it is read. prom-client hashes and validates the
   * labels on every `observe` (about 300 ns); the controller observes two histograms per reconcile. The
   * series appears with its first observation, as with `observe`. `buckets` must be the histogram's.
   */
  boundHistogram(
    name: string,
    help: string,
    labels: Labels,
    buckets: readonly number[] = RECONCILE_BUCKETS,
  ): BoundHistogram {
    let histogram: Histogram<string> | undefined;
    const bounds = Float64Array.from(buckets);
    const counts = new Float64Array(bounds.length);
    let sum = 0;
    let count = 0;
    const series: BoundHistogram & Pending = {
      value: 0,
      flush: () => {
        if (count === 0 || histogram === undefined) return;
        const target = histogramSeries(histogram, name, labels);
        for (let i = 0; i < bounds.length; i++) target.bucketValues[String(bounds[i])]! += counts[i]!;
        target.sum += sum;
        target.count += count;
        counts.fill(0);
        sum = 0;
        count = 0;
      },
      observe: (value) => {
        if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
        let i = 0;
        while (i < bounds.length && value > bounds[i]!) i++;
        if (i < bounds.length) counts[i]!++;
        sum += value;
        count++;
      },
    };
    this.whenMade(() => {
      histogram = this.histogram(name, help, Object.keys(labels), buckets);
    });
    this.pendingOf(name).push(series);
    return series;
  }

  /**
   * The gauge `name`, whose series `collect` sets each time it is read (a scrape, or `value()`): for
   * figures that cost something to compute and matter only when read, such as the objects and bytes of
   * each informer. Series `collect` no longer sets disappear.
   */
  collectedGauge(
    name: string,
    help: string,
    labelNames: readonly string[],
    collect: (set: (labels: Labels, value: number) => void) => void,
  ): void {
    this.whenMade(() =>
      this.metric(
        name,
        promClient().Gauge,
        () =>
          new (promClient().Gauge)({
            name,
            help,
            labelNames,
            registers: [this.registry],
            collect() {
              this.reset();
              collect((labels, value) => this.set(labels, value));
            },
          }),
      ),
    );
  }

  private readonly pending = new Map<string, Pending[]>();

  private pendingOf(name: string): Pending[] {
    let list = this.pending.get(name);
    if (!list) {
      list = [];
      this.pending.set(name, list);
    }
    return list;
  }

  private flush(name: string): void {
    for (const series of this.pending.get(name) ?? []) series.flush();
  }

  private metric<M extends Metric<string>>(
    name: string,
    type: abstract new (...args: never[]) => M,
    create: () => M,
  ): M {
    const existing = this.registry.getSingleMetric(name);
    if (existing === undefined) return create();
    if (!(existing instanceof type)) throw new Error(`metric ${name} is registered with another type`);
    return existing;
  }

  /** Adds `by` (default 1) to the counter `name` at `labels`; `by` 0 makes the series appear. */
  inc(name: string, help: string, labels: Labels = {}, by = 1): void {
    const sorted = sortedLabels(labels);
    this.counter(name, help, Object.keys(sorted)).inc(sorted, by);
  }

  set(name: string, help: string, labels: Labels, value: number): void {
    const sorted = sortedLabels(labels);
    this.gauge(name, help, Object.keys(sorted)).set(sorted, value);
  }

  observe(name: string, help: string, labels: Labels, value: number, buckets: readonly number[]): void {
    const sorted = sortedLabels(labels);
    this.histogram(name, help, Object.keys(sorted), buckets).observe(sorted, value);
  }

  /**
   * The value of a counter or gauge; for a histogram the count of observations, or with an `le` label the
   * count of its bucket (`'+Inf'`: all). For tests and probes.
   */
  async value(name: string, labels: Labels = {}): Promise<number | undefined> {
    const metric = this.registry.getSingleMetric(name);
    if (metric === undefined) return undefined;
    const values = (await metric.get()).values as {
      value: number;
      labels: LabelValues<string>;
      metricName?: string;
    }[];
    if (!(metric instanceof promClient().Histogram))
      return values.find((v) => sameLabels(v.labels, labels))?.value;
    const { le, ...rest } = labels;
    const wanted =
      le === undefined || le === '+Inf'
        ? values.find((v) => v.metricName === `${name}_count` && sameLabels(v.labels, rest))
        : values.find(
            (v) =>
              v.metricName === `${name}_bucket` &&
              String(v.labels['le']) === le &&
              sameLabels(v.labels, rest, 'le'),
          );
    return wanted?.value;
  }

  /** This registry's series in the Prometheus text format. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * prom-client's series of `histogram` with exactly `labels`, made (at zero) when it has none yet. Throws
 * when prom-client does not keep its series as version 15 does: /metrics then fails loudly rather than
 * serve wrong figures.
 */
function histogramSeries(histogram: Histogram<string>, name: string, labels: Labels): HistogramSeries {
  const internal = histogram as unknown as { hashMap?: Record<string, HistogramSeries> };
  const find = () =>
    Object.values(internal.hashMap ?? {}).find((series) => sameLabels(series.labels ?? {}, labels));
  if (find() === undefined) histogram.zero(labels);
  const series = find();
  if (
    series === undefined ||
    typeof series.sum !== 'number' ||
    typeof series.count !== 'number' ||
    typeof series.bucketValues !== 'object'
  ) {
    throw new Error(
      `cannot add the observations of ${name} to prom-client's histogram: ` +
        'its series are not laid out as prom-client 15 lays them out',
    );
  }
  return series;
}

/** prom-client writes labels in the order of their object's keys: sorted, the text is stable. */
function sortedLabels(labels: Labels): Labels {
  const sorted: Labels = {};
  for (const key of Object.keys(labels).sort()) sorted[key] = labels[key]!;
  return sorted;
}

function sameLabels(actual: LabelValues<string>, wanted: Labels, ignore?: string): boolean {
  const keys = Object.keys(actual).filter((key) => key !== ignore);
  return (
    keys.length === Object.keys(wanted).length && keys.every((key) => String(actual[key]) === wanted[key])
  );
}

let processMetrics: Registry | undefined;

/** prom-client's process and Node.js metrics, collected once per process (on first use). */
export function processRegistry(): Registry {
  if (!processMetrics) {
    const ProcessRegistry = promClient().Registry;
    const collectDefaultMetrics = createRequire(import.meta.url)(
      'prom-client/lib/defaultMetrics',
    ) as typeof PromClient.collectDefaultMetrics;
    processMetrics = new ProcessRegistry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}
