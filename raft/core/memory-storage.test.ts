// MemoryStorage: the LogStorage contract (term/entries bounds and their error codes) and the
// driver-side mutations (append with overwrite, snapshots, compaction).
import { describe, expect, it } from 'vitest';
import { type Entry, EntryType } from '../types.js';
import { isCompacted, isRaftError, isUnavailable } from './errors.js';
import { MemoryStorage } from './memory-storage.js';

const ent = (index: number, term: number, data = ''): Entry => ({ index, term, type: EntryType.Normal, data: new TextEncoder().encode(data) });
const cs = { voters: [1, 2, 3], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false };

function storageWith(first: number, last: number, term = 1): MemoryStorage {
  const s = new MemoryStorage();
  if (first > 1) s.applySnapshot({ metadata: { index: first - 1, term, confState: cs }, data: new Uint8Array(0) });
  const ents: Entry[] = [];
  for (let i = first; i <= last; i++) ents.push(ent(i, term));
  s.append(ents);
  return s;
}

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('MemoryStorage', () => {
  it('reports terms within [firstIndex-1, lastIndex] and coded errors outside', () => {
    const s = storageWith(4, 6, 2);
    expect(s.firstIndex()).toBe(4);
    expect(s.lastIndex()).toBe(6);
    expect(s.term(3)).toBe(2); // the snapshot's term
    expect(s.term(6)).toBe(2);
    expect(isCompacted(thrown(() => s.term(2)))).toBe(true);
    expect(isUnavailable(thrown(() => s.term(7)))).toBe(true);
  });

  it('returns entries bounded by size but always at least one', () => {
    const s = new MemoryStorage();
    s.append([ent(1, 1, 'aaaa'), ent(2, 1, 'bbbb'), ent(3, 1, 'cccc')]);
    expect(s.entries(1, 4, Number.MAX_SAFE_INTEGER)).toHaveLength(3);
    expect(s.entries(1, 4, 1)).toHaveLength(1);
    expect(s.entries(1, 4, 40)).toHaveLength(2); // each entry counts payload + 16
    expect(isCompacted(thrown(() => storageWith(4, 6).entries(3, 5, 100)))).toBe(true);
  });

  it('append overwrites a conflicting suffix and ignores compacted prefixes', () => {
    const s = storageWith(1, 5, 1);
    s.append([ent(4, 2), ent(5, 2), ent(6, 2)]);
    expect([4, 5, 6].map((i) => s.term(i))).toEqual([2, 2, 2]);
    expect(s.term(3)).toBe(1);
    s.compact(3);
    s.append([ent(2, 2), ent(3, 2), ent(4, 3)]); // 2 and 3 are behind the first index
    expect(s.firstIndex()).toBe(4);
    expect(s.lastIndex()).toBe(4);
    expect(s.term(4)).toBe(3);
  });

  it('refuses an append that would leave a gap', () => {
    const s = storageWith(1, 3);
    expect(isRaftError(thrown(() => s.append([ent(5, 1)])), 'RAFT_INVARIANT')).toBe(true);
  });

  it('creates snapshots and compacts; older snapshots are out of date', () => {
    const s = storageWith(1, 10, 1);
    const snap = s.createSnapshot(7, cs, new Uint8Array([7]));
    expect(snap.metadata).toMatchObject({ index: 7, term: 1 });
    s.compact(5);
    expect(s.firstIndex()).toBe(6);
    expect(s.snapshot().metadata.index).toBe(7);
    expect(isRaftError(thrown(() => s.createSnapshot(6, cs, new Uint8Array())), 'RAFT_SNAPSHOT_OUT_OF_DATE')).toBe(true);
    expect(isCompacted(thrown(() => s.compact(5)))).toBe(true);
  });

  it('applySnapshot replaces the whole log', () => {
    const s = storageWith(1, 5, 1);
    s.applySnapshot({ metadata: { index: 9, term: 3, confState: cs }, data: new Uint8Array(0) });
    expect(s.firstIndex()).toBe(10);
    expect(s.lastIndex()).toBe(9);
    expect(s.initialState().confState.voters).toEqual([1, 2, 3]);
    expect(isRaftError(thrown(() => s.applySnapshot({ metadata: { index: 8, term: 3, confState: cs }, data: new Uint8Array(0) })), 'RAFT_SNAPSHOT_OUT_OF_DATE')).toBe(true);
  });
});
