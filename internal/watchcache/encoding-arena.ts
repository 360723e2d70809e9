// internal/watchcache/encoding-arena owns where the cache entries' protobuf and CBOR encodings
// (the encodings memo, see types) are kept, and how much of them: packed into 1 MiB slabs shared
// by all entries, under one byte budget for the process. When a new slab would go over the
// budget, the least recently used slab is dropped, and with it every encoding in it: an entry
// whose encoding is gone has it made again the next time it is asked for. A memo names its slab
// and its place in it, not a view of the bytes, so a dropped slab's memory goes as soon as no
// response being written still holds it, and replaced entries' encodings go with their slab.
// One allocation per slab instead of one per encoding (a Buffer, an ArrayBuffer and a native
// backing store each, about 250 B of heap besides the bytes). Imports: types.

import type { EntryEncodings } from './types.js';

/** 1 MiB: far above glibc's default mmap threshold (128 KiB), so a dropped slab goes back to the system. */
const SLAB_BYTES = 1 << 20;
/** Larger encodings get a slab of their own: a slab's unused tail stays under this. */
const LARGEST_PACKED = SLAB_BYTES >> 4;
/** What protobuf and CBOR encodings of cached objects may hold together, by default. */
export const DEFAULT_ENCODING_BUDGET = 128 * 1024 * 1024;

export class EncodingSlab {
  /** Undefined once dropped. */
  buffer: Buffer | undefined;
  used = 0;
  lastUse = 0;

  constructor(readonly size: number) {
    this.buffer = Buffer.allocUnsafeSlow(size);
  }
}

export type EncodingKind = 'protobuf' | 'cbor';

export class EncodingArena {
  private readonly slabs: EncodingSlab[] = [];
  private open: EncodingSlab | undefined;
  private held = 0;
  private clock = 0;

  constructor(private budget = DEFAULT_ENCODING_BUDGET) {}

  /** Bytes the slabs hold (what the budget bounds). */
  get bytes(): number {
    return this.held;
  }

  setBudget(bytes: number): void {
    this.budget = bytes;
    this.makeRoom(0);
  }

  /** The encoding of `kind` kept in `memo`, or undefined when there is none (never made, or its slab dropped). */
  get(memo: EntryEncodings, kind: EncodingKind): Buffer | undefined {
    const buffer = this.slabOf(memo, kind);
    if (buffer === undefined) return undefined;
    const offset = kind === 'protobuf' ? memo.protobufOffset : memo.cborOffset;
    return buffer.subarray(offset, offset + (kind === 'protobuf' ? memo.protobufLength : memo.cborLength));
  }

  /**
   * The slab's buffer holding the encoding of `kind` kept in `memo` (at the memo's offset and
   * length), or undefined when there is none: for writers that copy it out without a view.
   */
  slabOf(memo: EntryEncodings, kind: EncodingKind): Buffer | undefined {
    const slab = kind === 'protobuf' ? memo.protobuf : memo.cbor;
    const buffer = slab?.buffer;
    if (buffer !== undefined) slab!.lastUse = ++this.clock;
    return buffer;
  }

  /**
   * Keeps src[0, length) as the encoding of `kind` in `memo` and returns the kept bytes; a copy
   * of its own, not kept, when it alone is over the budget. With `fieldTag` (one byte), the
   * encoding is kept behind that byte and its length as a varint — the header of a protobuf
   * length-delimited field — so that encodings kept one after another in a slab are also, as
   * they lie, the items of a list that holds them in that order (see ProtobufCodec's lists).
   */
  keep(memo: EntryEncodings, kind: EncodingKind, src: Uint8Array, length: number, fieldTag = -1): Buffer {
    if (!this.store(memo, kind, src, length, fieldTag)) return Buffer.from(src.subarray(0, length));
    return this.get(memo, kind)!;
  }

  /** keep() without a view of the kept bytes (none made per object); false when it alone is over the budget (nothing kept). */
  store(memo: EntryEncodings, kind: EncodingKind, src: Uint8Array, length: number, fieldTag = -1): boolean {
    const head = fieldTag < 0 ? 0 : 1 + varintSize(length);
    const size = head + length;
    if (size > this.budget) return false;
    let slab = this.open;
    if (size > LARGEST_PACKED) slab = this.add(size);
    else if (slab === undefined || slab.buffer === undefined || slab.used + size > slab.size) slab = this.open = this.add(SLAB_BYTES);
    const buffer = slab.buffer!;
    let offset = slab.used;
    if (head > 0) {
      buffer[offset++] = fieldTag;
      let n = length;
      while (n > 127) {
        buffer[offset++] = (n & 127) | 128;
        n >>>= 7;
      }
      buffer[offset++] = n;
    }
    // A plain view, not src.subarray(): Buffer's is JavaScript the compiler inlines here.
    buffer.set(new Uint8Array(src.buffer, src.byteOffset, length), offset);
    slab.used = offset + length;
    slab.lastUse = ++this.clock;
    if (kind === 'protobuf') {
      memo.protobuf = slab;
      memo.protobufOffset = offset;
      memo.protobufLength = length;
    } else {
      memo.cbor = slab;
      memo.cborOffset = offset;
      memo.cborLength = length;
    }
    return true;
  }

  private add(size: number): EncodingSlab {
    this.makeRoom(size);
    const slab = new EncodingSlab(size);
    this.slabs.push(slab);
    this.held += size;
    return slab;
  }

  /** Drops the least recently used slabs until `size` more bytes fit the budget. */
  private makeRoom(size: number): void {
    while (this.slabs.length > 0 && this.held + size > this.budget) {
      let oldest = 0;
      for (let i = 1; i < this.slabs.length; i++) if (this.slabs[i]!.lastUse < this.slabs[oldest]!.lastUse) oldest = i;
      const slab = this.slabs[oldest]!;
      this.slabs.splice(oldest, 1);
      this.held -= slab.size;
      slab.buffer = undefined;
      if (this.open === slab) this.open = undefined;
    }
  }
}

function varintSize(n: number): number {
  return n < 128 ? 1 : n < 16384 ? 2 : n < 2097152 ? 3 : n < 268435456 ? 4 : 5;
}

/** The process's arena: the watch caches of every resource share one budget. */
export const encodingArena = new EncodingArena();
