// internal/metrics/series owns metric families whose children are resolved once and then cost a
// plain number update: prom-client hashes the label object on every inc/observe, which is too
// much on the request path and on the watch fan-out (one update per stream per delivery round).
// A family registers into a prom-client Registry as a metric object (name, help, type, get()),
// so /metrics formats it like any other. Imports: nothing from the project (prom-client types).

import type { MetricValue, Registry } from 'prom-client';

/** What prom-client's registry reads from a metric object to format it. */
interface Exported {
  name: string;
  help: string;
  type: string;
  values: Array<MetricValue<string>>;
  aggregator: 'sum';
}

type Labels = Record<string, string>;

abstract class Family<Child> {
  protected readonly children = new Map<string, { labels: Labels; child: Child }>();
  abstract readonly type: 'counter' | 'gauge' | 'histogram';

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    registers: Registry[],
  ) {
    // prom-client's registry takes any object with a name and get().
    for (const r of registers) r.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  protected abstract make(): Child;

  /** The child of one label set (made on first use; keep it to skip the lookup next time). */
  child(labels: Labels): Child {
    const key = this.labelNames.map((l) => labels[l] ?? '').join('\0');
    let found = this.children.get(key);
    if (!found) {
      const own: Labels = {};
      for (const l of this.labelNames) own[l] = labels[l] ?? '';
      found = { labels: own, child: this.make() };
      this.children.set(key, found);
    }
    return found.child;
  }

  protected abstract values(): Array<MetricValue<string>>;

  get(): Exported {
    return { name: this.name, help: this.help, type: this.type, values: this.values(), aggregator: 'sum' };
  }
}

export interface CounterChild {
  value: number;
}

export class CounterFamily extends Family<CounterChild> {
  readonly type = 'counter';
  protected make(): CounterChild {
    return { value: 0 };
  }
  protected values(): Array<MetricValue<string>> {
    return [...this.children.values()].map(({ labels, child }) => ({ labels, value: child.value }));
  }
}

export class GaugeFamily extends Family<CounterChild> {
  readonly type = 'gauge';
  protected make(): CounterChild {
    return { value: 0 };
  }
  protected values(): Array<MetricValue<string>> {
    return [...this.children.values()].map(({ labels, child }) => ({ labels, value: child.value }));
  }
}

export class HistogramChild {
  /** Observations per bucket (not cumulative), the last one past every bound (+Inf). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(v: number): void {
    let i = 0;
    while (i < this.bounds.length && v > this.bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += v;
    this.count++;
  }
}

export class HistogramFamily extends Family<HistogramChild> {
  readonly type = 'histogram';

  constructor(name: string, help: string, labelNames: readonly string[], private readonly bounds: readonly number[], registers: Registry[]) {
    super(name, help, labelNames, registers);
  }

  protected make(): HistogramChild {
    return new HistogramChild(this.bounds);
  }

  protected values(): Array<MetricValue<string>> {
    const out: HistogramValue[] = [];
    for (const { labels, child } of this.children.values()) pushHistogram(out, this.name, labels, this.bounds, child);
    return out;
  }
}

type HistogramValue = MetricValue<string> & { metricName: string };

/** One histogram's series in prom-client's form: cumulative buckets, then sum and count. */
function pushHistogram(out: HistogramValue[], name: string, labels: Labels, bounds: readonly number[], h: HistogramReading): void {
  let cumulative = 0;
  for (let i = 0; i <= bounds.length; i++) {
    cumulative += h.counts[i] ?? 0;
    out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: i < bounds.length ? String(bounds[i]) : '+Inf' }, value: cumulative });
  }
  out.push({ metricName: `${name}_sum`, labels, value: h.sum });
  out.push({ metricName: `${name}_count`, labels, value: h.count });
}

/** Observations kept by their owner, as HistogramChild keeps them: per bucket (not cumulative, the last past every bound), sum and count. */
export interface HistogramReading {
  readonly counts: ArrayLike<number>;
  readonly sum: number;
  readonly count: number;
}

/**
 * A histogram without labels whose observations another module keeps (one that must not
 * import the metrics, such as the watch cache's delivery rounds): read at each scrape.
 */
export class ReadHistogram {
  readonly type = 'histogram';

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    private readonly read: () => HistogramReading,
    registers: Registry[],
  ) {
    for (const r of registers) r.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  get(): Exported {
    const values: HistogramValue[] = [];
    pushHistogram(values, this.name, {}, this.bounds, this.read());
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }
}
