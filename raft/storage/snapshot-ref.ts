// raft/storage/snapshot-ref.ts owns snapshot data that lives in a file rather than in memory:
// the small reference that stands for it in Snapshot.data (what the core, the in-memory log
// and messages carry), and reading the file back as a stream. A log store with a snapshot
// directory hands out references (LevelLogStoreOptions.snapshotRefs), the transport streams
// the file to a peer and spools what it receives to a file of its own, and RaftNode restores
// the state machine from the stream: an image of any size is never held whole in memory.
//   magic "RAFTSNAPREF\0" (12 bytes) | f64 BE size | UTF-8 absolute path
// Inline snapshot data never starts with the magic: RaftNode's envelope starts with its
// version byte (1).

import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';

const MAGIC = Buffer.from('RAFTSNAPREF\0', 'latin1');

export interface SnapshotFileRef {
  /** Absolute path of the file holding the snapshot data. */
  path: string;
  /** Its length in bytes. */
  size: number;
}

export function encodeSnapshotRef(ref: SnapshotFileRef): Uint8Array {
  const path = Buffer.from(ref.path, 'utf8');
  const out = Buffer.alloc(MAGIC.length + 8 + path.length);
  MAGIC.copy(out, 0);
  out.writeDoubleBE(ref.size, MAGIC.length);
  path.copy(out, MAGIC.length + 8);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** The reference `data` encodes, or null when `data` is the snapshot data itself. */
export function decodeSnapshotRef(data: Uint8Array): SnapshotFileRef | null {
  if (data.length <= MAGIC.length + 8) return null;
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (!b.subarray(0, MAGIC.length).equals(MAGIC)) return null;
  return { size: b.readDoubleBE(MAGIC.length), path: b.toString('utf8', MAGIC.length + 8) };
}

/** The length of the snapshot data `data` stands for. */
export function snapshotDataSize(data: Uint8Array): number {
  return decodeSnapshotRef(data)?.size ?? data.length;
}

/**
 * The snapshot data as chunks of at most `chunkBytes`: read from the file a reference names
 * (failing if the file is shorter or longer than recorded), or slices of inline data.
 */
export async function* snapshotDataChunks(data: Uint8Array, chunkBytes = 1 << 20): AsyncGenerator<Uint8Array> {
  const ref = decodeSnapshotRef(data);
  if (!ref) {
    for (let at = 0; at < data.length; at += chunkBytes) yield data.subarray(at, Math.min(data.length, at + chunkBytes));
    return;
  }
  let read = 0;
  for await (const chunk of createReadStream(ref.path, { highWaterMark: chunkBytes }) as AsyncIterable<Buffer>) {
    read += chunk.length;
    if (read > ref.size) throw new Error(`snapshot file ${ref.path} is longer than the ${ref.size} bytes recorded`);
    yield new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  }
  if (read !== ref.size) throw new Error(`snapshot file ${ref.path} holds ${read} of the ${ref.size} bytes recorded`);
}

/** The whole snapshot data in memory (for state machines that restore from bytes). */
export async function readSnapshotData(data: Uint8Array): Promise<Uint8Array> {
  if (!decodeSnapshotRef(data)) return data;
  return concatChunks(snapshotDataChunks(data));
}

/** Chunks joined into one array. */
export async function concatChunks(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let n = 0;
  for await (const c of chunks) {
    parts.push(c);
    n += c.length;
  }
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * A fresh name for a received snapshot's data, spooled into the log store's snapshot
 * directory (which adopts it by rename when it records the snapshot, and removes leftovers
 * of a crash when it opens: isSpoolFileName).
 */
export function spoolFileName(): string {
  return `spool-${randomBytes(8).toString('hex')}.part`;
}

export function isSpoolFileName(name: string): boolean {
  return /^spool-[0-9a-f]{16}\.part$/.test(name);
}
