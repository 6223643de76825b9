/**
 * Prometheus metrics with controller-runtime's series names, in the text exposition format. Small on
 * purpose: counters, gauges and a histogram are all an operator's /metrics needs.
 */
type Labels = Record<string, string>;

function labelText(labels: Labels): string {
  const entries = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1));
  if (entries.length === 0) return '';
  return `{${entries.map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
}

interface Series {
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  values: Map<string, number>;
  buckets?: number[];
}

export class Metrics {
  private readonly series = new Map<string, Series>();

  private get(name: string, help: string, type: Series['type'], buckets?: number[]): Series {
    let series = this.series.get(name);
    if (!series) {
      series = { help, type, values: new Map(), ...(buckets ? { buckets } : {}) };
      this.series.set(name, series);
    }
    return series;
  }

  inc(name: string, help: string, labels: Labels = {}, by = 1): void {
    const series = this.get(name, help, 'counter');
    const key = labelText(labels);
    series.values.set(key, (series.values.get(key) ?? 0) + by);
  }

  set(name: string, help: string, labels: Labels, value: number): void {
    this.get(name, help, 'gauge').values.set(labelText(labels), value);
  }

  observe(name: string, help: string, labels: Labels, value: number, buckets: number[]): void {
    const series = this.get(name, help, 'histogram', buckets);
    for (const bound of [...buckets, Infinity]) {
      if (value <= bound) {
        const key = labelText({ ...labels, le: bound === Infinity ? '+Inf' : String(bound) });
        series.values.set(key, (series.values.get(key) ?? 0) + 1);
      }
    }
    const sum = `_sum${labelText(labels)}`;
    const count = `_count${labelText(labels)}`;
    series.values.set(sum, (series.values.get(sum) ?? 0) + value);
    series.values.set(count, (series.values.get(count) ?? 0) + 1);
  }

  /** The value of one series, for tests and probes. */
  value(name: string, labels: Labels = {}): number | undefined {
    return this.series.get(name)?.values.get(labelText(labels));
  }

  render(): string {
    const lines: string[] = [];
    for (const [name, series] of [...this.series].sort(([a], [b]) => (a < b ? -1 : 1))) {
      lines.push(`# HELP ${name} ${series.help}`, `# TYPE ${name} ${series.type}`);
      for (const [key, value] of series.values) {
        if (series.type === 'histogram') {
          if (key.startsWith('_sum') || key.startsWith('_count')) {
            const suffix = key.startsWith('_sum') ? '_sum' : '_count';
            lines.push(`${name}${suffix}${key.slice(suffix.length)} ${value}`);
          } else lines.push(`${name}_bucket${key} ${value}`);
        } else lines.push(`${name}${key} ${value}`);
      }
    }
    return `${lines.join('\n')}\n`;
  }
}

export const RECONCILE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
