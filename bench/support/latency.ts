// bench/support/latency owns recording latencies (milliseconds) and summarising them as
// percentiles. Values go into logarithmic buckets 1% wide (so a percentile is off by at most
// 1%), which keeps millions of samples in a few kilobytes and lets the histograms of several
// generator processes or rounds be merged exactly. Imports: none.

export interface LatencySummary {
  count: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** A histogram as JSON: bucket index → count, plus the exact sum and maximum. */
export interface SerializedLatency {
  buckets: Record<string, number>;
  sum: number;
  max: number;
}

const SMALLEST_MS = 0.001;
const GROWTH = Math.log(1.01);

export class LatencyRecorder {
  private readonly buckets = new Map<number, number>();
  private n = 0;
  private sum = 0;
  private max = 0;

  record(ms: number): void {
    const v = Math.max(ms, SMALLEST_MS);
    const b = Math.floor(Math.log(v / SMALLEST_MS) / GROWTH);
    this.buckets.set(b, (this.buckets.get(b) ?? 0) + 1);
    this.n++;
    this.sum += ms;
    if (ms > this.max) this.max = ms;
  }

  get count(): number {
    return this.n;
  }

  toJSON(): SerializedLatency {
    return { buckets: Object.fromEntries(this.buckets), sum: this.sum, max: this.max };
  }

  static from(...parts: SerializedLatency[]): LatencyRecorder {
    const r = new LatencyRecorder();
    for (const p of parts) {
      for (const [b, c] of Object.entries(p.buckets)) {
        r.buckets.set(Number(b), (r.buckets.get(Number(b)) ?? 0) + c);
        r.n += c;
      }
      r.sum += p.sum;
      r.max = Math.max(r.max, p.max);
    }
    return r;
  }

  /** Percentiles by nearest rank (a bucket's upper edge); all zero when nothing was recorded. */
  summary(): LatencySummary {
    if (this.n === 0) return { count: 0, meanMs: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, maxMs: 0 };
    const sorted = [...this.buckets.entries()].sort((a, b) => a[0] - b[0]);
    const at = (q: number) => {
      const rank = Math.max(1, Math.ceil(q * this.n));
      let seen = 0;
      for (const [b, c] of sorted) {
        seen += c;
        if (seen >= rank) return Math.min(this.max, SMALLEST_MS * Math.exp((b + 1) * GROWTH));
      }
      return this.max;
    };
    return { count: this.n, meanMs: round(this.sum / this.n), p50Ms: round(at(0.5)), p90Ms: round(at(0.9)), p99Ms: round(at(0.99)), maxMs: round(this.max) };
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
