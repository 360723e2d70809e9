// Pre-resolved metric families in prom-client's text format: children keep their labels,
// histogram buckets are cumulative with le bounds and +Inf, _sum and _count.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parseExposition, valueOf } from '../testserver/prometheus-text.js';
import { CounterFamily, GaugeFamily, HistogramFamily, ReadHistogram } from './series.js';

describe('metric families', () => {
  it('format like prom-client metrics', async () => {
    const registry = new Registry();
    const counter = new CounterFamily('c_total', 'A counter.', ['a', 'b'], [registry]);
    const gauge = new GaugeFamily('g', 'A gauge.', ['a'], [registry]);
    const histogram = new HistogramFamily('h_seconds', 'A histogram.', ['op'], [0.1, 1], [registry]);
    new CounterFamily('hidden_total', 'Not registered.', [], []).child({}).value++;
    const c = counter.child({ a: 'x', b: 'y' });
    c.value += 2;
    expect(counter.child({ b: 'y', a: 'x' })).toBe(c);
    counter.child({ a: 'x', b: 'z"q' }).value++;
    gauge.child({ a: '1' }).value = -3;
    const h = histogram.child({ op: 'get' });
    for (const v of [0.05, 0.1, 0.5, 2]) h.observe(v);

    const e = parseExposition(await registry.metrics());
    expect([...e.types]).toEqual([
      ['c_total', 'counter'],
      ['g', 'gauge'],
      ['h_seconds', 'histogram'],
    ]);
    expect(e.help.get('h_seconds')).toBe('A histogram.');
    expect(valueOf(e, 'c_total', { a: 'x', b: 'y' })).toBe(2);
    expect(valueOf(e, 'c_total', { a: 'x', b: 'z"q' })).toBe(1);
    expect(valueOf(e, 'g', { a: '1' })).toBe(-3);
    expect(valueOf(e, 'h_seconds_bucket', { op: 'get', le: '0.1' })).toBe(2);
    expect(valueOf(e, 'h_seconds_bucket', { op: 'get', le: '1' })).toBe(3);
    expect(valueOf(e, 'h_seconds_bucket', { op: 'get', le: '+Inf' })).toBe(4);
    expect(valueOf(e, 'h_seconds_count', { op: 'get' })).toBe(4);
    expect(valueOf(e, 'h_seconds_sum', { op: 'get' })).toBeCloseTo(2.65);
    expect(e.types.has('hidden_total')).toBe(false);
  });

  it('reads a histogram kept elsewhere at each scrape, in the same form', async () => {
    const registry = new Registry();
    const kept = { counts: new Float64Array(3), sum: 0, count: 0 };
    new ReadHistogram('r_seconds', 'Read at scrape.', [0.1, 1], () => kept, [registry]);
    const before = parseExposition(await registry.metrics());
    expect(valueOf(before, 'r_seconds_bucket', { le: '+Inf' })).toBe(0);
    expect(valueOf(before, 'r_seconds_count', {})).toBe(0);
    // As HistogramChild counts: per bucket, the last past every bound.
    kept.counts.set([2, 1, 1]);
    kept.sum = 2.65;
    kept.count = 4;
    const e = parseExposition(await registry.metrics());
    expect(e.types.get('r_seconds')).toBe('histogram');
    expect(valueOf(e, 'r_seconds_bucket', { le: '0.1' })).toBe(2);
    expect(valueOf(e, 'r_seconds_bucket', { le: '1' })).toBe(3);
    expect(valueOf(e, 'r_seconds_bucket', { le: '+Inf' })).toBe(4);
    expect(valueOf(e, 'r_seconds_sum', {})).toBeCloseTo(2.65);
    expect(valueOf(e, 'r_seconds_count', {})).toBe(4);
  });
});
