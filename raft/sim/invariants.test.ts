// The safety checker and the crash model have teeth: fabricated violations are reported, a
// driver that sends messages without syncing first and a vote rule that ignores how up to date
// the candidate's log is are caught by the simulation; and a legitimate election (a candidate
// of a lower term winning late) is not reported.
import { describe, expect, it } from 'vitest';
import { type Entry, EntryType } from '../types.js';
import { isRaftError } from '../core/errors.js';
import { noopLogger } from '../core/logger.js';
import { MemoryStorage } from '../core/memory-storage.js';
import { StateType } from '../core/raft.js';
import { RaftLog } from '../core/raft-log.js';
import { SimFailure } from './cluster.js';
import { type LeaderView, SafetyChecker } from './invariants.js';
import { runSeed } from './run-seed.js';

const e = (index: number, term: number, data: string): Entry => ({ index, term, type: EntryType.Normal, data: new TextEncoder().encode(data) });

/** A leader of `term` whose log holds `ents` (after the bootstrap snapshot at index 1). */
function leaderWith(term: number, ents: Entry[]): LeaderView & { state: StateType } {
  const s = new MemoryStorage();
  s.applySnapshot({ metadata: { index: 1, term: 1, confState: { voters: [1, 2, 3], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false } }, data: new Uint8Array(0) });
  s.append(ents);
  return { term, state: StateType.Leader, raftLog: new RaftLog(s, noopLogger, 1 << 20) };
}

function checker(): SafetyChecker {
  return new SafetyChecker((msg) => {
    throw new Error(msg);
  });
}

describe('SafetyChecker', () => {
  it('reports different entries applied at the same index (state machine safety)', () => {
    const c = checker();
    c.applied(1, e(1, 1, 'a'), 1);
    expect(() => c.applied(2, e(1, 1, 'b'), 1)).toThrow(/state machine safety/);
  });

  it('reports a gap in a node\'s applied sequence', () => {
    const c = checker();
    c.applied(1, e(1, 1, 'a'), 1);
    expect(() => c.applied(1, e(3, 1, 'c'), 1)).toThrow(/applied index 3 after 1/);
  });

  it('reports two different entries with the same index and term (log matching)', () => {
    const c = checker();
    const s = new MemoryStorage();
    c.entriesPersisted(1, s, [e(1, 1, 'a')]);
    expect(() => c.entriesPersisted(2, s, [e(1, 1, 'b')])).toThrow(/log matching/);
  });

  it('reports the same (index, term) after different predecessors (log matching)', () => {
    const c = checker();
    c.entriesPersisted(1, new MemoryStorage(), [e(1, 1, 'a'), e(2, 2, 'b')]);
    expect(() => c.entriesPersisted(2, new MemoryStorage(), [e(1, 3, 'x'), e(2, 2, 'b')])).toThrow(/follows term 3/);
  });
});

describe('SafetyChecker: leader completeness', () => {
  it('reports a leader of a higher term that lacks a committed entry', () => {
    const c = checker();
    c.applied(1, e(2, 3, 'x'), 3);
    expect(() => c.becameLeader(2, leaderWith(4, [e(2, 2, '')]))).toThrow(/leader completeness: leader 2 of term 4 has term 2 at index 2/);
  });

  it('reports a leader of a higher term whose log ends before a committed entry', () => {
    const c = checker();
    c.applied(1, e(2, 3, 'x'), 3);
    expect(() => c.becameLeader(2, leaderWith(4, []))).toThrow(/leader completeness: leader 2 of term 4 ends at 1/);
  });

  it('accepts a leader of a lower term than the commit that lacks the entry (seed 88411)', () => {
    // A term-2 candidate wins with a vote delayed in the network after the term-3 leader
    // committed its no-op at index 2; the term-2 leader's own no-op sits at index 2.
    const c = checker();
    c.applied(5, e(2, 3, ''), 3);
    expect(() => c.becameLeader(2, leaderWith(2, [e(2, 2, '')]))).not.toThrow();
  });

  it('accepts a leader elected in the commit term itself', () => {
    const c = checker();
    c.applied(1, e(2, 3, 'x'), 3);
    expect(() => c.becameLeader(1, leaderWith(3, [e(2, 3, 'x')]))).not.toThrow();
  });

  it('reports a sitting leader of a higher term when an entry it lacks is later seen committed in a lower term', () => {
    const c = checker();
    c.becameLeader(2, leaderWith(4, [e(2, 2, '')]));
    expect(() => c.applied(1, e(2, 3, 'x'), 3)).toThrow(/leader completeness: leader 2 of term 4/);
  });

  it('bounds the commit term by the lowest term the entry was applied in', () => {
    const c = checker();
    // First seen applied by a node already in term 5: the term-4 leader is not checked...
    c.applied(1, e(2, 3, 'x'), 5);
    const l = leaderWith(4, [e(2, 2, '')]);
    c.becameLeader(2, l);
    // ...until another node, still in term 3, applies it.
    expect(() => c.applied(3, e(2, 3, 'x'), 3)).toThrow(/leader completeness: leader 2 of term 4/);
  });

  it('does not check a node that stopped leading', () => {
    const c = checker();
    const l = leaderWith(4, [e(2, 2, '')]);
    c.becameLeader(2, l);
    l.state = StateType.Follower;
    expect(() => c.applied(1, e(2, 3, 'x'), 3)).not.toThrow();
  });
});

describe('simulation crash model', () => {
  it('catches a driver that sends messages before its writes are durable', { timeout: 60_000 }, () => {
    const failed: number[] = [];
    for (let seed = 1; seed <= 150 && failed.length === 0; seed++) {
      try {
        runSeed(seed, { unsafeSkipSync: true });
      } catch (err) {
        // Either an invariant check or the core's own consistency checks (a follower told to
        // commit entries it lost) notice.
        if (!(err instanceof SimFailure) && !isRaftError(err, 'RAFT_INVARIANT')) throw err;
        failed.push(seed);
      }
    }
    expect(failed.length).toBeGreaterThan(0);
  });
});

describe('simulation vote rule', () => {
  it('catches voters that grant votes without comparing logs (leader completeness)', { timeout: 60_000 }, () => {
    const caught: string[] = [];
    for (let seed = 1; seed <= 300 && caught.length === 0; seed++) {
      try {
        runSeed(seed, { unsafeGrantStaleVotes: true });
      } catch (err) {
        if (!(err instanceof SimFailure)) throw err;
        if (/leader completeness/.test(err.message)) caught.push(err.message.split('\n')[0]);
      }
    }
    expect(caught.length).toBeGreaterThan(0);
  });
});
