// internal/cluster/member-status owns what a replica says about the Raft state of the members:
// its own (role, leader, term, commit and applied index, apply lag) and each member's role,
// term, applied index and lag as its member list shows them. Everything that reports these
// figures — the member list (/cluster/v1/members), the raft readyz check, the Raft metrics,
// leadership of the replicator, the liveness log — derives them here from one RaftNode status,
// so they cannot disagree on what a role or a lag is. Imports: raft node (status type).

import type { RaftNodeStatus, RaftRole } from '../../raft/node/raft-node.js';

export type MemberRole = 'leader' | 'follower' | 'learner' | 'candidate';

/** This replica's own Raft state. */
export interface OwnRaftState {
  role: RaftRole;
  /** The leader this replica knows, 0 when none. */
  leader: number;
  /**
   * A leader is known and this replica is a member of the membership it applied. A replica
   * removed from the cluster (`clusterd members remove`) still remembers the leader it last
   * heard, but that leader no longer answers it: no reads are confirmed, no writes commit,
   * so it has no leader for everything that asks (readyz, has_leader, the member record).
   */
  hasLeader: boolean;
  /**
   * This replica is in the membership it applied (a voter or a learner, joint configurations
   * included), and no peer refused it as removed at an index it has not applied (`removed`).
   */
  isMember: boolean;
  /** A peer refused this replica as removed from the cluster at log index `at` (it was stopped or cut off then). */
  removed?: { by: number; at: number };
  isLeader: boolean;
  term: number;
  commit: number;
  applied: number;
  /** Committed entries not applied here yet. */
  applyLag: number;
  snapshotIndex: number;
}

/** One member's Raft figures as this replica sees them (see memberRaftStates). */
export interface MemberRaftState {
  id: number;
  role: MemberRole;
  term: number;
  applied: number;
  lag: number;
}

export function ownRaftState(s: RaftNodeStatus): OwnRaftState {
  const isMember = memberIds(s).includes(s.id) && !s.removed;
  return {
    ...(s.removed ? { removed: { ...s.removed } } : {}),
    role: s.role,
    leader: s.leader,
    hasLeader: s.leader !== 0 && isMember,
    isMember,
    isLeader: s.role === 'leader',
    term: s.term,
    commit: s.commit,
    applied: s.applied,
    applyLag: Math.max(0, s.commit - s.applied),
    snapshotIndex: s.snapshotIndex,
  };
}

/** Every member of the membership, voters and learners (joint configurations included). */
export function memberIds(s: RaftNodeStatus): number[] {
  const m = s.membership;
  return [...new Set([...m.voters, ...m.votersOutgoing, ...m.learners, ...m.learnersNext])];
}

/**
 * Each member's figures from this replica's status: exact for this replica; on the leader, a
 * member's replicated index stands for its applied index (what it holds durably); elsewhere
 * other members are unknown (0), which is why the member list asks the leader.
 */
export function memberRaftStates(s: RaftNodeStatus): MemberRaftState[] {
  return memberIds(s).map((id) => {
    const isSelf = id === s.id;
    const role: MemberRole =
      s.membership.learners.includes(id) || s.membership.learnersNext.includes(id)
        ? 'learner'
        : id === s.leader
          ? 'leader'
          : isSelf && (s.role === 'candidate' || s.role === 'pre-candidate')
            ? 'candidate'
            : 'follower';
    const applied = isSelf ? s.applied : (s.progress?.get(id)?.match ?? 0);
    return { id, role, term: s.term, applied, lag: Math.max(0, s.commit - applied) };
  });
}

/**
 * Whether `member` answers, as this replica can tell: itself always; on the leader, every
 * member (each answers its heartbeats, so silence for an election timeout means it is down or
 * cut off); on a follower only the leader (followers do not talk to each other), undefined
 * for the rest. The leader's replication figures for a member it cannot reach are its last
 * known ones (0 after a new leader's election), not that member's state.
 */
export function memberReachable(s: RaftNodeStatus, member: number, silenceMs: number | undefined, electionTimeoutMs: number): boolean | undefined {
  if (member === s.id) return true;
  if (s.role !== 'leader' && member !== s.leader) return undefined;
  return silenceMs !== undefined && silenceMs <= electionTimeoutMs;
}
