// raft/sim/invariants.ts owns the safety properties of Raft (paper Figure 3) as checks over a
// running simulation:
//   Election Safety      at most one leader can be elected in a given term;
//   Leader Append-Only   a leader never overwrites or deletes entries in its log;
//   Log Matching         if two logs contain an entry with the same index and term, then the
//                        logs are identical in all entries up through the given index;
//   Leader Completeness  if an entry is committed in a term, it is present in the logs of the
//                        leaders of all higher terms (not of lower ones: a candidate of an
//                        earlier term can still win with votes delayed in the network after a
//                        later leader committed entries it does not hold);
//   State Machine Safety if a server has applied an entry at an index, no other server ever
//                        applies a different entry for that index.
// Checks are incremental (each entry is checked when persisted or applied, each leader when
// elected and on every step) so they can run after every step of thousands of seeds.
// The term in which an entry was committed is not observable directly; the checker uses the
// lowest term any node was in when it applied the entry. That is never below the true commit
// term (commitment reaches a node only through messages of that term or later), so a leader is
// only ever checked against entries it must hold.

import type { Entry, LogStorage, NodeId } from '../types.js';
import type { RaftLog } from '../core/raft-log.js';
import { StateType } from '../core/raft.js';
import type { Simulation } from './cluster.js';

interface EntryIdentity {
  term: number;
  type: number;
  data: string;
}

interface CommittedEntry extends EntryIdentity {
  /** An upper bound of the term the entry was committed in (see the header). */
  commitTerm: number;
}

/** What the checker reads of a leader: Raft satisfies it. */
export interface LeaderView {
  readonly term: number;
  readonly state: StateType;
  readonly raftLog: RaftLog;
}

const key = (e: Entry): string => String.fromCharCode(...e.data);

export class SafetyChecker {
  private readonly fail: (msg: string) => never;
  /** term -> the node that was leader in it. */
  private leaders = new Map<number, NodeId>();
  /** (index) -> term -> identity and term of the previous entry, as first seen in any log. */
  private seen = new Map<number, Map<number, { id: EntryIdentity; prevTerm: number | undefined }>>();
  /** index -> the entry applied there (committed entries). */
  private appliedAt = new Map<number, CommittedEntry>();
  private maxApplied = 0;
  /** node -> index of the last entry it applied (to check gap-free, in-order application). */
  private lastApplied = new Map<NodeId, number>();
  /** leader node -> (term, last index, term at last index) seen on the previous step. */
  private leaderTail = new Map<NodeId, { term: number; index: number; lastTerm: number }>();
  private members = new Set<NodeId>();
  /** node -> the leader it became, while it may still be leading (pruned on every step). */
  private leading = new Map<NodeId, { view: LeaderView; term: number }>();

  constructor(fail: (msg: string) => never) {
    this.fail = fail;
  }

  /** Highest index applied anywhere: how far the cluster got. */
  highestApplied(): number {
    return this.maxApplied;
  }

  markMember(id: NodeId): void {
    this.members.add(id);
  }

  wasMember(id: NodeId): boolean {
    return this.members.has(id);
  }

  /** Log Matching, checked for each entry as it is written to a node's log. */
  entriesPersisted(node: NodeId, storage: LogStorage, ents: readonly Entry[]): void {
    for (let i = 0; i < ents.length; i++) {
      const e = ents[i];
      let prevTerm: number | undefined;
      if (i > 0) prevTerm = ents[i - 1].term;
      else {
        try {
          prevTerm = storage.term(e.index - 1);
        } catch {
          prevTerm = undefined; // compacted or not held: nothing to compare
        }
      }
      const id: EntryIdentity = { term: e.term, type: e.type, data: key(e) };
      let byTerm = this.seen.get(e.index);
      if (!byTerm) {
        byTerm = new Map();
        this.seen.set(e.index, byTerm);
      }
      const prior = byTerm.get(e.term);
      if (!prior) {
        byTerm.set(e.term, { id, prevTerm });
        continue;
      }
      if (prior.id.type !== id.type || prior.id.data !== id.data) {
        this.fail(`log matching: node ${node} has a different entry at index ${e.index} term ${e.term}`);
      }
      if (prevTerm !== undefined) {
        if (prior.prevTerm === undefined) prior.prevTerm = prevTerm;
        else if (prior.prevTerm !== prevTerm) {
          this.fail(`log matching: entry ${e.term}/${e.index} on node ${node} follows term ${prevTerm}, elsewhere term ${prior.prevTerm}`);
        }
      }
    }
  }

  /**
   * State Machine Safety, and that each node applies in order without gaps. `term` is the
   * applying node's current term, which bounds the entry's commit term from above.
   */
  applied(node: NodeId, e: Entry, term: number): void {
    const last = this.lastApplied.get(node);
    if (last !== undefined && e.index !== last + 1) {
      this.fail(`node ${node} applied index ${e.index} after ${last}`);
    }
    this.lastApplied.set(node, e.index);
    const prior = this.appliedAt.get(e.index);
    if (!prior) {
      const c: CommittedEntry = { term: e.term, type: e.type, data: key(e), commitTerm: term };
      this.appliedAt.set(e.index, c);
      if (e.index > this.maxApplied) this.maxApplied = e.index;
      this.checkLeadersHold(e.index, c);
      return;
    }
    if (prior.term !== e.term || prior.type !== e.type || prior.data !== key(e)) {
      this.fail(`state machine safety: node ${node} applied ${e.term}/${e.index} but term ${prior.term} (${JSON.stringify(prior.data)}) was applied there before`);
    }
    if (term < prior.commitTerm) {
      prior.commitTerm = term;
      this.checkLeadersHold(e.index, prior);
    }
  }

  /**
   * Leader Completeness for leaders elected before the checker learned that an entry was
   * committed (its appliers heard of the commit later than the election).
   */
  private checkLeadersHold(index: number, c: CommittedEntry): void {
    for (const [node, { view, term }] of this.leading) {
      if (view.state !== StateType.Leader || view.term !== term) continue;
      this.checkLeaderHolds(node, view, index, c);
    }
  }

  private checkLeaderHolds(node: NodeId, l: LeaderView, index: number, c: CommittedEntry): void {
    if (l.term <= c.commitTerm) return;
    // Below the leader's first index the entry is in its snapshot, which by construction holds it.
    if (index < l.raftLog.firstIndex()) return;
    if (index > l.raftLog.lastIndex()) {
      this.fail(`leader completeness: leader ${node} of term ${l.term} ends at ${l.raftLog.lastIndex()} but ${index} was committed by term ${c.commitTerm}`);
    }
    const t = l.raftLog.termOrZero(index);
    if (t !== c.term) {
      this.fail(`leader completeness: leader ${node} of term ${l.term} has term ${t} at index ${index}, committed with term ${c.term} by term ${c.commitTerm}`);
    }
  }

  /** A node restarted (or installed a snapshot): its application resumes after `applied`. */
  nodeRestarted(node: NodeId, applied: number): void {
    this.lastApplied.set(node, applied);
    this.leaderTail.delete(node);
    this.leading.delete(node);
  }

  snapshotInstalled(node: NodeId, index: number): void {
    this.lastApplied.set(node, index);
  }

  /**
   * Election Safety and Leader Completeness, when a node becomes leader: it must hold every
   * entry applied anywhere that was committed in a lower term.
   */
  becameLeader(node: NodeId, leader: LeaderView): void {
    const term = leader.term;
    const prior = this.leaders.get(term);
    if (prior !== undefined && prior !== node) this.fail(`election safety: ${node} and ${prior} both leaders in term ${term}`);
    this.leaders.set(term, node);
    this.leading.set(node, { view: leader, term });
    for (let i = leader.raftLog.firstIndex(); i <= this.maxApplied; i++) {
      const c = this.appliedAt.get(i);
      if (c) this.checkLeaderHolds(node, leader, i, c);
    }
  }

  /** Checks run after every simulation step. */
  checkStep(sim: Simulation): void {
    for (const n of sim.nodes.values()) {
      const r = n.rn?.raft;
      if (!r || r.state !== StateType.Leader) {
        this.leaderTail.delete(n.id);
        this.leading.delete(n.id);
        continue;
      }
      // Election Safety, including leaders that have not emitted a Ready yet.
      const prior = this.leaders.get(r.term);
      if (prior !== undefined && prior !== n.id) this.fail(`election safety: ${n.id} and ${prior} both leaders in term ${r.term}`);
      this.leaders.set(r.term, n.id);
      // Leader Append-Only: the previous tail is still there, unchanged.
      const tail = this.leaderTail.get(n.id);
      const li = r.raftLog.lastIndex();
      if (tail && tail.term === r.term) {
        if (li < tail.index) this.fail(`leader append-only: leader ${n.id} log shrank from ${tail.index} to ${li}`);
        if (tail.index >= r.raftLog.firstIndex() - 1 && r.raftLog.termOrZero(tail.index) !== tail.lastTerm) {
          this.fail(`leader append-only: leader ${n.id} rewrote entry ${tail.index}`);
        }
      }
      this.leaderTail.set(n.id, { term: r.term, index: li, lastTerm: r.raftLog.lastTerm() });
    }
  }
}
