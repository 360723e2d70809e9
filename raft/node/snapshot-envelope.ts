// raft/node/snapshot-envelope.ts owns the layout of the snapshot data RaftNode stores and ships:
// the member address book (so that a member restarted from a snapshot, or a new member caught
// up by one, can reach members added before it) followed by the application's image.
//   version byte (1) | uvarint member count | (uvarint id, bytes url)* | application bytes

import { BinaryReader } from '../codec/binary-reader.js';
import { BinaryWriter } from '../codec/binary-writer.js';
import { CodecError } from '../codec/codec-error.js';
import type { NodeId } from '../types.js';

const VERSION = 1;

export function wrapSnapshot(members: ReadonlyMap<NodeId, string>, app: Uint8Array): Uint8Array {
  const w = new BinaryWriter(64);
  w.byte(VERSION).uvarint(members.size);
  const enc = new TextEncoder();
  for (const [id, url] of members) w.uvarint(id).bytes(enc.encode(url));
  // The image may be megabytes: copy it once, into a buffer of the exact size.
  const head = w.finish();
  const out = new Uint8Array(head.length + app.length);
  out.set(head);
  out.set(app, head.length);
  return out;
}

export function unwrapSnapshot(data: Uint8Array): { members: Map<NodeId, string>; app: Uint8Array } {
  const r = new BinaryReader(data);
  const version = r.byte();
  if (version !== VERSION) throw new CodecError('CODEC_VERSION', `snapshot envelope version ${version}`);
  const n = r.uvarintMax(r.remaining, 'member count');
  const members = new Map<NodeId, string>();
  const dec = new TextDecoder();
  for (let i = 0; i < n; i++) members.set(r.uvarint(), dec.decode(r.bytes(4096)));
  return { members, app: data.subarray(r.offset) };
}
