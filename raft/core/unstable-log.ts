// raft/core/unstable-log.ts owns the tail of the log that the core has accepted but the driver
// has not yet reported durable: new entries (from proposals or a leader) and an incoming
// snapshot. They move to storage when advance() reports them persisted (stableTo).

import type { Entry, Snapshot } from '../types.js';
import { invariant } from './errors.js';

export class UnstableLog {
  /** A snapshot received from the leader and not yet persisted. */
  snapshot: Snapshot | undefined;
  entries: Entry[] = [];
  /** Index of entries[0]; equals storage.lastIndex()+1 when entries is empty. */
  offset: number;

  constructor(offset: number) {
    this.offset = offset;
  }

  /** First index, if a pending snapshot determines it. */
  maybeFirstIndex(): number | undefined {
    return this.snapshot ? this.snapshot.metadata.index + 1 : undefined;
  }

  maybeLastIndex(): number | undefined {
    if (this.entries.length > 0) return this.offset + this.entries.length - 1;
    return this.snapshot ? this.snapshot.metadata.index : undefined;
  }

  maybeTerm(i: number): number | undefined {
    if (i < this.offset) {
      if (this.snapshot && this.snapshot.metadata.index === i) return this.snapshot.metadata.term;
      return undefined;
    }
    const last = this.maybeLastIndex();
    if (last === undefined || i > last) return undefined;
    return this.entries[i - this.offset].term;
  }

  /**
   * Entries up to (i, t) are durable. Only if the entry at i still has term t: otherwise a
   * newer append replaced it while the write was in flight and it must stay unstable.
   */
  stableTo(i: number, t: number): void {
    const gt = this.maybeTerm(i);
    if (gt === undefined || gt !== t || i < this.offset) return;
    this.entries = this.entries.slice(i + 1 - this.offset);
    this.offset = i + 1;
  }

  stableSnapTo(i: number): void {
    if (this.snapshot && this.snapshot.metadata.index === i) this.snapshot = undefined;
  }

  restore(s: Snapshot): void {
    this.offset = s.metadata.index + 1;
    this.entries = [];
    this.snapshot = s;
  }

  truncateAndAppend(ents: Entry[]): void {
    const after = ents[0].index;
    if (after === this.offset + this.entries.length) {
      this.entries = this.entries.concat(ents); // the common case: appending at the tail
    } else if (after <= this.offset) {
      // Replacing everything unstable; the new entries also override storage from `after` on.
      this.offset = after;
      this.entries = ents.slice();
    } else {
      // Truncate to after-1 and append.
      this.entries = this.slice(this.offset, after).concat(ents);
    }
  }

  slice(lo: number, hi: number): Entry[] {
    invariant(lo <= hi, () => `invalid unstable.slice ${lo} > ${hi}`);
    const upper = this.offset + this.entries.length;
    invariant(lo >= this.offset && hi <= upper, () => `unstable.slice[${lo},${hi}) out of bound [${this.offset},${upper}]`);
    return this.entries.slice(lo - this.offset, hi - this.offset);
  }
}
