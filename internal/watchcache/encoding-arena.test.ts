import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AheadEncoding, EncodingArena, type AheadOptions } from './encoding-arena.js';
import { encodingsOf, type CacheEntry, type EntryEncodings } from './types.js';

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

describe('AheadEncoding', () => {
  // The fake timers' clock; an encoder's own time moves it without running timers (setSystemTime).
  const options: AheadOptions = { idleMs: 50, sliceMs: 2, maxPending: 100, now: () => Date.now() };
  const entry = (name: string, value = name): CacheEntry => ({ key: `/registry/pods/ns/${name}`, namespace: 'ns', name, revision: 1, bytes: Buffer.from(value), labels: {}, fields: {} });
  /** An encoder that keeps `protobuf:` and the bytes, costing `costMs` of (fake) time each. */
  const setup = (costMs = 0, arena = new EncodingArena(8 * MiB)) => {
    const ahead = new AheadEncoding(arena, options);
    const seen: string[] = [];
    ahead.setEncoder((e) => {
      seen.push(e.bytes.toString());
      const out = Buffer.from(`protobuf:${e.bytes.toString()}`);
      arena.store(encodingsOf(e), 'protobuf', out, out.length, 0x12);
      if (costMs > 0) vi.setSystemTime(Date.now() + costMs);
    });
    return { ahead, seen, arena };
  };
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('encodes nothing while writes go on, then the latest state of each object once they pause, none deleted', async () => {
    const { ahead, seen, arena } = setup();
    const entries: CacheEntry[] = [];
    // A write every 10 ms for a second: never a pause of 50 ms.
    for (let t = 0; t < 100; t++) {
      const e = entry(`p${t % 10}`, `p${t % 10}@${t}`);
      entries.push(e);
      ahead.changed(e);
      await vi.advanceTimersByTimeAsync(10);
    }
    expect(seen).toEqual([]);
    ahead.deleted('/registry/pods/ns/p3');
    await vi.advanceTimersByTimeAsync(60);
    expect(seen.sort()).toEqual(['p0@90', 'p1@91', 'p2@92', 'p4@94', 'p5@95', 'p6@96', 'p7@97', 'p8@98', 'p9@99']);
    expect(ahead.encoded).toBe(9);
    expect(ahead.waiting).toBe(0);
    const latest = entries[99]!;
    expect(arena.get(encodingsOf(latest), 'protobuf')!.toString()).toBe('protobuf:p9@99');
  });

  it('encodes in slices of about sliceMs, and a write between slices postpones the rest until writes pause again', async () => {
    const { ahead, seen } = setup(1);
    for (let i = 0; i < 20; i++) ahead.changed(entry(`p${i}`));
    await vi.advanceTimersByTimeAsync(49);
    expect(seen.length).toBe(0);
    // The idle timer, then the first slice: 2 ms at 1 ms per entry.
    vi.advanceTimersToNextTimer();
    expect(seen.length).toBe(2);
    vi.advanceTimersToNextTimer();
    expect(seen.length).toBe(4);
    // A write now: the queued slice finds writes going on again and waits for a pause.
    ahead.changed(entry('late'));
    vi.advanceTimersToNextTimer();
    expect(seen.length).toBe(4);
    await vi.advanceTimersByTimeAsync(100);
    expect(seen.length).toBe(21);
    expect(ahead.waiting).toBe(0);
  });

  it('keeps within its arena\'s budget, the oldest encodings giving way, and remembers at most maxPending objects', async () => {
    const arena = new EncodingArena(2 * MiB);
    const { ahead, seen } = setup(0, arena);
    // Each encoding takes a slab of its own over 1 MiB: only one fits the budget at a time.
    const bigs = [0, 1, 2, 3, 4].map((i) => entry(`big${i}`, 'x'.repeat(MiB)));
    for (const e of bigs) ahead.changed(e);
    await vi.advanceTimersByTimeAsync(60);
    expect(seen.length).toBe(5);
    expect(ahead.waiting).toBe(0);
    expect(arena.bytes).toBeLessThanOrEqual(2 * MiB);
    expect(arena.get(encodingsOf(bigs[0]!), 'protobuf')).toBeUndefined();
    expect(arena.get(encodingsOf(bigs[4]!), 'protobuf')!.toString()).toBe(`protobuf:${'x'.repeat(MiB)}`);
    // Later changes are still encoded (a full arena does not stop encoding ahead).
    ahead.changed(entry('after'));
    await vi.advanceTimersByTimeAsync(60);
    expect(seen.at(-1)).toBe('after');
    const small = setup();
    for (let i = 0; i < 150; i++) small.ahead.changed(entry(`p${i}`));
    expect(small.ahead.waiting).toBe(100);
    // A newer state of an object already remembered still replaces it.
    small.ahead.changed(entry('p5', 'p5 again'));
    expect(small.ahead.waiting).toBe(100);
    await vi.advanceTimersByTimeAsync(60);
    expect(small.seen.length).toBe(100);
    expect(small.seen).toContain('p5 again');
  });

  it('encodes in key order, the order of a list, whatever the order of the writes', async () => {
    const { ahead, seen, arena } = setup(1);
    const entries = ['c', 'a', 'd', 'b', 'aa'].map((n) => entry(n));
    for (const e of entries) ahead.changed(e);
    await vi.advanceTimersByTimeAsync(50);
    ahead.changed(entry('ab'));
    await vi.advanceTimersByTimeAsync(100);
    expect(seen).toEqual(['a', 'aa', 'b', 'c', 'd', 'ab']);
    // Kept in turn in one slab: each lies right after the one before it (tag and length between).
    const sorted = [...entries].sort((x, y) => (x.key < y.key ? -1 : 1)).map((e) => e.encodings!);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]!.protobufOffset).toBe(sorted[i - 1]!.protobufOffset + sorted[i - 1]!.protobufLength + 2);
    expect(arena.bytes).toBe(MiB);
  });

  it('waits while the process says it is busy (a list streaming), then encodes', async () => {
    const { ahead, seen } = setup();
    let busy = true;
    ahead.setBusy(() => busy);
    ahead.changed(entry('p'));
    await vi.advanceTimersByTimeAsync(500);
    expect(seen).toEqual([]);
    busy = false;
    await vi.advanceTimersByTimeAsync(60);
    expect(seen).toEqual(['p']);
  });

  it('remembers nothing without an encoder, nor corrupt entries', async () => {
    const ahead = new AheadEncoding(new EncodingArena(8 * MiB), options);
    ahead.changed(entry('p'));
    expect(ahead.waiting).toBe(0);
    const { ahead: other } = setup();
    other.changed({ ...entry('c'), corrupt: 'unable to decode' });
    expect(other.waiting).toBe(0);
  });
});
