// raft/core/raft-log.ts owns the node's view of the whole log: storage (durable, read-only to
// the core) followed by the unstable tail, plus the commit and applied indexes. Log-matching
// checks, conflict detection and the term-skipping back-off (findConflictByTerm) live here.

import type { Entry, LogStorage, Snapshot } from '../types.js';
import { limitSize } from './entries.js';
import { CompactedError, invariant, isCompacted, isUnavailable, UnavailableError } from './errors.js';
import type { RaftLogger } from './logger.js';
import { UnstableLog } from './unstable-log.js';

export class RaftLog {
  readonly storage: LogStorage;
  readonly unstable: UnstableLog;
  /** Highest index known to be stored on a quorum. */
  committed: number;
  /** Highest index the application reported applied (advance). Always <= committed. */
  applied: number;
  /** Bound on the bytes of committed entries handed out in one Ready. */
  readonly maxNextEntsSize: number;
  private readonly logger: RaftLogger;

  constructor(storage: LogStorage, logger: RaftLogger, maxNextEntsSize: number) {
    this.storage = storage;
    this.logger = logger;
    this.maxNextEntsSize = maxNextEntsSize;
    const first = storage.firstIndex();
    const last = storage.lastIndex();
    this.unstable = new UnstableLog(last + 1);
    // Everything up to the snapshot is committed and applied by definition.
    this.committed = first - 1;
    this.applied = first - 1;
  }

  toString(): string {
    return `committed=${this.committed}, applied=${this.applied}, unstable.offset=${this.unstable.offset}, len(unstable.entries)=${this.unstable.entries.length}`;
  }

  /**
   * Follower side of AppendEntries: if our log has (index, logTerm), append ents after it,
   * truncating any conflicting suffix, and advance commit to min(committed, last new index).
   * Returns the last index known to match the leader, or undefined when the consistency check
   * fails.
   */
  maybeAppend(index: number, logTerm: number, committed: number, ents: Entry[]): number | undefined {
    if (!this.matchTerm(index, logTerm)) return undefined;
    const lastNew = index + ents.length;
    const ci = this.findConflict(ents);
    if (ci !== 0) {
      // Committed entries are never overwritten: that would mean two leaders disagree on a
      // committed entry, which Raft's election restriction rules out.
      invariant(ci > this.committed, () => `entry ${ci} conflicts with committed entry [committed(${this.committed})]`);
      this.append(ents.slice(ci - (index + 1)));
    }
    this.commitTo(Math.min(committed, lastNew));
    return lastNew;
  }

  append(ents: Entry[]): number {
    if (ents.length === 0) return this.lastIndex();
    const after = ents[0].index - 1;
    invariant(after >= this.committed, () => `after(${after}) is out of range [committed(${this.committed})]`);
    this.unstable.truncateAndAppend(ents);
    return this.lastIndex();
  }

  /**
   * The index of the first entry in ents whose term differs from ours (or that we lack), or 0
   * if all of them are already in our log. Entries given are contiguous.
   */
  findConflict(ents: Entry[]): number {
    for (const e of ents) {
      if (!this.matchTerm(e.index, e.term)) {
        if (e.index <= this.lastIndex() && this.logger.enabled('info')) {
          this.logger.log('info', `found conflict at index ${e.index} [existing term: ${this.termOrZero(e.index)}, conflicting term: ${e.term}]`);
        }
        return e.index;
      }
    }
    return 0;
  }

  /**
   * The largest index <= `index` whose term is <= `term`, with that term (0 if unknown). Used
   * both by a rejecting follower (to hint where the leader's log might match) and by the
   * leader on a rejection: every entry in between has a term too large to match, so a whole
   * term's worth of entries is skipped per round trip instead of one entry.
   */
  findConflictByTerm(index: number, term: number): { index: number; term: number } {
    for (; index > 0; index--) {
      const ourTerm = this.termIfHeld(index);
      if (ourTerm === undefined) return { index, term: 0 };
      if (ourTerm <= term) return { index, term: ourTerm };
    }
    return { index: 0, term: 0 };
  }

  unstableEntries(): Entry[] {
    return this.unstable.entries;
  }

  /** Committed entries not yet applied, bounded by maxNextEntsSize; none while a snapshot is pending. */
  nextCommittedEntries(): Entry[] {
    if (this.unstable.snapshot) return [];
    const off = Math.max(this.applied + 1, this.firstIndex());
    if (this.committed + 1 > off) return this.slice(off, this.committed + 1, this.maxNextEntsSize);
    return [];
  }

  hasNextCommittedEntries(): boolean {
    if (this.unstable.snapshot) return false;
    return this.committed + 1 > Math.max(this.applied + 1, this.firstIndex());
  }

  hasPendingSnapshot(): boolean {
    return this.unstable.snapshot !== undefined;
  }

  snapshot(): Snapshot {
    return this.unstable.snapshot ?? this.storage.snapshot();
  }

  firstIndex(): number {
    return this.unstable.maybeFirstIndex() ?? this.storage.firstIndex();
  }

  lastIndex(): number {
    return this.unstable.maybeLastIndex() ?? this.storage.lastIndex();
  }

  commitTo(toCommit: number): void {
    if (this.committed < toCommit) {
      invariant(this.lastIndex() >= toCommit, () => `tocommit(${toCommit}) is out of range [lastIndex(${this.lastIndex()})]. Was the raft log corrupted, truncated, or lost?`);
      this.committed = toCommit;
    }
  }

  appliedTo(i: number): void {
    if (i === 0) return;
    invariant(this.committed >= i && i >= this.applied, () => `applied(${i}) is out of range [prevApplied(${this.applied}), committed(${this.committed})]`);
    this.applied = i;
  }

  stableTo(i: number, t: number): void {
    this.unstable.stableTo(i, t);
  }

  stableSnapTo(i: number): void {
    this.unstable.stableSnapTo(i);
  }

  lastTerm(): number {
    return this.term(this.lastIndex());
  }

  /** Term of entry i. Valid for [firstIndex()-1, lastIndex()]; throws Compacted/Unavailable outside. */
  term(i: number): number {
    const t = this.unstable.maybeTerm(i);
    if (t !== undefined) return t;
    const dummy = this.firstIndex() - 1;
    if (i < dummy) throw new CompactedError();
    if (i > this.lastIndex()) throw new UnavailableError();
    return this.storage.term(i);
  }

  /**
   * Term of entry i, or undefined when i is compacted or beyond the end. The same answers as
   * term() without throwing: followers ask this for every entry a leader sends them (most of
   * them new), and an exception per entry dominated their CPU profile.
   */
  termIfHeld(i: number): number | undefined {
    const t = this.unstable.maybeTerm(i);
    if (t !== undefined) return t;
    if (i < this.firstIndex() - 1 || i > this.lastIndex()) return undefined;
    try {
      return this.storage.term(i);
    } catch (err) {
      // A storage compacted behind our back answers like an index out of range.
      if (isCompacted(err) || isUnavailable(err)) return undefined;
      throw err;
    }
  }

  /** Term of entry i, or 0 when it is compacted or beyond the end (callers treat 0 as "no match"). */
  termOrZero(i: number): number {
    return this.termIfHeld(i) ?? 0;
  }

  /** Entries from i on, up to maxBytes. Throws CompactedError if i was compacted. */
  entries(i: number, maxBytes: number): Entry[] {
    if (i > this.lastIndex()) return [];
    return this.slice(i, this.lastIndex() + 1, maxBytes);
  }

  allEntries(): Entry[] {
    try {
      return this.entries(this.firstIndex(), Number.MAX_SAFE_INTEGER);
    } catch (err) {
      if (isCompacted(err)) return this.allEntries(); // racing compaction; retry
      throw err;
    }
  }

  /**
   * Raft §5.4.1: "If the logs have last entries with different terms, then the log with the
   * later term is more up-to-date. If the logs end with the same term, then whichever log is
   * longer is more up-to-date."
   */
  isUpToDate(lastIndex: number, term: number): boolean {
    const ourTerm = this.lastTerm();
    return term > ourTerm || (term === ourTerm && lastIndex >= this.lastIndex());
  }

  matchTerm(i: number, term: number): boolean {
    return this.termIfHeld(i) === term;
  }

  /**
   * Raft §5.4.2: "Raft never commits log entries from previous terms by counting replicas.
   * Only log entries from the leader's current term are committed by counting replicas."
   * So commit moves to maxIndex only if that entry carries the leader's term.
   */
  maybeCommit(maxIndex: number, term: number): boolean {
    if (maxIndex > this.committed && this.termOrZero(maxIndex) === term) {
      this.commitTo(maxIndex);
      return true;
    }
    return false;
  }

  restore(s: Snapshot): void {
    if (this.logger.enabled('info')) {
      this.logger.log('info', `log [${this.toString()}] starts to restore snapshot [index: ${s.metadata.index}, term: ${s.metadata.term}]`);
    }
    this.committed = s.metadata.index;
    this.unstable.restore(s);
  }

  /** Entries [lo, hi) bounded by maxBytes (at least one). Throws CompactedError below firstIndex. */
  slice(lo: number, hi: number, maxBytes: number): Entry[] {
    this.mustCheckOutOfBounds(lo, hi);
    if (lo === hi) return [];
    let ents: Entry[] = [];
    if (lo < this.unstable.offset) {
      const stored = this.storage.entries(lo, Math.min(hi, this.unstable.offset), maxBytes);
      // A short read from storage means the byte limit was hit; stop there.
      if (stored.length < Math.min(hi, this.unstable.offset) - lo) return stored;
      ents = stored;
    }
    if (hi > this.unstable.offset) {
      const unstable = this.unstable.slice(Math.max(lo, this.unstable.offset), hi);
      ents = ents.length > 0 ? ents.concat(unstable) : unstable;
    }
    return limitSize(ents, maxBytes);
  }

  private mustCheckOutOfBounds(lo: number, hi: number): void {
    invariant(lo <= hi, () => `invalid slice ${lo} > ${hi}`);
    const fi = this.firstIndex();
    if (lo < fi) throw new CompactedError();
    const length = this.lastIndex() + 1 - fi;
    invariant(hi <= fi + length, () => `slice[${lo},${hi}) out of bound [${fi},${this.lastIndex()}]`);
  }
}
