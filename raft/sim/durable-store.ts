// raft/sim/durable-store.ts owns the simulated disk of one node. Writes land in a volatile
// buffer (the page cache) and reach the durable image only on sync(); a crash keeps a random
// prefix of the buffered writes (writes are ordered, as with an append-only file) and loses
// the rest. The in-memory MemoryStorage is rebuilt from durableState() on restart, which is
// how the simulation catches any reliance on state that was never synced.

import type { DurableLogState, Entry, HardState, Snapshot } from '../types.js';
import type { Xoshiro128 } from './prng.js';

type Write =
  | { kind: 'hardState'; hs: HardState }
  | { kind: 'entries'; entries: Entry[] }
  /** A snapshot received from the leader: replaces the whole log. */
  | { kind: 'install'; snapshot: Snapshot }
  /** A snapshot the application took: entries up to compactIndex are dropped. */
  | { kind: 'compact'; snapshot: Snapshot; compactIndex: number };

export class DurableStore {
  private hardState: HardState = { term: 0, vote: 0, commit: 0 };
  private snapshot: Snapshot | null = null;
  private entries: Entry[] = [];
  private buffered: Write[] = [];

  write(w: Write): void {
    this.buffered.push(w);
  }

  /** fsync: every buffered write becomes durable, in order. */
  sync(): void {
    for (const w of this.buffered) this.applyWrite(w);
    this.buffered = [];
  }

  /** Power loss: a random prefix of the buffered writes made it to disk, the rest is gone. */
  crash(rng: Xoshiro128): void {
    const keep = rng.int(this.buffered.length + 1);
    for (const w of this.buffered.slice(0, keep)) this.applyWrite(w);
    this.buffered = [];
  }

  durableState(): DurableLogState {
    return { hardState: { ...this.hardState }, snapshot: this.snapshot, entries: this.entries.slice() };
  }

  private applyWrite(w: Write): void {
    switch (w.kind) {
      case 'hardState':
        this.hardState = { ...w.hs };
        return;
      case 'entries': {
        if (w.entries.length === 0) return;
        const first = w.entries[0].index;
        const base = this.entries.length > 0 ? this.entries[0].index : (this.snapshot?.metadata.index ?? 0) + 1;
        // Truncate any conflicting suffix, then append.
        const keep = Math.max(0, first - base);
        this.entries = this.entries.slice(0, keep).concat(w.entries.filter((e) => e.index >= base));
        return;
      }
      case 'install':
        this.snapshot = w.snapshot;
        this.entries = [];
        return;
      case 'compact':
        this.snapshot = w.snapshot;
        this.entries = this.entries.filter((e) => e.index > w.compactIndex);
        return;
    }
  }
}
