// raft/transport/backoff.ts owns the reconnect delay policy: exponential growth from `initialMs`
// to `maxMs` with multiplicative jitter, reset after a successful connection. Pure: randomness
// is injected, time is the caller's.

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** Each delay is scaled by a factor drawn from [1 - jitter, 1 + jitter]. */
  jitter: number;
  /** Returns a number in [0, 1). */
  random: () => number;
}

export class Backoff {
  private attempt = 0;

  constructor(private readonly opts: BackoffOptions) {}

  /** The delay before the next attempt; each call counts as one more failure. */
  next(): number {
    const base = Math.min(this.opts.maxMs, this.opts.initialMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    const factor = 1 - this.opts.jitter + 2 * this.opts.jitter * this.opts.random();
    return Math.max(0, Math.round(base * factor));
  }

  reset(): void {
    this.attempt = 0;
  }

  get failures(): number {
    return this.attempt;
  }
}
