import { describe, expect, it } from 'vitest';
import { EncodingArena } from './encoding-arena.js';
import type { EntryEncodings } from './types.js';

const MiB = 1 << 20;
const memo = (): EntryEncodings => ({ of: Buffer.alloc(0), protobuf: undefined, protobufOffset: 0, protobufLength: 0, cbor: undefined, cborOffset: 0, cborLength: 0 });
/** `n` bytes of `fill`. */
const bytes = (n: number, fill: number) => Buffer.alloc(n, fill);
const varint = (n: number): Buffer => {
  const out: number[] = [];
  for (; n > 127; n >>>= 7) out.push((n & 127) | 128);
  return Buffer.from([...out, n]);
};

describe('EncodingArena', () => {
  it('packs encodings into shared slabs and gives each back as it was kept', () => {
    const arena = new EncodingArena(8 * MiB);
    const memos = Array.from({ length: 100 }, memo);
    memos.forEach((m, i) => {
      arena.keep(m, 'protobuf', bytes(1000 + i, i), 1000 + i);
      arena.keep(m, 'cbor', bytes(50, 255 - i), 50);
    });
    expect(arena.bytes).toBe(MiB);
    memos.forEach((m, i) => {
      expect(arena.get(m, 'protobuf')!.equals(bytes(1000 + i, i))).toBe(true);
      expect(arena.get(m, 'cbor')!.equals(bytes(50, 255 - i))).toBe(true);
    });
    // Only the first `length` bytes of the source are kept (a scratch buffer's written part).
    const m = memo();
    arena.keep(m, 'protobuf', Buffer.from('abcdef'), 3);
    expect(arena.get(m, 'protobuf')!.toString()).toBe('abc');
  });

  it('stays under its budget by dropping the least recently used slab and what it held', () => {
    const arena = new EncodingArena(3 * MiB);
    const size = 64 * 1024;
    // Sixteen per slab: slabs A (0-15), B (16-31), C (32-47).
    const memos = Array.from({ length: 48 }, memo);
    memos.forEach((m, i) => arena.keep(m, 'protobuf', bytes(size, i), size));
    expect(arena.bytes).toBe(3 * MiB);
    // A is used again, so B is now the least recently used.
    arena.get(memos[0]!, 'protobuf');
    const late = memo();
    arena.keep(late, 'protobuf', bytes(size, 99), size);
    expect(arena.bytes).toBe(3 * MiB);
    const kept = memos.map((m) => arena.get(m, 'protobuf') !== undefined);
    expect(kept).toEqual([...Array(16).fill(true), ...Array(16).fill(false), ...Array(16).fill(true)]);
    expect(arena.get(late, 'protobuf')!.equals(bytes(size, 99))).toBe(true);
    // A view handed out before the drop still reads its bytes (a response being written).
    const view = arena.get(memos[0]!, 'protobuf')!;
    arena.get(memos[40]!, 'protobuf');
    arena.setBudget(MiB);
    expect(arena.bytes).toBe(MiB);
    expect(view.equals(bytes(size, 0))).toBe(true);
    expect(arena.get(memos[0]!, 'protobuf')).toBeUndefined();
    expect(arena.get(late, 'protobuf')).toBeUndefined();
    expect(arena.get(memos[40]!, 'protobuf')!.equals(bytes(size, 40))).toBe(true);
  });

  it('gives a large encoding a slab of its own, and keeps none over the whole budget', () => {
    const arena = new EncodingArena(4 * MiB);
    const large = memo();
    arena.keep(large, 'cbor', bytes(2 * MiB + 1, 7), 2 * MiB + 1);
    expect(arena.bytes).toBe(2 * MiB + 1);
    expect(arena.get(large, 'cbor')!.length).toBe(2 * MiB + 1);
    const huge = memo();
    const out = arena.keep(huge, 'cbor', bytes(5 * MiB, 8), 5 * MiB);
    expect(out.equals(bytes(5 * MiB, 8))).toBe(true);
    expect(arena.get(huge, 'cbor')).toBeUndefined();
    expect(arena.bytes).toBe(2 * MiB + 1);
  });

  it('keeps an encoding behind a field header when asked: encodings kept in turn lie framed one after another', () => {
    const arena = new EncodingArena(8 * MiB);
    // Lengths whose varints take one, two and three bytes, at their edges.
    const sizes = [0, 3, 127, 128, 300, 16383, 16384, 20000];
    const memos = sizes.map(memo);
    sizes.forEach((n, i) => arena.keep(memos[i]!, 'protobuf', bytes(n + 5, i + 1), n, 0x12));
    const framed = Buffer.concat(sizes.map((n, i) => Buffer.concat([Buffer.from([0x12]), varint(n), bytes(n, i + 1)])));
    const slab = arena.slabOf(memos[0]!, 'protobuf')!;
    const first = memos[0]!.protobufOffset - 2;
    expect(slab.subarray(first, first + framed.length).equals(framed)).toBe(true);
    memos.forEach((m, i) => expect(arena.get(m, 'protobuf')!.equals(bytes(sizes[i]!, i + 1))).toBe(true));
    expect(arena.bytes).toBe(MiB);
    // A large one gets a slab of its own, header included.
    const large = memo();
    arena.keep(large, 'protobuf', bytes(MiB, 9), MiB, 0x12);
    expect(arena.bytes).toBe(2 * MiB + 4);
    expect(large.protobufOffset).toBe(4);
    expect(arena.slabOf(large, 'protobuf')!.subarray(0, 4).equals(Buffer.concat([Buffer.from([0x12]), varint(MiB)]))).toBe(true);
    expect(arena.get(large, 'protobuf')!.equals(bytes(MiB, 9))).toBe(true);
  });
});
