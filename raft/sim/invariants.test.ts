// The safety checker and the crash model have teeth: fabricated violations are reported, and a
// driver that sends messages without syncing first is caught by the simulation.
import { describe, expect, it } from 'vitest';
import { type Entry, EntryType } from '../types.js';
import { isRaftError } from '../core/errors.js';
import { MemoryStorage } from '../core/memory-storage.js';
import { SimFailure } from './cluster.js';
import { SafetyChecker } from './invariants.js';
import { runSeed } from './run-seed.js';

const e = (index: number, term: number, data: string): Entry => ({ index, term, type: EntryType.Normal, data: new TextEncoder().encode(data) });

function checker(): SafetyChecker {
  return new SafetyChecker((msg) => {
    throw new Error(msg);
  });
}

describe('SafetyChecker', () => {
  it('reports different entries applied at the same index (state machine safety)', () => {
    const c = checker();
    c.applied(1, e(1, 1, 'a'));
    expect(() => c.applied(2, e(1, 1, 'b'))).toThrow(/state machine safety/);
  });

  it('reports a gap in a node\'s applied sequence', () => {
    const c = checker();
    c.applied(1, e(1, 1, 'a'));
    expect(() => c.applied(1, e(3, 1, 'c'))).toThrow(/applied index 3 after 1/);
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
