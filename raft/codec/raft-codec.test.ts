// Round-trip and hostile-input tests for raft/codec. Garbage, truncations and bit flips of
// valid encodings must either decode to something or throw CodecError; never anything else.

import { describe, expect, it } from 'vitest';
import { EntryType, MessageType, type Entry, type Message } from '../types.js';
import { BinaryReader } from './binary-reader.js';
import { BinaryWriter } from './binary-writer.js';
import { CodecError } from './codec-error.js';
import {
  decodeEntry,
  decodeHardState,
  decodeMessage,
  decodeSnapshotMetadata,
  encodeEntry,
  encodeHardState,
  encodeMessage,
  encodeSnapshotMetadata,
} from './raft-codec.js';

/** xorshift32: deterministic, seeded; tests never use Math.random. */
function seededRandom(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x100000000;
  };
}

function bytesOf(rand: () => number, n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
  return b;
}

function entry(index: number, term: number, data = 'x'): Entry {
  return { index, term, type: EntryType.Normal, data: new TextEncoder().encode(data) };
}

function fullMessage(): Message {
  return {
    type: MessageType.App,
    from: 1,
    to: 2,
    term: 2 ** 40,
    logTerm: 7,
    index: Number.MAX_SAFE_INTEGER,
    entries: [entry(10, 3, 'hello'), { index: 11, term: 3, type: EntryType.ConfChange, data: new Uint8Array(0) }],
    commit: 9,
    reject: true,
    rejectHint: 300,
    context: new Uint8Array([1, 2, 3]),
    snapshot: {
      metadata: {
        index: 5,
        term: 2,
        confState: { voters: [1, 2, 3], learners: [4], votersOutgoing: [], learnersNext: [5], autoLeave: true },
      },
      data: new Uint8Array([9, 9, 9]),
    },
  };
}

describe('varints', () => {
  it('round-trips boundaries up to 2^53-1', () => {
    const values = [0, 1, 127, 128, 255, 16383, 16384, 2 ** 31, 2 ** 32, 2 ** 32 + 1, 2 ** 49, Number.MAX_SAFE_INTEGER];
    const w = new BinaryWriter(1);
    for (const v of values) w.uvarint(v);
    const r = new BinaryReader(w.finish());
    for (const v of values) expect(r.uvarint()).toBe(v);
    r.end();
  });

  it('refuses to encode negatives, fractions and unsafe integers', () => {
    const w = new BinaryWriter();
    expect(() => w.uvarint(-1)).toThrow(RangeError);
    expect(() => w.uvarint(1.5)).toThrow(RangeError);
    expect(() => w.uvarint(2 ** 53)).toThrow(RangeError);
  });

  it('rejects overlong, overflowing and non-minimal varints', () => {
    const overlong = new Uint8Array(9).fill(0x80);
    expect(() => new BinaryReader(overlong).uvarint()).toThrow(CodecError);
    const above53 = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
    expect(() => new BinaryReader(above53).uvarint()).toThrow(/2\^53/);
    expect(() => new BinaryReader(new Uint8Array([0x81, 0x00])).uvarint()).toThrow(/non-minimal/);
  });
});

describe('round trips', () => {
  it('entries, hard state, snapshot metadata', () => {
    const e = entry(2 ** 45, 12, 'payload');
    expect(decodeEntry(encodeEntry(e))).toEqual(e);
    const hs = { term: 5, vote: 3, commit: 2 ** 33 };
    expect(decodeHardState(encodeHardState(hs))).toEqual(hs);
    const meta = fullMessage().snapshot!.metadata;
    expect(decodeSnapshotMetadata(encodeSnapshotMetadata(meta))).toEqual(meta);
  });

  it('messages with and without snapshot, with data omitted on request', () => {
    const m = fullMessage();
    expect(decodeMessage(encodeMessage(m))).toEqual(m);
    const { snapshot: _omit, ...plain } = m;
    expect(decodeMessage(encodeMessage(plain))).toEqual(plain);
    const header = decodeMessage(encodeMessage(m, { omitSnapshotData: true }));
    expect(header.snapshot!.metadata).toEqual(m.snapshot!.metadata);
    expect(header.snapshot!.data.length).toBe(0);
  });

  it('random messages round-trip', () => {
    const rand = seededRandom(42);
    const types = Object.values(MessageType);
    for (let i = 0; i < 500; i++) {
      const n = Math.floor(rand() * 4);
      const m: Message = {
        type: types[Math.floor(rand() * types.length)]!,
        from: Math.floor(rand() * 10),
        to: Math.floor(rand() * 10),
        term: Math.floor(rand() * 2 ** 40),
        logTerm: Math.floor(rand() * 100),
        index: Math.floor(rand() * 2 ** 52),
        entries: Array.from({ length: n }, (_, k) => ({
          index: k + 1,
          term: 1,
          type: rand() < 0.5 ? EntryType.Normal : EntryType.ConfChange,
          data: bytesOf(rand, Math.floor(rand() * 40)),
        })),
        commit: Math.floor(rand() * 1000),
        reject: rand() < 0.5,
        rejectHint: Math.floor(rand() * 1000),
        context: bytesOf(rand, Math.floor(rand() * 5)),
      };
      expect(decodeMessage(encodeMessage(m))).toEqual(m);
    }
  });
});

describe('hostile input', () => {
  function mustFailCleanly(decode: () => unknown): void {
    try {
      decode();
    } catch (err) {
      if (!(err instanceof CodecError)) throw err;
    }
  }

  it('every truncation of a valid message is rejected with CodecError', () => {
    const buf = encodeMessage(fullMessage());
    for (let cut = 0; cut < buf.length; cut++) {
      expect(() => decodeMessage(buf.subarray(0, cut))).toThrow(CodecError);
    }
  });

  it('trailing bytes are rejected', () => {
    const buf = encodeMessage(fullMessage());
    const longer = new Uint8Array(buf.length + 1);
    longer.set(buf);
    expect(() => decodeMessage(longer)).toThrow(/trailing/);
  });

  it('a huge length prefix fails before allocating', () => {
    const w = new BinaryWriter();
    w.uvarint(0).uvarint(1).uvarint(2).uvarint(1).uvarint(0).uvarint(0).uvarint(0).bool(false).uvarint(0);
    w.uvarint(2 ** 50); // context length
    expect(() => decodeMessage(w.finish())).toThrow(CodecError);
    const w2 = new BinaryWriter();
    w2.uvarint(0).uvarint(1).uvarint(2).uvarint(1).uvarint(0).uvarint(0).uvarint(0).bool(false).uvarint(0).bytes(new Uint8Array(0));
    w2.uvarint(2 ** 40); // entry count
    expect(() => decodeMessage(w2.finish())).toThrow(/entry count/);
  });

  it('random garbage and bit flips never throw anything but CodecError', () => {
    const rand = seededRandom(7);
    for (let i = 0; i < 3000; i++) {
      const garbage = bytesOf(rand, Math.floor(rand() * 64));
      mustFailCleanly(() => decodeMessage(garbage));
      mustFailCleanly(() => decodeEntry(garbage));
      mustFailCleanly(() => decodeHardState(garbage));
      mustFailCleanly(() => decodeSnapshotMetadata(garbage));
    }
    const valid = encodeMessage(fullMessage());
    for (let i = 0; i < 3000; i++) {
      const flipped = valid.slice();
      const at = Math.floor(rand() * flipped.length);
      flipped[at] = flipped[at]! ^ (1 << Math.floor(rand() * 8));
      mustFailCleanly(() => decodeMessage(flipped));
    }
  });
});
