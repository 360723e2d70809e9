// raft/transport/tls-pipe.ts owns the wire protocol of the message pipe when it runs straight
// on the mutual-TLS socket rather than inside an HTTP/2 stream: the hello that names sender,
// receiver and cluster, the receiver's answer, and the keepalive probes.
//
// Why not HTTP/2 for the pipe: Node's HTTP/2 session hands its frames to the socket in a
// native setImmediate, so every Raft message waited for the end of the sender's current I/O
// phase (measured with one put in flight: 0.16–0.22 ms at the median per hop, 0.6–1.1 ms at the
// 90th percentile, twice on every write's critical path), and nghttp2's framing and the
// Http2Stream machinery cost about a third of the CPU per message over a plain TLS socket
// (ping-pong of 355-byte frames between two processes). A socket write goes to the kernel in
// the call. Snapshots stay on their own HTTP/2 connections (http2-transport.ts).
//
// The pipe shares the member's listener: the client offers no ALPN protocol, so the HTTP/2
// server hands the authenticated socket over ('unknownProtocol'). A member of an earlier
// version answers such a socket with an HTTP/1.0 403 and closes it; the sender then falls back
// to the HTTP/2 pipe for that peer (mixed versions during a rolling upgrade keep talking).
//
// Client → receiver: HELLO = magic "RFT1" | u32 BE length | JSON {from, to, cluster, applied?}
//                    then frames (frame-codec.ts); a frame of length 0 is a PING. `applied`
//                    (the sender's applied log index) is absent from members of earlier versions.
// Receiver → client: "RFTA" (accepted) or "RFTE" | u32 BE length | reason (UTF-8), then close;
//                    after RFTA, 4 zero bytes (a frame of length 0) answer each PING. A sender
//                    the receiver knows was removed from the cluster is refused with the reason
//                    "removed member at index N" (removedRefusal), which it recognises; members
//                    of earlier versions only log it.

import type { NodeId } from '../types.js';

const HELLO_MAGIC = Buffer.from('RFT1', 'latin1');
const ACCEPT = Buffer.from('RFTA', 'latin1');
const REFUSE = Buffer.from('RFTE', 'latin1');
/** A hello is a few dozen bytes; anything longer is not a member speaking this protocol. */
const MAX_HELLO_BYTES = 4096;

/** What a pipe's opening names. */
export interface PipeHello {
  from: NodeId;
  to: NodeId;
  cluster: string;
  /** The sender's applied log index; undefined from a member of an earlier version. */
  applied?: number;
}

const REMOVED_REASON = 'removed member at index ';

/** The refusal reason for a sender whose removal from the cluster this member applied at `index`. */
export function removedRefusal(index: number): string {
  return `${REMOVED_REASON}${index}`;
}

/** The removal index a refusal reason carries (removedRefusal), or undefined for any other reason. */
export function removedIndexOf(reason: string): number | undefined {
  if (!reason.startsWith(REMOVED_REASON)) return undefined;
  const index = Number(reason.slice(REMOVED_REASON.length));
  return Number.isSafeInteger(index) && index > 0 ? index : undefined;
}

/** A keepalive probe (sender → receiver) and its answer (receiver → sender): an empty frame. */
export const PIPE_PING = new Uint8Array(4);

export function encodeHello(h: PipeHello): Uint8Array {
  const body = Buffer.from(JSON.stringify({ from: h.from, to: h.to, cluster: h.cluster, ...(h.applied === undefined ? {} : { applied: h.applied }) }), 'utf8');
  const head = Buffer.allocUnsafe(8);
  HELLO_MAGIC.copy(head, 0);
  head.writeUInt32BE(body.length, 4);
  return Buffer.concat([head, body]);
}

export function encodeRefusal(reason: string): Uint8Array {
  const body = Buffer.from(reason, 'utf8');
  const head = Buffer.allocUnsafe(8);
  REFUSE.copy(head, 0);
  head.writeUInt32BE(body.length, 4);
  return Buffer.concat([head, body]);
}

export const PIPE_ACCEPT: Uint8Array = ACCEPT;

/**
 * Reads the hello at the start of a received pipe. push() returns undefined while it is
 * incomplete, then the hello and the bytes after it (the first frames); it throws an Error
 * with the reason on anything that is not a well-formed hello.
 */
export class HelloReader {
  private buf: Buffer = Buffer.alloc(0);

  push(chunk: Uint8Array): { hello: PipeHello; rest: Buffer } | undefined {
    this.buf = this.buf.length === 0 ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) : Buffer.concat([this.buf, chunk]);
    if (this.buf.length >= 4 && !this.buf.subarray(0, 4).equals(HELLO_MAGIC)) throw new Error('not a raft pipe hello');
    if (this.buf.length < 8) return undefined;
    const len = this.buf.readUInt32BE(4);
    if (len > MAX_HELLO_BYTES) throw new Error(`hello of ${len} bytes`);
    if (this.buf.length < 8 + len) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(this.buf.toString('utf8', 8, 8 + len));
    } catch {
      throw new Error('hello is not JSON');
    }
    const { from, to, cluster, applied } = (parsed ?? {}) as Record<string, unknown>;
    if (typeof from !== 'number' || typeof to !== 'number' || typeof cluster !== 'string') throw new Error('hello lacks from, to or cluster');
    if (applied !== undefined && (typeof applied !== 'number' || !Number.isSafeInteger(applied) || applied < 0)) throw new Error('hello has a bad applied index');
    return { hello: { from, to, cluster, ...(applied === undefined ? {} : { applied }) }, rest: this.buf.subarray(8 + len) };
  }
}

/**
 * Reads what a receiver sends back on a pipe: first its answer to the hello, then one empty
 * frame per PING. push() reports each event in order; bytes that are neither (an HTTP/1.0 403
 * from a member without pipes) come back as 'legacy'.
 */
export class AnswerReader {
  private buf: Buffer = Buffer.alloc(0);
  private answered = false;

  push(chunk: Uint8Array): Array<{ kind: 'accepted' } | { kind: 'refused'; reason: string } | { kind: 'pong' } | { kind: 'legacy' } | { kind: 'garbage' }> {
    this.buf = this.buf.length === 0 ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) : Buffer.concat([this.buf, chunk]);
    const out: ReturnType<AnswerReader['push']> = [];
    for (;;) {
      if (this.buf.length < 4) return out;
      const head = this.buf.subarray(0, 4);
      if (!this.answered) {
        if (head.equals(ACCEPT)) {
          this.answered = true;
          this.buf = this.buf.subarray(4);
          out.push({ kind: 'accepted' });
          continue;
        }
        if (head.equals(REFUSE)) {
          if (this.buf.length < 8) return out;
          const len = this.buf.readUInt32BE(4);
          if (len > MAX_HELLO_BYTES) return [...out, { kind: 'garbage' }];
          if (this.buf.length < 8 + len) return out;
          out.push({ kind: 'refused', reason: this.buf.toString('utf8', 8, 8 + len) });
          this.buf = Buffer.alloc(0);
          return out;
        }
        return [...out, { kind: 'legacy' }];
      }
      if (head.readUInt32BE(0) !== 0) return [...out, { kind: 'garbage' }];
      this.buf = this.buf.subarray(4);
      out.push({ kind: 'pong' });
    }
  }
}
