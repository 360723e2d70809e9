// raft/codec/binary-writer.ts owns the append-only byte buffer the encoders write into:
// unsigned LEB128 varints for every integer (indexes, terms and ids stay below 2^53, so
// arithmetic rather than 32-bit bitwise operators is used), length-prefixed byte strings.

export class BinaryWriter {
  private buf: Uint8Array;
  private len = 0;

  constructor(initialCapacity = 256) {
    this.buf = new Uint8Array(initialCapacity);
  }

  /** Number of bytes written so far. */
  get length(): number {
    return this.len;
  }

  private reserve(extra: number): void {
    const need = this.len + extra;
    if (need <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < need) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  byte(b: number): this {
    this.reserve(1);
    this.buf[this.len++] = b & 0xff;
    return this;
  }

  bool(v: boolean): this {
    return this.byte(v ? 1 : 0);
  }

  /** Writes a non-negative safe integer; anything else is a programming error and throws. */
  uvarint(n: number): this {
    if (!Number.isSafeInteger(n) || n < 0) {
      throw new RangeError(`uvarint: ${n} is not a non-negative safe integer`);
    }
    this.reserve(8);
    while (n >= 0x80) {
      this.buf[this.len++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[this.len++] = n;
    return this;
  }

  /** A length (uvarint) followed by the bytes. */
  bytes(b: Uint8Array): this {
    this.uvarint(b.length);
    return this.raw(b);
  }

  /** Bytes without a length prefix. */
  raw(b: Uint8Array): this {
    this.reserve(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
    return this;
  }

  /** A 4-byte big-endian unsigned integer (frame lengths). */
  u32(n: number): this {
    if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new RangeError(`u32: ${n}`);
    this.reserve(4);
    this.buf[this.len++] = (n >>> 24) & 0xff;
    this.buf[this.len++] = (n >>> 16) & 0xff;
    this.buf[this.len++] = (n >>> 8) & 0xff;
    this.buf[this.len++] = n & 0xff;
    return this;
  }

  /** Overwrites 4 bytes at `at` with a big-endian u32 (to back-patch a frame length). */
  patchU32(at: number, n: number): void {
    if (at < 0 || at + 4 > this.len) throw new RangeError('patchU32 out of range');
    this.buf[at] = (n >>> 24) & 0xff;
    this.buf[at + 1] = (n >>> 16) & 0xff;
    this.buf[at + 2] = (n >>> 8) & 0xff;
    this.buf[at + 3] = n & 0xff;
  }

  /** The written bytes; a view over the internal buffer, valid until the next write. */
  finish(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }
}
