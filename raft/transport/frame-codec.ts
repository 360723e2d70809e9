// raft/transport/frame-codec.ts owns the byte framing of the transport's two channels.
//
// Message stream: a sequence of frames, each   u32 BE payload length | payload
//   payload = version byte (1) | uvarint message count | messages (raft/codec)
// A frame is one batch (what the driver sent to one peer in one go).
//
// Snapshot upload: u32 BE header length | header | snapshot data (exactly `dataLength` bytes)
//   header  = version byte (1) | message with its snapshot data left out | uvarint dataLength
//
// Decoders enforce size limits before buffering, so a hostile peer cannot make a receiver
// allocate more than the limit, and every malformation is a CodecError.

import { BinaryReader } from '../codec/binary-reader.js';
import { BinaryWriter } from '../codec/binary-writer.js';
import { CodecError } from '../codec/codec-error.js';
import { readMessage, writeMessage } from '../codec/raft-codec.js';
import { snapshotDataSize } from '../storage/snapshot-ref.js';
import { MessageType, type Message } from '../types.js';

export const WIRE_VERSION = 1;

/** Encodes one batch as one frame. */
export function encodeFrame(messages: readonly Message[]): Uint8Array {
  // Sized from the messages up front: an append of dozens of entries otherwise grows the
  // buffer (and copies it) several times. The result may be a view with some slack; the
  // transport only writes it to a socket.
  let estimate = 16;
  for (const m of messages) estimate += approximateMessageSize(m);
  const w = new BinaryWriter(estimate);
  w.u32(0).byte(WIRE_VERSION).uvarint(messages.length);
  for (const m of messages) writeMessage(w, m);
  w.patchU32(0, w.length - 4);
  return w.finish();
}

/** An upper bound of a message's encoded size, snapshot data left out (for buffer sizing). */
function approximateMessageSize(m: Message): number {
  let n = 96 + m.context.length;
  for (const e of m.entries) n += 32 + e.data.length;
  if (m.snapshot) n += 64 + 16 * (m.snapshot.metadata.confState.voters.length + m.snapshot.metadata.confState.learners.length + 4);
  return n;
}

/**
 * Decodes a frame's payload from `payload`, a copy of the frame's bytes owned by the result:
 * its messages' byte fields (entry data above all) are views of it. The received bytes are
 * views of socket chunks that must not be pinned, and a copy per entry cost an allocation of
 * its own per replicated entry on every follower. The entries of one frame are appended, kept
 * and dropped from the log together, so they share one buffer. A plain Uint8Array (not a
 * Buffer), as BinaryReader's copies were.
 */
function decodePayload(payload: Uint8Array): Message[] {
  const r = new BinaryReader(payload, true);
  const version = r.byte();
  if (version !== WIRE_VERSION) throw new CodecError('CODEC_VERSION', `wire version ${version}`);
  // A message takes well over 8 bytes; a count above that bound is a lie.
  const n = r.uvarintMax(Math.floor(r.remaining / 8), 'message count');
  const out: Message[] = [];
  for (let i = 0; i < n; i++) out.push(readMessage(r));
  r.end();
  return out;
}

/**
 * Incremental frame decoder for a byte stream. push() returns the batches completed by the
 * chunk; it throws CodecError on a malformed or oversized frame, after which the stream must be
 * abandoned. finish() throws if the stream ended inside a frame.
 *
 * A frame's payload is copied once, from the chunks it arrived in straight into the buffer its
 * messages keep (decodePayload): an append of dozens of entries spans several socket chunks,
 * and joining them first and copying the joined bytes again cost a second copy and buffer.
 */
export class FrameDecoder {
  private chunks: Uint8Array[] = [];
  /** Bytes of chunks[0] already consumed. */
  private offset = 0;
  private buffered = 0;

  /**
   * `onEmpty`: called for a frame of length 0 (the TLS pipe's keepalive probe, tls-pipe.ts);
   * without it such a frame is malformed.
   */
  constructor(
    private readonly maxFrameBytes: number,
    private readonly onEmpty?: () => void,
  ) {}

  push(chunk: Uint8Array): Message[][] {
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    const batches: Message[][] = [];
    for (;;) {
      if (this.buffered < 4) break;
      const len = this.peekU32();
      if (len > this.maxFrameBytes) throw new CodecError('CODEC_TOO_LARGE', `frame of ${len} bytes exceeds ${this.maxFrameBytes}`);
      if (this.buffered < 4 + len) break;
      this.copyOut(4, null);
      if (len === 0 && this.onEmpty) {
        this.onEmpty();
        continue;
      }
      batches.push(decodePayload(this.copyOut(len, new Uint8Array(len))!));
    }
    return batches;
  }

  finish(): void {
    if (this.buffered !== 0) throw new CodecError('CODEC_TRUNCATED', `stream ended inside a frame (${this.buffered} bytes)`);
  }

  /** The big-endian u32 at the read position (4 bytes are buffered), wherever the chunks split it. */
  private peekU32(): number {
    let v = 0;
    let c = 0;
    let at = this.offset;
    for (let i = 0; i < 4; i++) {
      while (at >= this.chunks[c]!.length) {
        c++;
        at = 0;
      }
      v = v * 256 + this.chunks[c]![at++]!;
    }
    return v;
  }

  /** Consumes `n` buffered bytes, copied into `into` unless it is null (skipped); returns `into`. */
  private copyOut(n: number, into: Uint8Array | null): Uint8Array | null {
    let done = 0;
    while (done < n) {
      const first = this.chunks[0]!;
      const take = Math.min(n - done, first.length - this.offset);
      into?.set(first.subarray(this.offset, this.offset + take), done);
      done += take;
      this.offset += take;
      if (this.offset === first.length) {
        this.chunks.shift();
        this.offset = 0;
      }
    }
    this.buffered -= n;
    return into;
  }
}

/** The header that precedes a snapshot's data on the snapshot channel. */
export function encodeSnapshotHeader(m: Message): Uint8Array {
  if (m.type !== MessageType.Snap || !m.snapshot) throw new RangeError('not a snapshot message');
  const w = new BinaryWriter(128);
  w.u32(0).byte(WIRE_VERSION);
  writeMessage(w, m, { omitSnapshotData: true });
  // Data held in a file travels as the file's bytes (snapshot-ref.ts).
  w.uvarint(snapshotDataSize(m.snapshot.data));
  w.patchU32(0, w.length - 4);
  return w.finish().slice();
}

/**
 * Incremental decoder of one snapshot upload: the header, then exactly dataLength bytes.
 * push() returns the complete message (with its data re-attached) once all bytes arrived;
 * bytes beyond that, or an upload that ends early (finish()), are CodecErrors.
 */
export class SnapshotUploadDecoder {
  private header: Message | null = null;
  private dataLength = 0;
  private headerBytes = new FrameDecoderBuffer();
  private data: Uint8Array[] = [];
  private received = 0;
  private done = false;

  /**
   * With `onData`, the data is handed over chunk by chunk as it arrives (to be written to a
   * file) instead of being collected: the message push() returns then has empty data.
   */
  constructor(
    private readonly maxHeaderBytes: number,
    private readonly maxSnapshotBytes: number,
    private readonly onData?: (chunk: Uint8Array) => void,
  ) {}

  /** The header's message once it has arrived (its data not yet). */
  get message(): Message | null {
    return this.header;
  }

  /** The data length the header announced. */
  get length(): number {
    return this.dataLength;
  }

  push(chunk: Uint8Array): Message | null {
    if (this.done) throw new CodecError('CODEC_INVALID', 'bytes after the snapshot data');
    if (!this.header) {
      this.headerBytes.append(chunk);
      if (this.headerBytes.length < 4) return null;
      const len = this.headerBytes.u32At0();
      if (len > this.maxHeaderBytes) throw new CodecError('CODEC_TOO_LARGE', `snapshot header of ${len} bytes`);
      if (this.headerBytes.length < 4 + len) return null;
      const all = this.headerBytes.bytes();
      const r = new BinaryReader(all.subarray(4, 4 + len));
      const version = r.byte();
      if (version !== WIRE_VERSION) throw new CodecError('CODEC_VERSION', `wire version ${version}`);
      const m = readMessage(r);
      this.dataLength = r.uvarint();
      r.end();
      if (m.type !== MessageType.Snap || !m.snapshot) throw new CodecError('CODEC_INVALID', 'snapshot upload without a snapshot message');
      if (this.dataLength > this.maxSnapshotBytes) {
        throw new CodecError('CODEC_TOO_LARGE', `snapshot of ${this.dataLength} bytes exceeds ${this.maxSnapshotBytes}`);
      }
      this.header = m;
      chunk = all.subarray(4 + len);
    }
    if (chunk.length > 0) {
      if (this.received + chunk.length > this.dataLength) throw new CodecError('CODEC_INVALID', 'bytes after the snapshot data');
      if (this.onData) this.onData(chunk);
      else this.data.push(chunk);
      this.received += chunk.length;
    }
    if (this.received < this.dataLength) return null;
    this.done = true;
    if (this.onData) return { ...this.header, snapshot: { metadata: this.header.snapshot!.metadata, data: new Uint8Array(0) } };
    const data = new Uint8Array(this.dataLength);
    let at = 0;
    for (const c of this.data) {
      data.set(c, at);
      at += c.length;
    }
    this.data = [];
    return { ...this.header, snapshot: { metadata: this.header.snapshot!.metadata, data } };
  }

  finish(): void {
    if (!this.done) throw new CodecError('CODEC_TRUNCATED', 'snapshot upload ended early');
  }
}

/** A tiny growable buffer for the snapshot header, which may arrive split over chunks. */
class FrameDecoderBuffer {
  private buf = new Uint8Array(0);
  get length(): number {
    return this.buf.length;
  }
  append(chunk: Uint8Array): void {
    const next = new Uint8Array(this.buf.length + chunk.length);
    next.set(this.buf);
    next.set(chunk, this.buf.length);
    this.buf = next;
  }
  u32At0(): number {
    return ((this.buf[0]! << 24) >>> 0) + (this.buf[1]! << 16) + (this.buf[2]! << 8) + this.buf[3]!;
  }
  bytes(): Uint8Array {
    return this.buf;
  }
}
