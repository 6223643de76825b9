/**
 * Prometheus metrics with controller-runtime's series names, in the text exposition format. Small on
 * purpose: counters, gauges and histograms are all an operator's /metrics needs. Every reconcile updates
 * several series, so label sets are turned into their text once and cached, never per update.
 */
type Labels = Record<string, string>;

function labelText(labels: Labels): string {
  const entries = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1));
  if (entries.length === 0) return '';
  return `{${entries.map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
}

interface Histogram {
  labels: Labels;
  counts: number[];
  sum: number;
  count: number;
}

interface Series {
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  /** Counters and gauges: label text -> value. */
  values: Map<string, number>;
  /** Histograms: label text -> buckets. */
  histograms: Map<string, Histogram>;
  buckets: number[];
}

export class Metrics {
  private readonly series = new Map<string, Series>();
  /** Label sets seen before, by a cheap key, with their text. */
  private readonly labelCache = new Map<string, string>();

  private get(name: string, help: string, type: Series['type'], buckets: number[] = []): Series {
    let series = this.series.get(name);
    if (!series) {
      series = { help, type, values: new Map(), histograms: new Map(), buckets };
      this.series.set(name, series);
    }
    return series;
  }

  private text(labels: Labels): string {
    let key = '';
    for (const name in labels) key += `${name}\u0000${labels[name]}\u0001`;
    let text = this.labelCache.get(key);
    if (text === undefined) {
      text = labelText(labels);
      this.labelCache.set(key, text);
    }
    return text;
  }

  inc(name: string, help: string, labels: Labels = {}, by = 1): void {
    const series = this.get(name, help, 'counter');
    const key = this.text(labels);
    series.values.set(key, (series.values.get(key) ?? 0) + by);
  }

  set(name: string, help: string, labels: Labels, value: number): void {
    this.get(name, help, 'gauge').values.set(this.text(labels), value);
  }

  observe(name: string, help: string, labels: Labels, value: number, buckets: number[]): void {
    const series = this.get(name, help, 'histogram', buckets);
    const key = this.text(labels);
    let histogram = series.histograms.get(key);
    if (!histogram) {
      histogram = { labels, counts: series.buckets.map(() => 0), sum: 0, count: 0 };
      series.histograms.set(key, histogram);
    }
    for (let i = 0; i < series.buckets.length; i++) if (value <= series.buckets[i]!) histogram.counts[i]!++;
    histogram.sum += value;
    histogram.count++;
  }

  /**
   * The value of a counter or gauge; for a histogram the count of observations, or with an `le` label the
   * count of its bucket. For tests and probes.
   */
  value(name: string, labels: Labels = {}): number | undefined {
    const series = this.series.get(name);
    if (series?.type !== 'histogram') return series?.values.get(labelText(labels));
    const { le, ...rest } = labels;
    const histogram = series.histograms.get(labelText(rest));
    if (!histogram || le === undefined || le === '+Inf') return histogram?.count;
    const index = series.buckets.findIndex((bound) => String(bound) === le);
    return index < 0 ? undefined : histogram.counts[index];
  }

  render(): string {
    const lines: string[] = [];
    for (const [name, series] of [...this.series].sort(([a], [b]) => (a < b ? -1 : 1))) {
      lines.push(`# HELP ${name} ${series.help}`, `# TYPE ${name} ${series.type}`);
      for (const [key, value] of series.values) lines.push(`${name}${key} ${value}`);
      for (const [key, histogram] of series.histograms) {
        series.buckets.forEach((bound, i) => {
          const le = labelText({ ...histogram.labels, le: String(bound) });
          lines.push(`${name}_bucket${le} ${histogram.counts[i]}`);
        });
        lines.push(`${name}_bucket${labelText({ ...histogram.labels, le: '+Inf' })} ${histogram.count}`);
        lines.push(`${name}_sum${key} ${histogram.sum}`, `${name}_count${key} ${histogram.count}`);
      }
    }
    return `${lines.join('\n')}\n`;
  }
}

export const RECONCILE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
