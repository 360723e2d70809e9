// internal/watchcache/encoding-arena owns where the cache entries' protobuf and CBOR encodings
// (the encodings memo, see types) are kept, and how much of them: packed into 1 MiB slabs shared
// by all entries, under one byte budget for the process. When a new slab would go over the
// budget, the least recently used slab is dropped, and with it every encoding in it: an entry
// whose encoding is gone has it made again the next time it is asked for. A memo names its slab
// and its place in it, not a view of the bytes, so a dropped slab's memory goes as soon as no
// response being written still holds it, and replaced entries' encodings go with their slab.
// One allocation per slab instead of one per encoding (a Buffer, an ArrayBuffer and a native
// backing store each, about 250 B of heap besides the bytes).
//
// It also owns encoding ahead (AheadEncoding): the entries of applied changes are encoded in
// idle time, once writes have paused, so that the first protobuf list of a collection finds its
// items' encodings made instead of making every one of them while the client waits. Imports:
// types.

import type { CacheEntry, EntryEncodings } from './types.js';

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

/** Encodes `entry` ahead and keeps the result in the arena, or does nothing for an entry it does not serve. */
export type AheadEncoder = (entry: CacheEntry) => void;

export interface AheadOptions {
  /** How long writes must have paused before encoding starts. */
  idleMs: number;
  /** Encoding runs in slices of about this long, each a macrotask, so requests are served between them. */
  sliceMs: number;
  /** Changes remembered while writes go on (the latest per key); beyond this, new ones are not. */
  maxPending: number;
  /** The clock, in ms (tests give their own). */
  now: () => number;
}

const AHEAD_DEFAULTS: AheadOptions = { idleMs: 50, sliceMs: 2, maxPending: 200_000, now: () => performance.now() };

/**
 * What encodings made ahead may hold: 32 MB, a quarter of the readers' budget. It covers the
 * 10,000-pod lists the bench and most clusters make (about 14 MB), and a server holding 50,000
 * written pods that nobody reads in protobuf pays at most about 650 B more per pod. Encodings
 * made ahead live in an arena of their own, so that they give way to each other (least recently
 * used first: those of objects deleted or replaced since go first) and never to readers' own.
 */
export const AHEAD_ENCODING_BUDGET = 32 * 1024 * 1024;

/**
 * Encoding ahead, in idle time. A first protobuf list of 10,000 pods made every item's encoding
 * while the client waited, with a cold transcoder: about 150-230 ms of the server's CPU against
 * 20 ms for a later list. Here each applied change's entry is remembered (the latest per key, a
 * Map.set and a timer refresh per write), and once writes have paused for idleMs the remembered
 * entries are encoded in slices of sliceMs, yielding to the event loop between slices. While
 * writes go on nothing is encoded, so a write path under load pays only the remembering.
 *
 * The price is memory and idle CPU: the encodings of written objects are kept whether or not a
 * client ever asks for protobuf, in an arena of their own (AHEAD_ENCODING_BUDGET) where the least
 * recently used give way. (A reader touching one of its slabs marks it with the readers' arena's
 * clock, so the order between read and unread slabs there is approximate; the bound is not.)
 * Objects loaded at start are not encoded ahead (the memory a restarted server holds per object
 * stays what it was).
 */
export class AheadEncoding {
  private readonly pending = new Map<string, CacheEntry>();
  private encoder: AheadEncoder | undefined;
  private busy: () => boolean = () => false;
  private timer: NodeJS.Timeout | undefined;
  private sliceQueued = false;
  /** Keys of `pending` in key order, encoded from `at` on (a snapshot; entries replaced since are read from `pending`). */
  private order: string[] = [];
  private at = 0;
  /** The clock at the last change remembered. */
  private lastChange = 0;
  /** Entries encoded ahead over the life of the process (for tests and figures). */
  encoded = 0;

  constructor(
    /** Where encodings made ahead are kept (not the readers' arena: see AHEAD_ENCODING_BUDGET). */
    readonly arena: EncodingArena,
    private readonly options: AheadOptions = AHEAD_DEFAULTS,
  ) {}

  /** Who encodes (the protobuf serializer, once it exists); nothing is remembered before. */
  setEncoder(encoder: AheadEncoder | undefined): void {
    this.encoder = encoder;
    if (encoder === undefined) this.clear();
  }

  /** What says the process is serving something that encoding ahead should not slow (a streamed list). */
  setBusy(busy: () => boolean): void {
    this.busy = busy;
  }

  /** The entry of an applied change (created or replaced). */
  changed(entry: CacheEntry): void {
    if (this.encoder === undefined || entry.corrupt !== undefined) return;
    if (this.pending.size >= this.options.maxPending && !this.pending.has(entry.key)) return;
    this.pending.set(entry.key, entry);
    this.lastChange = this.options.now();
    if (this.timer === undefined && !this.sliceQueued) this.wait(this.options.idleMs);
  }

  /** A deleted object: its last state is not worth encoding. */
  deleted(key: string): void {
    this.pending.delete(key);
  }

  /** Entries remembered and not encoded yet. */
  get waiting(): number {
    return this.pending.size;
  }

  private clear(): void {
    this.pending.clear();
    this.order = [];
    this.at = 0;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private wait(ms: number): void {
    this.timer = setTimeout(this.run, ms);
    this.timer.unref();
  }

  private readonly run = (): void => {
    this.timer = undefined;
    this.sliceQueued = false;
    const encoder = this.encoder;
    if (encoder === undefined) return this.clear();
    // Writes since: wait until they have paused (one timer per pause, not one per write).
    const quiet = this.options.now() - this.lastChange;
    if (quiet < this.options.idleMs) return this.wait(this.options.idleMs - quiet);
    // Nor while a list is being streamed: its reader would wait for the slices.
    if (this.busy()) return this.wait(this.options.idleMs);
    const until = this.options.now() + this.options.sliceMs;
    for (;;) {
      if (this.at >= this.order.length) {
        if (this.pending.size === 0) break;
        // In key order, the order lists read the cache in: encodings kept in turn lie framed one
        // after another in their slab, and a later list writes them as views of it, not copies.
        this.order = [...this.pending.keys()].sort();
        this.at = 0;
      }
      const key = this.order[this.at++]!;
      const entry = this.pending.get(key);
      if (entry === undefined) continue;
      this.pending.delete(key);
      try {
        encoder(entry);
        this.encoded++;
      } catch {
        // A reader asking for this entry meets the error on its own path, which owns it.
      }
      if (this.options.now() >= until) break;
    }
    if (this.pending.size === 0) {
      this.order = [];
      this.at = 0;
      return;
    }
    // The next slice after the event loop has served what arrived meanwhile (a write arriving
    // meanwhile postpones it until writes pause again).
    this.sliceQueued = true;
    setImmediate(this.run);
  };
}

/** The process's ahead encoding, into an arena of its own. */
export const aheadEncoding = new AheadEncoding(new EncodingArena(AHEAD_ENCODING_BUDGET));
