// member-status: the figures every report of a replica's Raft state derives from one status
// (member list, readyz, metrics, leadership), as a table of views.

import { describe, expect, it } from 'vitest';
import type { RaftNodeStatus } from '../../raft/node/raft-node.js';
import { memberIds, memberRaftStates, memberReachable, ownRaftState } from './member-status.js';

const membership = (voters: number[], learners: number[] = []) => ({ voters, learners, votersOutgoing: [], learnersNext: [], autoLeave: false });

function status(o: Partial<RaftNodeStatus> & Pick<RaftNodeStatus, 'id' | 'role' | 'leader'>): RaftNodeStatus {
  return { term: 7, commit: 100, applied: 90, snapshotIndex: 50, membership: membership([1, 2, 3]), peers: new Map(), ...o };
}

const progress = (entries: [number, number][]) => new Map(entries.map(([id, match]) => [id, { match, next: match + 1, state: 'replicate' }]));

describe('ownRaftState', () => {
  it.each([
    { name: 'leader', s: status({ id: 1, role: 'leader', leader: 1 }), want: { isLeader: true, hasLeader: true, applyLag: 10 } },
    { name: 'follower with a leader', s: status({ id: 2, role: 'follower', leader: 1, applied: 100 }), want: { isLeader: false, hasLeader: true, applyLag: 0 } },
    { name: 'candidate without a leader', s: status({ id: 3, role: 'candidate', leader: 0 }), want: { isLeader: false, hasLeader: false, applyLag: 10 } },
    { name: 'applied past commit (learnt commit lags)', s: status({ id: 2, role: 'follower', leader: 1, applied: 105 }), want: { isLeader: false, hasLeader: true, applyLag: 0 } },
    // Removed, it still remembers its leader, who no longer answers it: not ready, no leader.
    { name: 'removed from the membership', s: status({ id: 4, role: 'follower', leader: 1, applied: 100 }), want: { isLeader: false, hasLeader: false, applyLag: 0, isMember: false } },
    // Removed while it was down: its applied membership still lists it, but a peer refused it as removed.
    { name: 'refused by a peer as removed', s: status({ id: 3, role: 'pre-candidate', leader: 0, applied: 100, removed: { by: 1, at: 120 } }), want: { isLeader: false, hasLeader: false, applyLag: 0, isMember: false } },
    { name: 'a learner has its leader', s: status({ id: 4, role: 'follower', leader: 1, membership: membership([1, 2, 3], [4]) }), want: { isLeader: false, hasLeader: true, applyLag: 10 } },
    {
      name: 'leaving in a joint configuration, still a member',
      s: status({ id: 3, role: 'follower', leader: 1, membership: { ...membership([1, 2]), votersOutgoing: [1, 2, 3] } }),
      want: { isLeader: false, hasLeader: true, applyLag: 10 },
    },
  ])('$name', ({ s, want }) => {
    const own = ownRaftState(s);
    expect({ isLeader: own.isLeader, hasLeader: own.hasLeader, applyLag: own.applyLag, isMember: own.isMember }).toEqual({ isMember: true, ...want });
    expect([own.term, own.commit, own.applied, own.leader, own.role]).toEqual([s.term, s.commit, s.applied, s.leader, s.role]);
  });
});

describe('memberRaftStates', () => {
  it.each([
    {
      name: "the leader's view: replicated index per member, lag from the commit index",
      s: status({ id: 1, role: 'leader', leader: 1, progress: progress([[1, 100], [2, 98], [3, 60]]) }),
      want: [
        { id: 1, role: 'leader', applied: 90, lag: 10 },
        { id: 2, role: 'follower', applied: 98, lag: 2 },
        { id: 3, role: 'follower', applied: 60, lag: 40 },
      ],
    },
    {
      name: "a follower's view: exact for itself, others unknown",
      s: status({ id: 2, role: 'follower', leader: 1, applied: 100 }),
      want: [
        { id: 1, role: 'leader', applied: 0, lag: 100 },
        { id: 2, role: 'follower', applied: 100, lag: 0 },
        { id: 3, role: 'follower', applied: 0, lag: 100 },
      ],
    },
    {
      name: 'a candidate says so of itself only',
      s: status({ id: 3, role: 'pre-candidate', leader: 0 }),
      want: [
        { id: 1, role: 'follower', applied: 0, lag: 100 },
        { id: 2, role: 'follower', applied: 0, lag: 100 },
        { id: 3, role: 'candidate', applied: 90, lag: 10 },
      ],
    },
    {
      name: 'learners are learners whoever leads',
      s: status({ id: 1, role: 'leader', leader: 1, membership: membership([1, 2], [4]), progress: progress([[1, 100], [2, 100], [4, 30]]) }),
      want: [
        { id: 1, role: 'leader', applied: 90, lag: 10 },
        { id: 2, role: 'follower', applied: 100, lag: 0 },
        { id: 4, role: 'learner', applied: 30, lag: 70 },
      ],
    },
  ])('$name', ({ s, want }) => {
    expect(memberRaftStates(s).map(({ id, role, applied, lag }) => ({ id, role, applied, lag }))).toEqual(want);
    for (const m of memberRaftStates(s)) expect(m.term).toBe(s.term);
  });

  it('lists every member of a joint configuration once', () => {
    const s = status({ id: 1, role: 'leader', leader: 1, membership: { voters: [1, 2, 3], votersOutgoing: [1, 2, 5], learners: [6], learnersNext: [3], autoLeave: true } });
    expect(memberIds(s).sort()).toEqual([1, 2, 3, 5, 6]);
  });
});

describe('memberReachable', () => {
  const leader = status({ id: 1, role: 'leader', leader: 1 });
  const follower = status({ id: 2, role: 'follower', leader: 1 });
  it.each([
    ['itself, never heard from', leader, 1, undefined, true],
    ['the leader: a member heard within the election timeout', leader, 2, 80, true],
    ['the leader: a member silent for longer (killed, cut off)', leader, 3, 1500, false],
    ['the leader: a member never heard from (a new leader, the member down)', leader, 3, undefined, false],
    ['a follower: its leader, heard recently', follower, 1, 120, true],
    ['a follower: its leader, silent', follower, 1, 2500, false],
    ['a follower: another follower (they do not talk)', follower, 3, undefined, undefined],
  ] as const)('%s', (_what, s, member, silence, want) => {
    expect(memberReachable(s, member, silence, 1000)).toBe(want);
  });
});
