import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Metrics, processRegistry } from '../src/metrics.js';

describe('Metrics', () => {
  it('renders counters, gauges and histograms in the Prometheus text format, through prom-client', async () => {
    const metrics = new Metrics();
    metrics.inc('reconcile_total', 'Reconciles.', { controller: 'g', result: 'success' });
    metrics.inc('reconcile_total', 'Reconciles.', { result: 'success', controller: 'g' }, 2);
    metrics.set('depth', 'Depth.', { name: 'g' }, 4);
    metrics.observe('time_seconds', 'Time.', { controller: 'g' }, 0.02, [0.01, 0.05]);
    metrics.observe('time_seconds', 'Time.', { controller: 'g' }, 3, [0.01, 0.05]);
    expect(await metrics.render()).toBe(
      [
        '# HELP reconcile_total Reconciles.',
        '# TYPE reconcile_total counter',
        'reconcile_total{controller="g",result="success"} 3',
        '',
        '# HELP depth Depth.',
        '# TYPE depth gauge',
        'depth{name="g"} 4',
        '',
        '# HELP time_seconds Time.',
        '# TYPE time_seconds histogram',
        'time_seconds_bucket{le="0.01",controller="g"} 0',
        'time_seconds_bucket{le="0.05",controller="g"} 1',
        'time_seconds_bucket{le="+Inf",controller="g"} 2',
        'time_seconds_sum{controller="g"} 3.02',
        'time_seconds_count{controller="g"} 2',
        '',
      ].join('\n'),
    );
    expect(await metrics.value('time_seconds', { controller: 'g' })).toBe(2);
    expect(await metrics.value('time_seconds', { controller: 'g', le: '0.05' })).toBe(1);
    expect(await metrics.value('reconcile_total', { controller: 'g', result: 'success' })).toBe(3);
    expect(await metrics.value('reconcile_total', { controller: 'g', result: 'error' })).toBeUndefined();
    expect(await metrics.value('missing')).toBeUndefined();
  });

  it('escapes quotes and backslashes in label values', async () => {
    const metrics = new Metrics();
    metrics.inc('x', 'X.', { path: 'a"b\\c' });
    expect(await metrics.render()).toContain('x{path="a\\"b\\\\c"} 1');
  });

  it('keeps one registry per instance, which users register their own metrics on', async () => {
    const one = new Metrics();
    const two = new Metrics();
    one.inc('workqueue_adds_total', 'Adds.', { name: 'a' });
    two.inc('workqueue_adds_total', 'Adds.', { name: 'a' }, 5);
    expect(await one.value('workqueue_adds_total', { name: 'a' })).toBe(1);
    expect(await two.value('workqueue_adds_total', { name: 'a' })).toBe(5);
    const mine = new Counter({ name: 'widgets_synced_total', help: 'Synced.', registers: [one.registry] });
    mine.inc(7);
    expect(one.registry).toBeInstanceOf(Registry);
    expect(await one.render()).toContain('widgets_synced_total 7');
    expect(await two.render()).not.toContain('widgets_synced_total');
    // The same name gets the same metric; another type is refused.
    expect(one.counter('widgets_synced_total', 'Synced.')).toBe(mine);
    expect(() => one.gauge('widgets_synced_total', 'Synced.')).toThrow(
      'metric widgets_synced_total is registered with another type',
    );
  });

  it('bound series add up as plain numbers and show when read', async () => {
    const metrics = new Metrics();
    const adds = metrics.boundCounter('workqueue_adds_total', 'Adds.', { name: 'a' });
    const depth = metrics.boundGauge('workqueue_depth', 'Depth.', { name: 'a' });
    expect(await metrics.value('workqueue_adds_total', { name: 'a' })).toBe(0);
    adds.inc();
    adds.inc(2);
    depth.set(5);
    depth.inc(-1);
    expect(await metrics.value('workqueue_adds_total', { name: 'a' })).toBe(3);
    adds.inc();
    const text = await metrics.render();
    expect(text).toContain('workqueue_adds_total{name="a"} 4');
    expect(text).toContain('workqueue_depth{name="a"} 4');
    // Several bound series of one counter, and direct updates, add up.
    metrics.boundCounter('workqueue_adds_total', 'Adds.', { name: 'b' }).inc();
    metrics.inc('workqueue_adds_total', 'Adds.', { name: 'a' });
    expect(await metrics.value('workqueue_adds_total', { name: 'a' })).toBe(5);
    expect(await metrics.value('workqueue_adds_total', { name: 'b' })).toBe(1);
  });

  it("bound histograms render exactly as prom-client's own observe", async () => {
    const buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 1];
    // Sums of binary fractions are exact in any order: the text must be byte-identical.
    const values = [0, 0.0078125, 0.0078125, 0.03125, 0.5, 0.75, 2, 64, 0.0048828125];
    const plain = new Metrics();
    const bound = new Metrics();
    const series = bound.boundHistogram('time_seconds', 'Time.', { controller: 'a' }, buckets);
    // A series nothing was observed in does not show, as with observe.
    bound.boundHistogram('time_seconds', 'Time.', { controller: 'idle' }, buckets);
    expect(await bound.render()).not.toContain('time_seconds_count');
    for (const [i, value] of values.entries()) {
      plain.observe('time_seconds', 'Time.', { controller: 'a' }, value, buckets);
      series.observe(value);
      // Read half-way too: observations before and after a scrape add up.
      if (i === 4) expect(await bound.render()).toBe(await plain.render());
    }
    // Direct observations of the same series add to the bound ones.
    plain.observe('time_seconds', 'Time.', { controller: 'a' }, 0.25, buckets);
    bound.observe('time_seconds', 'Time.', { controller: 'a' }, 0.25, buckets);
    expect(await bound.render()).toBe(await plain.render());
    expect(await bound.value('time_seconds', { controller: 'a' })).toBe(values.length + 1);
    expect(await bound.value('time_seconds', { controller: 'a', le: '0.01' })).toBe(4);
    // After a reset of the registry, the series starts again from what is observed next.
    bound.registry.resetMetrics();
    series.observe(0.02);
    expect(await bound.value('time_seconds', { controller: 'a' })).toBe(1);
    expect(await bound.value('time_seconds', { controller: 'a', le: '0.01' })).toBe(0);
    expect(() => series.observe(Number.NaN)).toThrow('Value is not a valid number: NaN');
  });

  it('series bound before the registry is made show at the first read, in their order, with what they counted', async () => {
    // A manager's controllers and cache bind their series as they are built; the registry (and
    // prom-client) comes with the first scrape. The text must be what it was when they were made at once.
    const bind = (metrics: Metrics) => {
      const adds = metrics.boundCounter('workqueue_adds_total', 'Adds.', { name: 'a' });
      const depth = metrics.boundGauge('workqueue_depth', 'Depth.', { name: 'a' }, 2);
      const idle = metrics.boundCounter('workqueue_retries_total', 'Retries.', { name: 'a' });
      const time = metrics.boundHistogram('time_seconds', 'Time.', { controller: 'a' }, [0.5, 1]);
      metrics.collectedGauge('cached_objects', 'Objects.', ['kind'], (set) => set({ kind: 'Widget' }, 7));
      return { adds, depth, idle, time };
    };
    const eager = new Metrics();
    void eager.registry; // made at once, as before
    const lazy = new Metrics();
    const series = [bind(eager), bind(lazy)];
    for (const { adds, depth, time } of series) {
      adds.inc(3);
      depth.inc();
      time.observe(0.75);
    }
    const text = await lazy.render();
    expect(text).toBe(await eager.render());
    for (const line of [
      'workqueue_adds_total{name="a"} 3',
      'workqueue_depth{name="a"} 3',
      'workqueue_retries_total{name="a"} 0',
      'time_seconds_count{controller="a"} 1',
      'cached_objects{kind="Widget"} 7',
    ]) {
      expect(text).toContain(line);
    }
    // Series bound once the registry exists are declared at once.
    lazy.boundCounter('late_total', 'Late.', {}).inc();
    expect(await lazy.value('late_total')).toBe(1);
  });

  it('collects the process metrics once per process', async () => {
    expect(processRegistry()).toBe(processRegistry());
    const text = await processRegistry().metrics();
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
  });
});
