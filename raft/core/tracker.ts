// raft/core/tracker.ts owns the leader's (and a candidate's) bookkeeping over the membership:
// the active configuration (joint voters, learners, learners-to-be), one Progress per member,
// and the votes of the election in progress. It turns those into quorum questions for
// quorum.ts: what is committed, who won, is a quorum recently active.

import type { ConfState, NodeId } from '../types.js';
import { JointConfig, MajorityConfig, VoteResult } from './quorum.js';
import type { Progress } from './progress.js';

export interface TrackerConfig {
  voters: JointConfig;
  /** Members that receive the log but do not vote. Disjoint from voters. */
  learners: Set<NodeId>;
  /**
   * Voters of the outgoing config that become learners when the joint config is left. They
   * cannot be learners yet: a node may not be both voter and learner at once.
   */
  learnersNext: Set<NodeId>;
  /** Leave the joint config automatically once it is committed. */
  autoLeave: boolean;
}

export function emptyTrackerConfig(): TrackerConfig {
  return { voters: new JointConfig(), learners: new Set(), learnersNext: new Set(), autoLeave: false };
}

export function cloneTrackerConfig(c: TrackerConfig): TrackerConfig {
  return {
    voters: new JointConfig(new MajorityConfig(c.voters.incoming.ids), new MajorityConfig(c.voters.outgoing.ids)),
    learners: new Set(c.learners),
    learnersNext: new Set(c.learnersNext),
    autoLeave: c.autoLeave,
  };
}

const sortIds = (s: Iterable<NodeId>): NodeId[] => [...s].sort((a, b) => a - b);

export function describeConfig(c: TrackerConfig): string {
  let s = `voters=${c.voters.toString()}`;
  if (c.learners.size > 0) s += ` learners=(${sortIds(c.learners).join(' ')})`;
  if (c.learnersNext.size > 0) s += ` learners_next=(${sortIds(c.learnersNext).join(' ')})`;
  if (c.autoLeave) s += ' autoleave';
  return s;
}

export type ProgressMap = Map<NodeId, Progress>;

export class ProgressTracker {
  config: TrackerConfig = emptyTrackerConfig();
  progress: ProgressMap = new Map();
  votes = new Map<NodeId, boolean>();
  readonly maxInflight: number;
  readonly maxInflightBytes: number;

  constructor(maxInflight: number, maxInflightBytes: number) {
    this.maxInflight = maxInflight;
    this.maxInflightBytes = maxInflightBytes;
  }

  confState(): ConfState {
    return {
      voters: this.config.voters.incoming.sorted(),
      votersOutgoing: this.config.voters.outgoing.sorted(),
      learners: sortIds(this.config.learners),
      learnersNext: sortIds(this.config.learnersNext),
      autoLeave: this.config.autoLeave,
    };
  }

  /** A single voter and no joint config: every decision is this node's alone. */
  isSingleton(): boolean {
    return this.config.voters.incoming.size === 1 && !this.config.voters.isJoint();
  }

  /** The largest index stored on a quorum of voters (learners never count). */
  committed(): number {
    return this.config.voters.committedIndex((id) => this.progress.get(id)?.match);
  }

  /** Calls f for each member in increasing id order: deterministic message order. */
  visit(f: (id: NodeId, pr: Progress) => void): void {
    for (const id of sortIds(this.progress.keys())) f(id, this.progress.get(id) as Progress);
  }

  /** Whether a quorum of voters was recently active; the caller's own entry is counted active. */
  quorumActive(self: NodeId): boolean {
    const votes = new Map<NodeId, boolean>();
    this.visit((id, pr) => {
      if (!pr.isLearner) votes.set(id, id === self || pr.recentActive);
    });
    return this.config.voters.voteResult(votes) === VoteResult.Won;
  }

  voterIds(): NodeId[] {
    return this.config.voters.ids();
  }

  resetVotes(): void {
    this.votes = new Map();
  }

  /** Records the first vote from id in this election; later ones (duplicates) are ignored. */
  recordVote(id: NodeId, granted: boolean): void {
    if (!this.votes.has(id)) this.votes.set(id, granted);
  }

  tallyVotes(): { granted: number; rejected: number; result: VoteResult } {
    let granted = 0;
    let rejected = 0;
    for (const [id, pr] of this.progress) {
      if (pr.isLearner) continue;
      const v = this.votes.get(id);
      if (v === undefined) continue;
      if (v) granted++;
      else rejected++;
    }
    return { granted, rejected, result: this.config.voters.voteResult(this.votes) };
  }
}
