// raft/codec/binary-reader.ts owns bounds-checked reading of what BinaryWriter wrote. Every
// read checks the remaining length first, so a hostile length prefix fails with a CodecError
// before anything is allocated.

import { CodecError } from './codec-error.js';

/** Varints longer than this cannot hold a value below 2^53. */
const MAX_UVARINT_BYTES = 8;

export class BinaryReader {
  private pos = 0;

  /**
   * `views`: bytes() returns views over `buf` instead of copies. For a caller that made `buf` a
   * copy of its own for this decode (the transport: one copy per received frame rather than
   * one per entry), so that the views pin nothing but what they decode.
   */
  constructor(
    private readonly buf: Uint8Array,
    private readonly views = false,
  ) {}

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  get offset(): number {
    return this.pos;
  }

  byte(): number {
    if (this.pos >= this.buf.length) throw new CodecError('CODEC_TRUNCATED', 'unexpected end of input');
    return this.buf[this.pos++]!;
  }

  bool(): boolean {
    const b = this.byte();
    if (b > 1) throw new CodecError('CODEC_INVALID', `boolean byte ${b}`);
    return b === 1;
  }

  uvarint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < MAX_UVARINT_BYTES; i++) {
      const b = this.byte();
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) {
        if (!Number.isSafeInteger(result)) throw new CodecError('CODEC_OVERFLOW', 'varint above 2^53');
        // Reject non-minimal encodings (a trailing 0x00 continuation) so that one value has one
        // encoding; this keeps round-trip checks honest.
        if (i > 0 && b === 0) throw new CodecError('CODEC_INVALID', 'non-minimal varint');
        return result;
      }
      scale *= 0x80;
    }
    throw new CodecError('CODEC_OVERFLOW', 'varint too long');
  }

  /** A uvarint that must not exceed `max` (counts, enum values). */
  uvarintMax(max: number, what: string): number {
    const v = this.uvarint();
    if (v > max) throw new CodecError('CODEC_INVALID', `${what} ${v} exceeds ${max}`);
    return v;
  }

  /**
   * Length-prefixed bytes, copied into a plain Uint8Array so that the result neither pins the
   * input buffer nor is a Buffer (Buffer#slice does not copy, and Buffers compare differently);
   * a view in `views` mode (see the constructor).
   */
  bytes(maxLength = Number.MAX_SAFE_INTEGER): Uint8Array {
    const n = this.uvarint();
    if (n > maxLength) throw new CodecError('CODEC_TOO_LARGE', `byte string of ${n} exceeds ${maxLength}`);
    return this.views ? this.raw(n) : new Uint8Array(this.raw(n));
  }

  /** `n` bytes as a view over the input. */
  raw(n: number): Uint8Array {
    if (n > this.remaining) throw new CodecError('CODEC_TRUNCATED', `need ${n} bytes, have ${this.remaining}`);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  u32(): number {
    const b = this.raw(4);
    return ((b[0]! << 24) >>> 0) + (b[1]! << 16) + (b[2]! << 8) + b[3]!;
  }

  /** Throws unless every byte was consumed: trailing garbage is an error, not padding. */
  end(): void {
    if (this.remaining !== 0) throw new CodecError('CODEC_INVALID', `${this.remaining} trailing bytes`);
  }
}
