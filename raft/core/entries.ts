// raft/core/entries.ts owns small pure helpers over log entries: their accounted size (for the
// byte limits on messages, inflight windows and Ready batches) and size-bounded truncation.

import type { Entry } from '../types.js';

/**
 * Bytes an entry counts for against size limits. The payload dominates; the constant stands for
 * the framing (term, index, type) so that empty entries still cost something and a limit of N
 * bytes can never admit an unbounded number of no-ops.
 */
export function entrySize(e: Entry): number {
  return e.data.byteLength + 16;
}

export function entriesSize(ents: readonly Entry[]): number {
  let n = 0;
  for (const e of ents) n += entrySize(e);
  return n;
}

/**
 * The longest prefix of `ents` whose total size stays within maxBytes, but always at least one
 * entry: progress must be possible even when a single entry exceeds the limit.
 */
export function limitSize(ents: Entry[], maxBytes: number): Entry[] {
  if (ents.length === 0) return ents;
  let size = entrySize(ents[0]);
  let limit = 1;
  for (; limit < ents.length; limit++) {
    size += entrySize(ents[limit]);
    if (size > maxBytes) break;
  }
  return limit === ents.length ? ents : ents.slice(0, limit);
}
