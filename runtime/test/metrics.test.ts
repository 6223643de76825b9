import { describe, expect, it } from 'vitest';
import { Metrics } from '../src/metrics.js';

describe('Metrics', () => {
  it('renders counters, gauges and histograms in the Prometheus text format', () => {
    const metrics = new Metrics();
    metrics.inc('reconcile_total', 'Reconciles.', { controller: 'g', result: 'success' });
    metrics.inc('reconcile_total', 'Reconciles.', { result: 'success', controller: 'g' }, 2);
    metrics.set('depth', 'Depth.', { name: 'g' }, 4);
    metrics.observe('time_seconds', 'Time.', { controller: 'g' }, 0.02, [0.01, 0.05]);
    metrics.observe('time_seconds', 'Time.', { controller: 'g' }, 3, [0.01, 0.05]);
    expect(metrics.render()).toBe(
      [
        '# HELP depth Depth.',
        '# TYPE depth gauge',
        'depth{name="g"} 4',
        '# HELP reconcile_total Reconciles.',
        '# TYPE reconcile_total counter',
        'reconcile_total{controller="g",result="success"} 3',
        '# HELP time_seconds Time.',
        '# TYPE time_seconds histogram',
        'time_seconds_bucket{controller="g",le="0.01"} 0',
        'time_seconds_bucket{controller="g",le="0.05"} 1',
        'time_seconds_bucket{controller="g",le="+Inf"} 2',
        'time_seconds_sum{controller="g"} 3.02',
        'time_seconds_count{controller="g"} 2',
        '',
      ].join('\n'),
    );
    expect(metrics.value('time_seconds', { controller: 'g' })).toBe(2);
  });

  it('escapes quotes and backslashes in label values', () => {
    const metrics = new Metrics();
    metrics.inc('x', 'X.', { path: 'a"b\\c' });
    expect(metrics.render()).toContain('x{path="a\\"b\\\\c"} 1');
  });
});
