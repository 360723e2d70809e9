// raft/core/quorum.ts owns quorum arithmetic, and nothing else: given a set of voters (a
// majority config) or two of them (a joint config, during a membership change), which index is
// stored on a quorum, and has an election been won, lost or is it still pending. It knows
// nothing of terms or logs, which keeps it small enough to property-test against a naive
// version (quorum.test.ts).

import type { NodeId } from '../types.js';

export enum VoteResult {
  Pending = 'VotePending',
  Lost = 'VoteLost',
  Won = 'VoteWon',
}

/** Returns the index a voter has acknowledged, or undefined if nothing is known of it. */
export type AckedIndexer = (id: NodeId) => number | undefined;

/** Stands for "no constraint": the committed index of an empty config, so joint min() ignores it. */
export const NO_LIMIT = Number.MAX_SAFE_INTEGER;

/** A set of voters whose decisions need a simple majority. */
export class MajorityConfig {
  readonly ids: ReadonlySet<NodeId>;

  constructor(ids: Iterable<NodeId> = []) {
    this.ids = new Set(ids);
  }

  get size(): number {
    return this.ids.size;
  }

  has(id: NodeId): boolean {
    return this.ids.has(id);
  }

  /** Sorted ids, so that iteration (and hence message order) is deterministic. */
  sorted(): NodeId[] {
    return [...this.ids].sort((a, b) => a - b);
  }

  toString(): string {
    return `(${this.sorted().join(' ')})`;
  }

  /**
   * The largest index that a majority has acknowledged. Sorting the acked indexes ascending,
   * the value at position n - (n/2 + 1) is <= the indexes of at least n/2 + 1 voters (itself
   * and everything after it). Unknown voters count as 0. An empty config returns NO_LIMIT so
   * that a joint config whose outgoing half is empty is decided by the incoming half alone.
   */
  committedIndex(acked: AckedIndexer): number {
    const n = this.ids.size;
    if (n === 0) return NO_LIMIT;
    const srt: number[] = [];
    for (const id of this.ids) srt.push(acked(id) ?? 0);
    srt.sort((a, b) => a - b);
    return srt[n - (Math.floor(n / 2) + 1)];
  }

  /**
   * Won once a majority granted, Lost once a majority can no longer be reached, Pending
   * otherwise. An empty config wins, for the same joint-config reason as above.
   */
  voteResult(votes: ReadonlyMap<NodeId, boolean>): VoteResult {
    if (this.ids.size === 0) return VoteResult.Won;
    let yes = 0;
    let missing = 0;
    for (const id of this.ids) {
      const v = votes.get(id);
      if (v === undefined) missing++;
      else if (v) yes++;
    }
    const q = Math.floor(this.ids.size / 2) + 1;
    if (yes >= q) return VoteResult.Won;
    if (yes + missing >= q) return VoteResult.Pending;
    return VoteResult.Lost;
  }
}

/**
 * Two majority configs, incoming and outgoing; a decision needs a majority in each. Outside a
 * membership change the outgoing config is empty and the joint config acts like incoming.
 */
export class JointConfig {
  readonly incoming: MajorityConfig;
  readonly outgoing: MajorityConfig;

  constructor(incoming: MajorityConfig = new MajorityConfig(), outgoing: MajorityConfig = new MajorityConfig()) {
    this.incoming = incoming;
    this.outgoing = outgoing;
  }

  isJoint(): boolean {
    return this.outgoing.size > 0;
  }

  /** Every voter of either half, sorted. */
  ids(): NodeId[] {
    const all = new Set<NodeId>([...this.incoming.ids, ...this.outgoing.ids]);
    return [...all].sort((a, b) => a - b);
  }

  has(id: NodeId): boolean {
    return this.incoming.has(id) || this.outgoing.has(id);
  }

  toString(): string {
    return this.isJoint() ? `${this.incoming}&&${this.outgoing}` : this.incoming.toString();
  }

  committedIndex(acked: AckedIndexer): number {
    return Math.min(this.incoming.committedIndex(acked), this.outgoing.committedIndex(acked));
  }

  voteResult(votes: ReadonlyMap<NodeId, boolean>): VoteResult {
    const r1 = this.incoming.voteResult(votes);
    const r2 = this.outgoing.voteResult(votes);
    if (r1 === r2) return r1; // both agree: Won, Lost or Pending
    if (r1 === VoteResult.Lost || r2 === VoteResult.Lost) return VoteResult.Lost;
    return VoteResult.Pending; // one won, the other is pending
  }
}
