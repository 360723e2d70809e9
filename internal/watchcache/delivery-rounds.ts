// internal/watchcache/delivery-rounds owns when watch consumers are woken. Consumers are woken
// together in rounds rather than per pushed event, so everything applied between two rounds
// reaches a watcher's socket as one write, and watchers that received the same events can
// share the bytes built for them (the round number tells a sharing cache when to forget).
// A round runs as soon as the loop has finished its I/O (setImmediate) unless the previous
// round was expensive: then the next one waits a multiple of that cost, capped. Idle, that is
// one loop turn of latency; under fan-out load the per-write cost (HTTP/2 frame, TLS record,
// syscall), which bounds fan-out to many watchers, is paid once per round instead of once per
// event, and the loop keeps time for requests between rounds.
// Imports: nothing from the project.

/** The next round waits at most this long after the previous one ended. */
const MAX_GAP_MS = 25;
/** ... and otherwise this multiple of the previous round's own duration. */
const GAP_PER_COST = 3;

let due: (() => void)[] = [];
let scheduled = false;
let round = 0;
let lastEnd = 0;
let gapMs = 0;

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
  gapMs = Math.min(MAX_GAP_MS, (lastEnd - start) * GAP_PER_COST);
  if (due.length > 0 && !scheduled) schedule();
}
