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
// Imports: nothing from the project.

/** The next round waits at most this long after the previous one ended. */
const MAX_GAP_MS = 10;
/** ... and at least this multiple of the previous round's own duration. */
const GAP_PER_COST = 3;
/** Event-loop utilisation from which rounds are spaced out, and at which the gap is the maximum. */
const BUSY_FROM = 0.5;
const BUSY_FULL = 0.9;
/** Consumers woken by a round for the load-based gap to apply in full (proportionally below). */
const WIDE_ROUND = 256;

let due: (() => void)[] = [];
let scheduled = false;
let round = 0;
let lastEnd = 0;
let gapMs = 0;
let lastUtilization = performance.eventLoopUtilization();

/** Runs `wake` in the next delivery round (each call once, in call order). */
export function wakeInNextRound(wake: () => void): void {
  due.push(wake);
  if (!scheduled) schedule();
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
  for (const wake of now) {
    try {
      wake();
    } catch {
      // A consumer's failure is its own (it closes its stream); the others still run.
    }
  }
  lastEnd = performance.now();
  const utilization = performance.eventLoopUtilization();
  const busy = performance.eventLoopUtilization(utilization, lastUtilization).utilization;
  lastUtilization = utilization;
  const byLoad = MAX_GAP_MS * Math.min(1, Math.max(0, (busy - BUSY_FROM) / (BUSY_FULL - BUSY_FROM))) * Math.min(1, now.length / WIDE_ROUND);
  gapMs = Math.min(MAX_GAP_MS, Math.max(byLoad, (lastEnd - start) * GAP_PER_COST));
  if (due.length > 0 && !scheduled) schedule();
}
