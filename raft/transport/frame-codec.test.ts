// Frame and snapshot-upload decoding: split anywhere, reject garbage, never over-buffer.

import { describe, expect, it } from 'vitest';
import { CodecError } from '../codec/codec-error.js';
import { EntryType, MessageType, type Message } from '../types.js';
import { FrameDecoder, SnapshotUploadDecoder, encodeFrame, encodeSnapshotHeader } from './frame-codec.js';
import { Backoff } from './backoff.js';
import { PeerQueue } from './peer-queue.js';

function msg(i: number, extra: Partial<Message> = {}): Message {
  return {
    type: MessageType.App, from: 1, to: 2, term: 3, logTerm: 2, index: i, commit: i - 1, reject: false, rejectHint: 0,
    context: new Uint8Array(0),
    entries: [{ index: i + 1, term: 3, type: EntryType.Normal, data: new TextEncoder().encode(`cmd-${i}`) }],
    ...extra,
  };
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

describe('FrameDecoder', () => {
  const stream = concat([encodeFrame([msg(1), msg(2)]), encodeFrame([msg(3)]), encodeFrame([])]);

  it("gives a frame's entries one buffer of their own, apart from the received bytes", () => {
    const received = concat([encodeFrame([msg(1), msg(2)]), encodeFrame([msg(3)])]);
    const [first, second] = new FrameDecoder(1 << 20).push(received);
    const data = first!.flatMap((m) => m.entries.map((e) => e.data));
    expect(data.map((d) => new TextDecoder().decode(d))).toEqual(['cmd-1', 'cmd-2']);
    // One allocation per frame, not per entry...
    expect(new Set(data.map((d) => d.buffer)).size).toBe(1);
    expect(second![0]!.entries[0]!.data.buffer).not.toBe(data[0]!.buffer);
    // ...and not a view of the socket's chunk: reusing it changes nothing decoded.
    expect(data[0]!.buffer).not.toBe(received.buffer);
    received.fill(0);
    expect(data.map((d) => new TextDecoder().decode(d))).toEqual(['cmd-1', 'cmd-2']);
    expect(Buffer.isBuffer(data[0])).toBe(false);
  });

  it('decodes a stream split at every possible point', () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      const d = new FrameDecoder(1 << 20);
      const batches = [...d.push(stream.subarray(0, cut)), ...d.push(stream.subarray(cut))];
      d.finish();
      expect(batches.map((b) => b.map((m) => m.index))).toEqual([[1, 2], [3], []]);
    }
  });

  it('decodes a stream fed one byte at a time', () => {
    const d = new FrameDecoder(1 << 20);
    const batches: Message[][] = [];
    for (let i = 0; i < stream.length; i++) batches.push(...d.push(stream.subarray(i, i + 1)));
    expect(batches.flat().map((m) => m.index)).toEqual([1, 2, 3]);
  });

  it('rejects an oversized frame from its length alone', () => {
    const d = new FrameDecoder(1000);
    expect(() => d.push(new Uint8Array([0x7f, 0xff, 0xff, 0xff]))).toThrow(/exceeds/);
  });

  it('rejects a stream that ends inside a frame, and garbage payloads', () => {
    const d = new FrameDecoder(1 << 20);
    d.push(stream.subarray(0, 10));
    expect(() => d.finish()).toThrow(CodecError);
    const garbage = new Uint8Array([0, 0, 0, 5, 1, 200, 200, 200, 200]);
    expect(() => new FrameDecoder(1 << 20).push(garbage)).toThrow(CodecError);
    const badVersion = encodeFrame([msg(1)]);
    badVersion[4] = 9;
    expect(() => new FrameDecoder(1 << 20).push(badVersion)).toThrow(/version/);
  });

  it('random garbage only ever raises CodecError', () => {
    let x = 99;
    const rand = (): number => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (let i = 0; i < 2000; i++) {
      const buf = new Uint8Array(4 + Math.floor(rand() * 60)).map(() => Math.floor(rand() * 256));
      buf[0] = 0;
      buf[1] = 0;
      try {
        new FrameDecoder(1 << 20).push(buf);
      } catch (err) {
        expect(err).toBeInstanceOf(CodecError);
      }
    }
  });
});

describe('SnapshotUploadDecoder', () => {
  const data = new Uint8Array(20_000).map((_, i) => i % 251);
  const snapMsg = msg(5, {
    type: MessageType.Snap,
    entries: [],
    snapshot: { metadata: { index: 10, term: 3, confState: { voters: [1, 2], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false } }, data },
  });

  it('reassembles header and data from arbitrary chunks', () => {
    const upload = concat([encodeSnapshotHeader(snapMsg), data]);
    for (const chunk of [1, 7, 4096, upload.length]) {
      const d = new SnapshotUploadDecoder(1 << 20, 1 << 20);
      let out: Message | null = null;
      for (let at = 0; at < upload.length; at += chunk) out = d.push(upload.subarray(at, at + chunk)) ?? out;
      d.finish();
      expect(out).toEqual(snapMsg);
    }
  });

  it('refuses a snapshot above the limit before receiving it, extra bytes, and early ends', () => {
    expect(() => new SnapshotUploadDecoder(1 << 20, 1000).push(encodeSnapshotHeader(snapMsg))).toThrow(/exceeds/);
    const d = new SnapshotUploadDecoder(1 << 20, 1 << 20);
    d.push(encodeSnapshotHeader(snapMsg));
    expect(() => d.push(new Uint8Array(data.length + 1))).toThrow(/after the snapshot/);
    const early = new SnapshotUploadDecoder(1 << 20, 1 << 20);
    early.push(encodeSnapshotHeader(snapMsg));
    expect(() => early.finish()).toThrow(CodecError);
  });
});

describe('Backoff', () => {
  it('grows exponentially to the cap and resets', () => {
    const b = new Backoff({ initialMs: 50, maxMs: 1000, jitter: 0, random: () => 0.5 });
    expect([b.next(), b.next(), b.next(), b.next(), b.next(), b.next()]).toEqual([50, 100, 200, 400, 800, 1000]);
    b.reset();
    expect(b.next()).toBe(50);
  });

  it('applies jitter within bounds', () => {
    const lo = new Backoff({ initialMs: 100, maxMs: 1000, jitter: 0.2, random: () => 0 });
    const hi = new Backoff({ initialMs: 100, maxMs: 1000, jitter: 0.2, random: () => 0.999999 });
    expect(lo.next()).toBe(80);
    expect(hi.next()).toBe(120);
  });
});

describe('PeerQueue', () => {
  it('refuses beyond its message and byte bounds, never blocking', () => {
    const q = new PeerQueue({ maxMessages: 3, maxBytes: 1 << 20 });
    expect([q.push(msg(1)), q.push(msg(2)), q.push(msg(3)), q.push(msg(4))]).toEqual([true, true, true, false]);
    expect(q.takeBatch(1 << 20).map((m) => m.index)).toEqual([1, 2, 3]);
    const small = new PeerQueue({ maxMessages: 100, maxBytes: 200 });
    const big = msg(1, { entries: [{ index: 1, term: 1, type: EntryType.Normal, data: new Uint8Array(500) }] });
    expect(small.push(big)).toBe(true); // an oversized message still goes alone
    expect(small.push(msg(2))).toBe(false);
  });
});
