// The delivery-round metrics read what their owner keeps, at each scrape.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parseExposition, valueOf } from '../testserver/prometheus-text.js';
import { registerWatchDeliveryMetrics, type DeliveryRoundFigures } from './watch-delivery.js';

describe('watch delivery metrics', () => {
  it('expose the rounds’ lag and duration histograms and the wakes counter', async () => {
    const registry = new Registry();
    const figures = {
      lag: { counts: new Float64Array(3), sum: 0, count: 0 },
      duration: { counts: new Float64Array(3), sum: 0, count: 0 },
      woken: 0,
    } satisfies DeliveryRoundFigures;
    registerWatchDeliveryMetrics(registry, [0.001, 0.01], () => figures);
    figures.lag.counts.set([1, 0, 2]);
    figures.lag.sum = 0.5;
    figures.lag.count = 3;
    figures.duration.counts.set([3, 0, 0]);
    figures.duration.sum = 0.0012;
    figures.duration.count = 3;
    figures.woken = 3_000;
    const e = parseExposition(await registry.metrics());
    expect(e.types.get('clusterd_watch_delivery_lag_seconds')).toBe('histogram');
    expect(e.types.get('clusterd_watch_delivery_round_duration_seconds')).toBe('histogram');
    expect(e.types.get('clusterd_watch_delivery_woken_total')).toBe('counter');
    expect(valueOf(e, 'clusterd_watch_delivery_lag_seconds_bucket', { le: '0.01' })).toBe(1);
    expect(valueOf(e, 'clusterd_watch_delivery_lag_seconds_bucket', { le: '+Inf' })).toBe(3);
    expect(valueOf(e, 'clusterd_watch_delivery_lag_seconds_sum', {})).toBeCloseTo(0.5);
    expect(valueOf(e, 'clusterd_watch_delivery_round_duration_seconds_count', {})).toBe(3);
    expect(valueOf(e, 'clusterd_watch_delivery_woken_total', {})).toBe(3_000);
    figures.woken = 3_005;
    expect(valueOf(parseExposition(await registry.metrics()), 'clusterd_watch_delivery_woken_total', {})).toBe(3_005);
  });
});
