// internal/watchcache/delivery-rounds owns when watch consumers are woken. Consumers are woken
// together in rounds rather than per pushed event, so everything applied between two rounds
// reaches a watcher's socket as one write, and watchers that received the same events can
// share the bytes built for them (the round number tells a sharing cache when to forget).
// A round runs as soon as the loop has finished its I/O (setImmediate) while the loop has time
// to spare. When it has not (the event loop was busy for most of the time since the previous
// round and the round woke many consumers, or that round itself was expensive), the next
// round waits, up to MAX_GAP_MS: every stream write costs the same fixed work (HTTP/2 frame,
// TLS record, a write request and its completion callback) however few events it carries, so
// under fan-out load fewer, larger rounds are what keeps the loop able to serve requests and
// the sockets moving. Rounds that wake a few consumers (selective watches) have little to
// amortise and are not held back by load. Idle, the latency is one loop turn.
// It also counts what the rounds cost (roundStats), for /metrics: under a fan-out the wait
// from a change to its round is where a saturated event loop shows first.
// A wide fan-out holds acknowledgements back (afterDueRound): while a round that wakes many
// consumers is due, a write applied now is acknowledged only once that round has run and the
// loop turn after it has flushed what it wrote. Writers then cannot run ahead of the fan-out
// their writes cause, and a writer that sees its write acknowledged finds its event already
// sent to the watchers here (those that could take it: a slow watcher's queue is not waited
// for). Narrow rounds (a few consumers, as the server's own controllers and selective watches
// wake) hold nothing back: waiting for them cost creates about 12 % more CPU per request.
// Imports: nothing from the project.

/** The next round waits at most this long after the previous one ended. */
const MAX_GAP_MS = 10;
/** ... and at least this multiple of the previous round's own duration. */
const GAP_PER_COST = 3;
/** Event-loop utilisation from which rounds are spaced out, and at which the gap is the maximum. */
const BUSY_FROM = 0.5;
const BUSY_FULL = 0.9;
/**
 * Consumers woken by a round for the load-based gap to apply in full (proportionally below),
 * and from which a due round holds acknowledgements back (afterDueRound).
 */
const WIDE_ROUND = 256;

let due: (() => void)[] = [];
/** Callers of afterDueRound waiting for the round that serves `due`. */
let afterDue: (() => void)[] = [];
/** When the oldest wake in `due` was asked for (performance.now()). */
let firstDueAt = 0;
let scheduled = false;
let round = 0;
let lastEnd = 0;
let gapMs = 0;
let lastUtilization = performance.eventLoopUtilization();

/** Runs `wake` in the next delivery round (each call once, in call order). */
export function wakeInNextRound(wake: () => void): void {
  if (due.length === 0) firstDueAt = performance.now();
  due.push(wake);
  if (!scheduled) schedule();
}

/**
 * For a write just applied: resolves once the wakes asked for so far have run in their round
 * and the loop has turned once after it, or undefined (nothing to wait for) when fewer than
 * WIDE_ROUND wakes are due. The turn after the round is where the streams' writes leave: Node
 * flushes an HTTP/2 session's pending frames in a native immediate that its stream writes
 * scheduled, and runs native immediates before the callbacks of setImmediate, so by then the
 * round's bytes have been handed to the sockets (those whose flow-control windows and
 * connections took them; HTTP/1.1 streams write in the round itself).
 */
export function afterDueRound(): Promise<void> | undefined {
  if (due.length < WIDE_ROUND) return undefined;
  return new Promise((resolve) => afterDue.push(resolve));
}

/** Upper bounds (seconds) of the buckets RoundStats counts its lags and durations in. */
export const ROUND_STAT_BOUNDS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/** One distribution: observations per bucket of ROUND_STAT_BOUNDS (not cumulative; the last is past every bound), their sum and count. */
export interface RoundDistribution {
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/** What the rounds have cost since the process started. */
export interface RoundStats {
  /** From the first wake a round serves being asked for to the round's start, in seconds. */
  readonly lag: RoundDistribution;
  /** How long each round ran (the consumers' own work: encoding, stream writes), in seconds. */
  readonly duration: RoundDistribution;
  /** Consumers woken, over all rounds (one per watch stream written to, in a fan-out). */
  woken: number;
}

const distribution = (): RoundDistribution => ({ counts: new Float64Array(ROUND_STAT_BOUNDS.length + 1), sum: 0, count: 0 });
const stats: RoundStats = { lag: distribution(), duration: distribution(), woken: 0 };

function observe(d: RoundDistribution, seconds: number): void {
  let i = 0;
  while (i < ROUND_STAT_BOUNDS.length && seconds > ROUND_STAT_BOUNDS[i]!) i++;
  d.counts[i]!++;
  d.sum += seconds;
  d.count++;
}

/** The process's round statistics (live: read them, do not change them). */
export function roundStats(): Readonly<RoundStats> {
  return stats;
}

/** The number of the round running now (or of the last one); changes between rounds only. */
export function deliveryRound(): number {
  return round;
}

function schedule(): void {
  scheduled = true;
  const wait = lastEnd + gapMs - performance.now();
  if (wait > 1) setTimeout(runRound, wait);
  else setImmediate(runRound);
}

function runRound(): void {
  scheduled = false;
  round++;
  const start = performance.now();
  const now = due;
  due = [];
  // Only those that asked before this round began: a wake asked for during it runs in the next.
  const waiting = afterDue;
  afterDue = [];
  observe(stats.lag, Math.max(0, start - firstDueAt) / 1000);
  stats.woken += now.length;
  for (const wake of now) {
    try {
      wake();
    } catch {
      // A consumer's failure is its own (it closes its stream); the others still run.
    }
  }
  if (waiting.length > 0) setImmediate(release, waiting);
  lastEnd = performance.now();
  observe(stats.duration, (lastEnd - start) / 1000);
  const utilization = performance.eventLoopUtilization();
  const busy = performance.eventLoopUtilization(utilization, lastUtilization).utilization;
  lastUtilization = utilization;
  const byLoad = MAX_GAP_MS * Math.min(1, Math.max(0, (busy - BUSY_FROM) / (BUSY_FULL - BUSY_FROM))) * Math.min(1, now.length / WIDE_ROUND);
  gapMs = Math.min(MAX_GAP_MS, Math.max(byLoad, (lastEnd - start) * GAP_PER_COST));
  if (due.length > 0 && !scheduled) schedule();
}

function release(waiting: (() => void)[]): void {
  for (const resolve of waiting) resolve();
}
