// raft/node/snapshot-envelope.ts owns the layout of the snapshot data RaftNode stores and ships:
// the member address book (so that a member restarted from a snapshot, or a new member caught
// up by one, can reach members added before it) followed by the application's image.
//   version byte (1) | uvarint member count | (uvarint id, bytes url)* | application bytes
// The same layout is written and read as a stream for images held in files (snapshot-ref.ts).
// An in-place snapshot (StateMachine.persist: the state machine's own storage holds the state)
// has version byte 2 and no application bytes: it is never shipped, only restarted from.

import { BinaryReader } from '../codec/binary-reader.js';
import { BinaryWriter } from '../codec/binary-writer.js';
import { CodecError } from '../codec/codec-error.js';
import type { NodeId } from '../types.js';

const VERSION = 1;
const IN_PLACE_VERSION = 2;

/** The envelope's bytes before the application's image. */
function envelopeHead(members: ReadonlyMap<NodeId, string>, version = VERSION): Uint8Array {
  const w = new BinaryWriter(64);
  w.byte(version).uvarint(members.size);
  const enc = new TextEncoder();
  for (const [id, url] of members) w.uvarint(id).bytes(enc.encode(url));
  return w.finish();
}

export function wrapSnapshot(members: ReadonlyMap<NodeId, string>, app: Uint8Array): Uint8Array {
  // The image may be megabytes: copy it once, into a buffer of the exact size.
  const head = envelopeHead(members);
  const out = new Uint8Array(head.length + app.length);
  out.set(head);
  out.set(app, head.length);
  return out;
}

/** The data of an in-place snapshot: the address book, and no image (see StateMachine.persist). */
export function wrapInPlaceSnapshot(members: ReadonlyMap<NodeId, string>): Uint8Array {
  return envelopeHead(members, IN_PLACE_VERSION).slice();
}

/** Whether inline snapshot data is an in-place snapshot's (a file reference never is: it starts with its magic). */
export function isInPlaceSnapshotData(data: Uint8Array): boolean {
  return data.length > 0 && data[0] === IN_PLACE_VERSION;
}

/** wrapSnapshot() as chunks, for an image produced as a stream. */
export async function* wrapSnapshotStream(members: ReadonlyMap<NodeId, string>, app: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  yield envelopeHead(members).slice();
  yield* app;
}

/** Largest envelope head read while looking for the image (member URLs are at most 4 KiB each). */
const MAX_HEAD_BYTES = 16 << 20;

/**
 * unwrapSnapshot() for an envelope that arrives as chunks: reads just enough of them for the
 * member list; `app` yields the rest (to be consumed once).
 */
export async function unwrapSnapshotStream(
  chunks: AsyncIterable<Uint8Array>,
): Promise<{ members: Map<NodeId, string>; app: AsyncGenerator<Uint8Array>; inPlace: boolean }> {
  const it = chunks[Symbol.asyncIterator]();
  let buf = new Uint8Array(0);
  for (;;) {
    let head: ReturnType<typeof readHead> | null = null;
    try {
      head = readHead(buf, true);
    } catch (err) {
      if (!(err instanceof CodecError && err.code === 'CODEC_TRUNCATED') || buf.length > MAX_HEAD_BYTES) throw err;
    }
    if (head) {
      const rest = buf.subarray(head.length);
      const app = (async function* (): AsyncGenerator<Uint8Array> {
        if (rest.length > 0) yield rest;
        for (let n = await it.next(); !n.done; n = await it.next()) yield n.value;
      })();
      return { members: head.members, app, inPlace: head.inPlace };
    }
    const n = await it.next();
    if (n.done) throw new CodecError('CODEC_TRUNCATED', 'snapshot envelope ends before its member list');
    const next = new Uint8Array(buf.length + n.value.length);
    next.set(buf);
    next.set(n.value, buf.length);
    buf = next;
  }
}

/** `streamed`: `data` may be only the start of the envelope (a truncated head is not invalid). */
function readHead(data: Uint8Array, streamed = false): { members: Map<NodeId, string>; length: number; inPlace: boolean } {
  const r = new BinaryReader(data);
  const version = r.byte();
  if (version !== VERSION && version !== IN_PLACE_VERSION) throw new CodecError('CODEC_VERSION', `snapshot envelope version ${version}`);
  const n = r.uvarintMax(streamed ? MAX_HEAD_BYTES : r.remaining, 'member count');
  const members = new Map<NodeId, string>();
  const dec = new TextDecoder();
  for (let i = 0; i < n; i++) members.set(r.uvarint(), dec.decode(r.bytes(4096)));
  const inPlace = version === IN_PLACE_VERSION;
  if (inPlace && !streamed && r.remaining > 0) throw new CodecError('CODEC_INVALID', 'in-place snapshot envelope carries an image');
  return { members, length: r.offset, inPlace };
}

export function unwrapSnapshot(data: Uint8Array): { members: Map<NodeId, string>; app: Uint8Array; inPlace: boolean } {
  const { members, length, inPlace } = readHead(data);
  return { members, app: data.subarray(length), inPlace };
}
