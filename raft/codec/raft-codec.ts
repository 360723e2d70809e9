// raft/codec/raft-codec.ts owns the compact binary form of raft/types.ts values, shared by the
// durable log store (raft/storage) and the wire (raft/transport). Fields are written in a fixed
// order as varints and length-prefixed bytes (ConfChange entry data is the core's own
// encoding, raft/core/conf-change.ts); there are no tags, so any change to a layout must
// bump the version byte of the container that carries it (store format, wire frame).
// Decoders validate everything (enum ranges, counts against the bytes left, trailing bytes)
// and throw CodecError; they never trust a length before checking it against the input.

import {
  EntryType,
  MessageType,
  type ConfState,
  type Entry,
  type HardState,
  type Message,
  type Snapshot,
  type SnapshotMetadata,
} from '../types.js';
import { BinaryReader } from './binary-reader.js';
import { BinaryWriter } from './binary-writer.js';
import { CodecError } from './codec-error.js';

/** Wire numbers for MessageType. Append only: the position is the encoding. */
const MESSAGE_TYPES: readonly MessageType[] = [
  MessageType.Hup,
  MessageType.Beat,
  MessageType.Prop,
  MessageType.App,
  MessageType.AppResp,
  MessageType.Vote,
  MessageType.VoteResp,
  MessageType.PreVote,
  MessageType.PreVoteResp,
  MessageType.Snap,
  MessageType.Heartbeat,
  MessageType.HeartbeatResp,
  MessageType.Unreachable,
  MessageType.SnapStatus,
  MessageType.CheckQuorum,
  MessageType.TransferLeader,
  MessageType.TimeoutNow,
  MessageType.ReadIndex,
  MessageType.ReadIndexResp,
];
const MESSAGE_TYPE_NUMBER = new Map<MessageType, number>(MESSAGE_TYPES.map((t, i) => [t, i]));

// ---- Entry ----------------------------------------------------------------------------------

export function writeEntry(w: BinaryWriter, e: Entry): void {
  w.uvarint(e.term).uvarint(e.index).uvarint(e.type).bytes(e.data);
}

export function readEntry(r: BinaryReader): Entry {
  const term = r.uvarint();
  const index = r.uvarint();
  const type = r.uvarintMax(EntryType.ConfChange, 'entry type') as EntryType;
  const data = r.bytes();
  return { term, index, type, data };
}

/**
 * The entry's bytes. A view over a buffer with a little slack (at most 32 bytes): fine for
 * values handed to a database or socket, which copy them; slice() it to keep it long.
 */
export function encodeEntry(e: Entry): Uint8Array {
  const w = new BinaryWriter(32 + e.data.length);
  writeEntry(w, e);
  return w.finish();
}

export function decodeEntry(buf: Uint8Array): Entry {
  const r = new BinaryReader(buf);
  const e = readEntry(r);
  r.end();
  return e;
}

// ---- HardState ------------------------------------------------------------------------------

export function encodeHardState(hs: HardState): Uint8Array {
  return new BinaryWriter(24).uvarint(hs.term).uvarint(hs.vote).uvarint(hs.commit).finish().slice();
}

export function decodeHardState(buf: Uint8Array): HardState {
  const r = new BinaryReader(buf);
  const hs = { term: r.uvarint(), vote: r.uvarint(), commit: r.uvarint() };
  r.end();
  return hs;
}

// ---- ConfState / SnapshotMetadata / Snapshot ------------------------------------------------

function writeIds(w: BinaryWriter, ids: readonly number[]): void {
  w.uvarint(ids.length);
  for (const id of ids) w.uvarint(id);
}

function readIds(r: BinaryReader): number[] {
  // Each id takes at least one byte, so a count above the bytes left is a lie.
  const n = r.uvarintMax(r.remaining, 'id count');
  const ids: number[] = [];
  for (let i = 0; i < n; i++) ids.push(r.uvarint());
  return ids;
}

export function writeConfState(w: BinaryWriter, cs: ConfState): void {
  writeIds(w, cs.voters);
  writeIds(w, cs.learners);
  writeIds(w, cs.votersOutgoing);
  writeIds(w, cs.learnersNext);
  w.bool(cs.autoLeave);
}

export function readConfState(r: BinaryReader): ConfState {
  return {
    voters: readIds(r),
    learners: readIds(r),
    votersOutgoing: readIds(r),
    learnersNext: readIds(r),
    autoLeave: r.bool(),
  };
}

export function writeSnapshotMetadata(w: BinaryWriter, m: SnapshotMetadata): void {
  w.uvarint(m.index).uvarint(m.term);
  writeConfState(w, m.confState);
}

export function readSnapshotMetadata(r: BinaryReader): SnapshotMetadata {
  const index = r.uvarint();
  const term = r.uvarint();
  return { index, term, confState: readConfState(r) };
}

export function encodeSnapshotMetadata(m: SnapshotMetadata): Uint8Array {
  const w = new BinaryWriter(64);
  writeSnapshotMetadata(w, m);
  return w.finish().slice();
}

export function decodeSnapshotMetadata(buf: Uint8Array): SnapshotMetadata {
  const r = new BinaryReader(buf);
  const m = readSnapshotMetadata(r);
  r.end();
  return m;
}

// ---- Message --------------------------------------------------------------------------------

export interface MessageEncodeOptions {
  /**
   * Leave the snapshot's data out (its metadata is still written). The transport streams
   * snapshot data separately and re-attaches it on the receiving side.
   */
  omitSnapshotData?: boolean;
}

export function writeMessage(w: BinaryWriter, m: Message, opts: MessageEncodeOptions = {}): void {
  const t = MESSAGE_TYPE_NUMBER.get(m.type);
  if (t === undefined) throw new RangeError(`unknown message type ${String(m.type)}`);
  w.uvarint(t)
    .uvarint(m.from)
    .uvarint(m.to)
    .uvarint(m.term)
    .uvarint(m.logTerm)
    .uvarint(m.index)
    .uvarint(m.commit)
    .bool(m.reject)
    .uvarint(m.rejectHint)
    .bytes(m.context);
  w.uvarint(m.entries.length);
  for (const e of m.entries) writeEntry(w, e);
  if (m.snapshot) {
    w.bool(true);
    writeSnapshotMetadata(w, m.snapshot.metadata);
    w.bytes(opts.omitSnapshotData ? new Uint8Array(0) : m.snapshot.data);
  } else {
    w.bool(false);
  }
}

export function readMessage(r: BinaryReader): Message {
  const type = MESSAGE_TYPES[r.uvarintMax(MESSAGE_TYPES.length - 1, 'message type')]!;
  const from = r.uvarint();
  const to = r.uvarint();
  const term = r.uvarint();
  const logTerm = r.uvarint();
  const index = r.uvarint();
  const commit = r.uvarint();
  const reject = r.bool();
  const rejectHint = r.uvarint();
  const context = r.bytes();
  // An entry is at least four bytes (term, index, type, data length).
  const n = r.uvarintMax(Math.floor(r.remaining / 4), 'entry count');
  const entries: Entry[] = [];
  for (let i = 0; i < n; i++) entries.push(readEntry(r));
  let snapshot: Snapshot | undefined;
  if (r.bool()) {
    const metadata = readSnapshotMetadata(r);
    snapshot = { metadata, data: r.bytes() };
  }
  const m: Message = { type, from, to, term, logTerm, index, entries, commit, reject, rejectHint, context };
  if (snapshot) m.snapshot = snapshot;
  return m;
}

export function encodeMessage(m: Message, opts: MessageEncodeOptions = {}): Uint8Array {
  const w = new BinaryWriter(64);
  writeMessage(w, m, opts);
  return w.finish().slice();
}

export function decodeMessage(buf: Uint8Array): Message {
  const r = new BinaryReader(buf);
  const m = readMessage(r);
  r.end();
  return m;
}

export { CodecError };
