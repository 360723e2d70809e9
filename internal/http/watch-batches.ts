// internal/http/watch-batches owns the bytes of a drained batch of watch outputs: encoded once
// per delivery round for every stream that drains the same outputs in the same format. In a
// fan-out, every watcher of a collection receives the cache's own event objects (see
// watchcache/watcher), so the first stream of a round builds the batch and the others write
// the same Buffer: no per-watcher encoding or copying. Streams that drain something else (a
// selector, a lagging socket) miss and build their own, which costs what it did before.
// Imports: watchcache (types, delivery-rounds).

import { deliveryRound } from '../watchcache/delivery-rounds.js';
import type { WatchOutput } from '../watchcache/types.js';

interface Built {
  readonly outs: readonly WatchOutput[];
  readonly bytes: Buffer | undefined;
}

/** Distinct batches remembered per first output and format; more are built, not remembered. */
const MAX_CANDIDATES = 8;
/**
 * Bytes remembered per round, and per batch: a watch starting with the current state of a
 * large collection drains it as one batch that no other stream shares (its outputs are its
 * own), and remembering those until the next round would hold them for nothing.
 */
const ROUND_BUDGET = 16 * 1024 * 1024;
const MAX_REMEMBERED = 1024 * 1024;

let memoRound = -1;
let remembered = 0;
const memo = new Map<string, Map<WatchOutput, Built[]>>();

function sameOutputs(a: readonly WatchOutput[], b: readonly WatchOutput[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The bytes of `outs` in `format`, from this round's memo or built by `build`. `format` must
 * name everything the bytes depend on besides the outputs (media type, view, target version);
 * a format whose bytes depend on stream state (tables, which send column definitions once)
 * must not be shared.
 */
export function sharedBatch(format: string, outs: readonly WatchOutput[], build: () => Buffer | undefined): Buffer | undefined {
  const first = outs[0];
  if (first === undefined) return undefined;
  const round = deliveryRound();
  if (round !== memoRound) {
    memo.clear();
    memoRound = round;
    remembered = 0;
  }
  let byFirst = memo.get(format);
  if (!byFirst) {
    byFirst = new Map();
    memo.set(format, byFirst);
  }
  const candidates = byFirst.get(first);
  if (candidates) for (const c of candidates) if (sameOutputs(c.outs, outs)) return c.bytes;
  const bytes = build();
  const size = bytes?.length ?? 0;
  if (size > MAX_REMEMBERED || remembered + size > ROUND_BUDGET) return bytes;
  if (!candidates) byFirst.set(first, [{ outs, bytes }]);
  else if (candidates.length < MAX_CANDIDATES) candidates.push({ outs, bytes });
  else return bytes;
  remembered += size;
  return bytes;
}
