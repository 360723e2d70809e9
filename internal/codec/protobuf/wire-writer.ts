// internal/codec/protobuf/wire-writer owns writing protobuf wire primitives into one growing
// buffer: varints with Go's integer semantics, UTF-8 strings, and length-delimited sections whose
// length is patched in after their content is written. Imports: node only.
//
// A nested message's size is unknown until it is written, so fork() reserves one length byte and
// join() patches it, shifting the content right when the length needs more bytes. Most nested
// messages are under 128 bytes, so the shift is rare and a memmove when it happens; this avoids
// Go's separate sizing pass and protobufjs's operation queue.

const TWO_32 = 4294967296;

export class WireWriter {
  buf: Buffer;
  pos = 0;

  constructor(initialSize = 16 * 1024) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  reset(): void {
    this.pos = 0;
  }

  ensure(n: number): void {
    if (this.pos + n > this.buf.length) this.grow(n);
  }

  private grow(n: number): void {
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** A copy of the bytes written so far (the scratch buffer is reused by the next encode). */
  finish(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    return out;
  }

  byte(b: number): void {
    if (this.pos >= this.buf.length) this.grow(1);
    this.buf[this.pos++] = b;
  }

  byte2(a: number, b: number): void {
    if (this.pos + 2 > this.buf.length) this.grow(2);
    this.buf[this.pos++] = a;
    this.buf[this.pos++] = b;
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** The bytes src[start, end), unprefixed: short runs by a loop (a native copy costs more to call). */
  rawRange(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    this.ensure(n);
    const buf = this.buf;
    if (n < 64) {
      let p = this.pos;
      for (let q = start; q < end; q++) buf[p++] = src[q]!;
    } else copyRange(src, start, end, buf, this.pos);
    this.pos += n;
  }

  /** An unsigned varint of a non-negative integer below 2^32. */
  uvarint32(v: number): void {
    this.ensure(5);
    const buf = this.buf;
    let p = this.pos;
    while (v > 127) {
      buf[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    buf[p++] = v;
    this.pos = p;
  }

  /**
   * A varint of a signed integer as Go writes `encodeVarint(uint64(v))`: negative values take ten
   * bytes (two's complement, sign-extended to 64 bits). Values beyond 2^53 are written from their
   * nearest double, which is all a JS number holds.
   */
  varint(v: number): void {
    if (v >= 0 && v < TWO_32) {
      this.uvarint32(v);
      return;
    }
    let lo: number;
    let hi: number;
    if (v >= 0) {
      lo = v % TWO_32 >>> 0;
      hi = Math.floor(v / TWO_32) >>> 0;
    } else {
      const a = -v;
      let alo = a % TWO_32 >>> 0;
      let ahi = Math.floor(a / TWO_32) >>> 0;
      // Two's complement of (ahi, alo).
      alo = ~alo >>> 0;
      ahi = ~ahi >>> 0;
      alo = (alo + 1) >>> 0;
      if (alo === 0) ahi = (ahi + 1) >>> 0;
      lo = alo;
      hi = ahi;
    }
    this.ensure(10);
    const buf = this.buf;
    let p = this.pos;
    while (hi !== 0 || lo > 127) {
      buf[p++] = (lo & 127) | 128;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    buf[p++] = lo;
    this.pos = p;
  }

  /** An unsigned varint from a bigint (durations need all 64 bits). */
  varintBig(v: bigint): void {
    let u = BigInt.asUintN(64, v);
    this.ensure(10);
    while (u > 127n) {
      this.buf[this.pos++] = Number(u & 127n) | 128;
      u >>= 7n;
    }
    this.buf[this.pos++] = Number(u);
  }

  double(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  /** A length-prefixed UTF-8 string; lone surrogates become U+FFFD, as Go's JSON decoding does. */
  string(s: string): void {
    const n = s.length;
    if (n < 43) {
      // 3 bytes per UTF-16 unit at most, so the length fits one byte: write ASCII directly and
      // fall back to the native encoder at the first non-ASCII unit.
      this.ensure(1 + 3 * n);
      const buf = this.buf;
      const start = this.pos;
      let p = start + 1;
      for (let i = 0; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 128) {
          p = start + 1 + buf.write(s, start + 1, 'utf8');
          break;
        }
        buf[p++] = c;
      }
      buf[start] = p - start - 1;
      this.pos = p;
      return;
    }
    const len = Buffer.byteLength(s, 'utf8');
    this.uvarint32(len);
    this.ensure(len);
    this.buf.write(s, this.pos, 'utf8');
    this.pos += len;
  }

  /** Length-prefixed bytes. */
  bytes(b: Uint8Array): void {
    this.uvarint32(b.length);
    this.raw(b);
  }

  /** Starts a length-delimited section; pass the result to join() after writing its content. */
  fork(): number {
    if (this.pos >= this.buf.length) this.grow(1);
    return this.pos++;
  }

  join(start: number): void {
    const len = this.pos - start - 1;
    if (len < 128) {
      this.buf[start] = len;
      return;
    }
    const extra = len < 16384 ? 1 : len < 2097152 ? 2 : len < 268435456 ? 3 : 4;
    this.ensure(extra);
    const buf = this.buf;
    buf.copyWithin(start + 1 + extra, start + 1, this.pos);
    let p = start;
    let v = len;
    while (v > 127) {
      buf[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    buf[p] = v;
    this.pos += extra;
  }
}

/**
 * Copies src[start, end) to dst at `at` through a plain Uint8Array view: a built-in copy, where
 * Buffer's copy() and subarray() are JavaScript that the optimizing compiler compiles (and
 * inlines) into every hot caller, which on a first protobuf list is CPU spent compiling.
 */
export function copyRange(src: Uint8Array, start: number, end: number, dst: Uint8Array, at: number): void {
  dst.set(new Uint8Array(src.buffer, src.byteOffset + start, end - start), at);
}

let pooled: WireWriter | undefined;
const POOL_KEEP_LIMIT = 8 * 1024 * 1024;

/** Borrows the shared scratch writer (or a fresh one when it is in use by an outer encode). */
export function acquireWriter(): WireWriter {
  const w = pooled ?? new WireWriter();
  pooled = undefined;
  w.reset();
  return w;
}

/** Returns a writer for reuse; very large buffers are dropped so one huge list does not pin memory. */
export function releaseWriter(w: WireWriter): void {
  if (w.buf.length <= POOL_KEEP_LIMIT) pooled = w;
}
