// raft/core/memory-storage.ts owns MemoryStorage: the in-memory image of a node's durable log.
// The core only reads it (LogStorage). The driver writes it, and only after the corresponding
// durable write has completed, so the core never sees state that could vanish on a crash.
// Layout: ents[0] is a dummy entry holding the snapshot's (index, term); real entries follow.

import type { ConfState, Entry, HardState, LogStorage, Snapshot } from '../types.js';
import { EntryType } from '../types.js';
import { limitSize } from './entries.js';
import {
  CompactedError,
  RaftInvariantError,
  SnapshotOutOfDateError,
  UnavailableError,
} from './errors.js';
import { emptyConfState, emptySnapshot } from './snapshots.js';

export class MemoryStorage implements LogStorage {
  private hardState: HardState = { term: 0, vote: 0, commit: 0 };
  private snap: Snapshot = emptySnapshot();
  private ents: Entry[] = [{ term: 0, index: 0, type: EntryType.Normal, data: new Uint8Array(0) }];

  initialState(): { hardState: HardState; confState: ConfState } {
    return { hardState: { ...this.hardState }, confState: cloneConf(this.snap.metadata.confState) };
  }

  /** Driver: record the hard state after it is durable. */
  setHardState(hs: HardState): void {
    this.hardState = { ...hs };
  }

  entries(lo: number, hi: number, maxBytes: number): Entry[] {
    const offset = this.ents[0].index;
    if (lo <= offset) throw new CompactedError();
    if (hi > this.lastIndex() + 1) {
      throw new RaftInvariantError(`entries' hi(${hi}) is out of bound lastindex(${this.lastIndex()})`);
    }
    if (this.ents.length === 1) throw new UnavailableError(); // only the dummy entry
    return limitSize(this.ents.slice(lo - offset, hi - offset), maxBytes);
  }

  term(i: number): number {
    const offset = this.ents[0].index;
    if (i < offset) throw new CompactedError();
    if (i - offset >= this.ents.length) throw new UnavailableError();
    return this.ents[i - offset].term;
  }

  lastIndex(): number {
    return this.ents[0].index + this.ents.length - 1;
  }

  firstIndex(): number {
    return this.ents[0].index + 1;
  }

  snapshot(): Snapshot {
    return this.snap;
  }

  /**
   * Driver: replace the whole log with a received snapshot (after it is durable). Entries are
   * dropped: a snapshot from the leader supersedes everything the follower held.
   */
  applySnapshot(snap: Snapshot): void {
    if (this.snap.metadata.index >= snap.metadata.index) throw new SnapshotOutOfDateError();
    this.snap = snap;
    this.ents = [{ term: snap.metadata.term, index: snap.metadata.index, type: EntryType.Normal, data: new Uint8Array(0) }];
  }

  /**
   * Driver: replace the data of the latest snapshot, at index i, with another image of the same
   * state (an in-place snapshot, which holds no image, by one that does: see RaftNode).
   */
  replaceSnapshotData(i: number, data: Uint8Array): Snapshot {
    if (i !== this.snap.metadata.index) throw new RaftInvariantError(`snapshot data for ${i} cannot replace the snapshot at ${this.snap.metadata.index}`);
    this.snap = { metadata: this.snap.metadata, data };
    return this.snap;
  }

  /**
   * Application: record a snapshot of its state machine at applied index i (cs is the
   * membership as of i). Does not drop entries; call compact for that. Entries after i stay,
   * so followers that are only a little behind can still be caught up from the log.
   */
  createSnapshot(i: number, cs: ConfState | undefined, data: Uint8Array): Snapshot {
    if (i <= this.snap.metadata.index) throw new SnapshotOutOfDateError();
    const offset = this.ents[0].index;
    if (i > this.lastIndex()) {
      throw new RaftInvariantError(`snapshot ${i} is out of bound lastindex(${this.lastIndex()})`);
    }
    this.snap = {
      metadata: {
        index: i,
        term: this.ents[i - offset].term,
        confState: cs ? cloneConf(cs) : this.snap.metadata.confState,
      },
      data,
    };
    return this.snap;
  }

  /**
   * Discard entries before compactIndex (which becomes the new dummy entry). The application
   * must not compact past its applied index nor past a snapshot it has created.
   */
  compact(compactIndex: number): void {
    const offset = this.ents[0].index;
    if (compactIndex <= offset) throw new CompactedError();
    if (compactIndex > this.lastIndex()) {
      throw new RaftInvariantError(`compact ${compactIndex} is out of bound lastindex(${this.lastIndex()})`);
    }
    const i = compactIndex - offset;
    const dummy: Entry = { term: this.ents[i].term, index: this.ents[i].index, type: EntryType.Normal, data: new Uint8Array(0) };
    this.ents = [dummy, ...this.ents.slice(i + 1)];
  }

  /**
   * Driver: append entries that are now durable. Entries may overlap the tail (a follower
   * overwriting a conflicting suffix): everything from the first new index on is replaced.
   */
  append(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    const first = this.firstIndex();
    const last = entries[0].index + entries.length - 1;
    if (last < first) return; // entirely compacted away already
    let ents = entries as Entry[];
    if (first > entries[0].index) ents = ents.slice(first - entries[0].index);
    const offset = ents[0].index - this.ents[0].index;
    if (offset > this.ents.length) {
      throw new RaftInvariantError(`missing log entry [last: ${this.lastIndex()}, append at: ${ents[0].index}]`);
    }
    if (offset === this.ents.length) {
      // The common case, appending at the end: in place, so that a Ready costs its own
      // entries rather than a copy of the whole retained log.
      for (const e of ents) this.ents.push(e);
      return;
    }
    this.ents = this.ents.slice(0, offset).concat(ents);
  }
}

function cloneConf(cs: ConfState): ConfState {
  return {
    voters: [...cs.voters],
    learners: [...cs.learners],
    votersOutgoing: [...cs.votersOutgoing],
    learnersNext: [...cs.learnersNext],
    autoLeave: cs.autoLeave,
  };
}

export { emptyConfState };
