// raft/core/progress.ts owns the leader's view of one follower's log: how far it is known to
// match (match), what to send next (next), and the replication mode:
//   probe     - we don't know where the logs diverge; send one MsgApp, wait for the answer;
//   replicate - the follower is in sync; pipeline MsgApps optimistically within the window;
//   snapshot  - the follower needs entries we compacted; a snapshot is in flight, send nothing.

import { Inflights } from './inflights.js';

export type ProgressState = 'probe' | 'replicate' | 'snapshot';

export class Progress {
  match = 0;
  next: number;
  state: ProgressState = 'probe';
  /** Index of the snapshot in flight, in snapshot state. */
  pendingSnapshot = 0;
  /**
   * Whether we heard from the follower since the last check-quorum round; a leader without a
   * recently active quorum steps down. Also gates snapshot sending (no point to a dead peer).
   */
  recentActive = false;
  /**
   * In probe state: a MsgApp is out, wait for its answer (or a heartbeat response) before
   * sending another. In replicate state: the inflight window is full.
   */
  msgAppFlowPaused = false;
  inflights: Inflights;
  isLearner: boolean;

  constructor(next: number, inflights: Inflights, isLearner: boolean) {
    this.next = next;
    this.inflights = inflights;
    this.isLearner = isLearner;
  }

  clone(): Progress {
    const p = new Progress(this.next, this.inflights.clone(), this.isLearner);
    p.match = this.match;
    p.state = this.state;
    p.pendingSnapshot = this.pendingSnapshot;
    p.recentActive = this.recentActive;
    p.msgAppFlowPaused = this.msgAppFlowPaused;
    return p;
  }

  private resetState(state: ProgressState): void {
    this.msgAppFlowPaused = false;
    this.pendingSnapshot = 0;
    this.state = state;
    this.inflights.reset();
  }

  becomeProbe(): void {
    // After a snapshot, the follower has at least the snapshot; resume right after it.
    if (this.state === 'snapshot') {
      const pending = this.pendingSnapshot;
      this.resetState('probe');
      this.next = Math.max(this.match + 1, pending + 1);
    } else {
      this.resetState('probe');
      this.next = this.match + 1;
    }
  }

  becomeReplicate(): void {
    this.resetState('replicate');
    this.next = this.match + 1;
  }

  becomeSnapshot(snapshotIndex: number): void {
    this.resetState('snapshot');
    this.pendingSnapshot = snapshotIndex;
    this.next = snapshotIndex + 1;
  }

  /** A MsgApp with `entries` entries (`bytes` in size) was just sent at `next`. */
  sentEntries(entries: number, bytes: number): void {
    if (this.state === 'replicate') {
      if (entries > 0) {
        // Optimistic: assume it will be accepted and pipeline the next batch after it.
        this.next += entries;
        this.inflights.add(this.next - 1, bytes);
      }
      this.msgAppFlowPaused = this.inflights.full();
    } else if (this.state === 'probe') {
      if (entries > 0) this.msgAppFlowPaused = true;
    }
  }

  /** An acknowledgement up to n arrived. Returns whether match advanced (not stale). */
  maybeUpdate(n: number): boolean {
    let updated = false;
    if (this.match < n) {
      this.match = n;
      updated = true;
      this.msgAppFlowPaused = false;
    }
    this.next = Math.max(this.next, n + 1);
    return updated;
  }

  /**
   * A MsgApp at `rejected` was refused; matchHint is where the follower (or the leader's
   * findConflictByTerm on the follower's hint) says the logs may match. Returns false if the
   * rejection is stale (answers a message from before the latest reset) and must be ignored.
   */
  maybeDecrTo(rejected: number, matchHint: number): boolean {
    if (this.state === 'replicate') {
      if (rejected <= this.match) return false;
      // Pipelining went wrong; go back to right after the known match and probe from there.
      this.next = this.match + 1;
      return true;
    }
    if (this.next - 1 !== rejected) return false;
    this.next = Math.max(Math.min(rejected, matchHint + 1), this.match + 1);
    this.msgAppFlowPaused = false;
    return true;
  }

  /** Whether sending MsgApp to this follower is paused (heartbeats still go out). */
  isPaused(): boolean {
    if (this.state === 'snapshot') return true;
    return this.msgAppFlowPaused;
  }

  toString(): string {
    let s = `${this.state} match=${this.match} next=${this.next}`;
    if (this.isLearner) s += ' learner';
    if (this.msgAppFlowPaused) s += ' paused';
    if (this.pendingSnapshot > 0) s += ` pendingSnap=${this.pendingSnapshot}`;
    if (!this.recentActive) s += ' inactive';
    const n = this.inflights.count();
    if (n > 0) s += ` inflight=${n}${this.inflights.full() ? '[full]' : ''}`;
    return s;
  }
}
