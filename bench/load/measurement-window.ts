// bench/load/measurement-window owns when a closed-loop generator measures: a fixed count of
// requests is measured from the first; a timed job after its warm-up, for its duration,
// counting requests by when they started or (countBy: completion) by when they ended. It also
// takes the generator's own CPU over the measured span. Imports: none.

export interface WindowSpec {
  /** A fixed count of requests (measured from the first) instead of a timed window. */
  requests?: number;
  warmupMs: number;
  durationMs?: number;
  countBy?: 'start' | 'completion';
}

export class MeasurementWindow {
  readonly measureFrom: number;
  readonly stopAt: number;
  private readonly byCompletion: boolean;
  private cpuAtStart: NodeJS.CpuUsage | undefined;
  private windowStart: number;
  private readonly opener: NodeJS.Timeout | undefined;

  constructor(spec: WindowSpec) {
    const t0 = performance.now();
    const fixedCount = spec.requests !== undefined;
    this.measureFrom = fixedCount ? t0 : t0 + spec.warmupMs;
    this.stopAt = fixedCount ? Infinity : this.measureFrom + (spec.durationMs ?? 10_000);
    this.byCompletion = !fixedCount && spec.countBy === 'completion';
    this.cpuAtStart = fixedCount ? process.cpuUsage() : undefined;
    this.windowStart = fixedCount ? t0 : NaN;
    // Counting completions, the window opens at measureFrom even when no request starts then
    // (every connection still waiting on one sent during the warm-up).
    this.opener = this.byCompletion ? setTimeout(() => this.open(performance.now()), Math.max(0, this.measureFrom - performance.now())) : undefined;
  }

  /** Called before each request: false once the window is over; opens it when it is due. */
  beforeRequest(now: number): boolean {
    if (now >= this.stopAt) return false;
    if (now >= this.measureFrom) this.open(now);
    return true;
  }

  /** Whether a request that started and ended at these times is counted. */
  counts(started: number, ended: number): boolean {
    return this.byCompletion ? ended >= this.measureFrom && ended <= this.stopAt : started >= this.measureFrom;
  }

  /** Ends the window: the counted span and the generator's CPU share over the measured span. */
  close(): { elapsedMs: number; generatorCpu: number } {
    clearTimeout(this.opener);
    const end = performance.now();
    const cpu = process.cpuUsage(this.cpuAtStart);
    // The generator's CPU is over the whole measured span (the drain included), whatever is counted.
    const spanMs = Number.isNaN(this.windowStart) ? 0 : end - this.windowStart;
    const elapsedMs = this.byCompletion ? this.stopAt - this.measureFrom : spanMs;
    return { elapsedMs, generatorCpu: spanMs > 0 ? (cpu.user + cpu.system) / 1000 / spanMs : 0 };
  }

  private open(now: number): void {
    if (this.cpuAtStart !== undefined) return;
    this.cpuAtStart = process.cpuUsage();
    this.windowStart = now;
  }
}
