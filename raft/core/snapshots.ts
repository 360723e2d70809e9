// raft/core/snapshots.ts owns the empty values of snapshot and membership shapes and the
// predicates over them, so "no snapshot" has exactly one representation.

import type { ConfState, HardState, Snapshot } from '../types.js';

export function emptyConfState(): ConfState {
  return { voters: [], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false };
}

export function emptySnapshot(): Snapshot {
  return { metadata: { index: 0, term: 0, confState: emptyConfState() }, data: new Uint8Array(0) };
}

export function isEmptySnapshot(s: Snapshot | undefined | null): boolean {
  return !s || s.metadata.index === 0;
}

export function isEmptyHardState(hs: HardState): boolean {
  return hs.term === 0 && hs.vote === 0 && hs.commit === 0;
}

export function hardStateEqual(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commit === b.commit;
}
