// internal/codec/protobuf/wire-reader owns reading protobuf wire primitives from untrusted bytes.
// Every read is bounded by the end of the enclosing message, so truncated or lying lengths end in
// a 400 StatusError, never an out-of-range read or an allocation sized by the input.
// Imports: apierrors.

import { errors, type StatusError } from '../../apierrors/status.js';

const TWO_32 = 4294967296;
const utf8 = new TextDecoder('utf-8');

/** A 400 for undecodable protobuf input; messages follow Go's generated unmarshalers. */
export function protobufError(detail: string): StatusError {
  return errors.badRequest(`protobuf decode error: ${detail}`);
}

export class WireReader {
  pos = 0;

  constructor(readonly buf: Uint8Array) {}

  private eof(): never {
    throw protobufError('unexpected EOF');
  }

  /** The low 32 bits (unsigned) of a varint of at most ten bytes. */
  uvarint32(end: number): number {
    const buf = this.buf;
    let p = this.pos;
    if (p >= end) this.eof();
    let b = buf[p++]!;
    if (b < 128) {
      this.pos = p;
      return b;
    }
    let v = b & 127;
    for (let shift = 7; shift < 70; shift += 7) {
      if (p >= end) this.eof();
      b = buf[p++]!;
      if (shift < 32) v |= (b & 127) << shift;
      if (b < 128) {
        this.pos = p;
        return v >>> 0;
      }
    }
    throw protobufError('integer overflow');
  }

  /** A varint as (lo, hi) uint32 halves. */
  private varint64(end: number): [number, number] {
    const buf = this.buf;
    let p = this.pos;
    let lo = 0;
    let hi = 0;
    let b = 0;
    for (let i = 0; i < 10; i++) {
      if (p >= end) this.eof();
      b = buf[p++]!;
      const bits = b & 127;
      if (i < 4) lo |= bits << (7 * i);
      else if (i === 4) {
        lo |= bits << 28;
        hi |= bits >>> 4;
      } else hi |= bits << (7 * i - 32);
      if (b < 128) {
        this.pos = p;
        return [lo >>> 0, hi >>> 0];
      }
    }
    throw protobufError('integer overflow');
  }

  tag(end: number): number {
    const t = this.uvarint32(end);
    if (t >>> 3 === 0) throw protobufError(`illegal tag 0 (wire type ${t & 7})`);
    return t;
  }

  int32(end: number): number {
    const b = this.buf[this.pos];
    if (b !== undefined && b < 128 && this.pos < end) {
      this.pos++;
      return b;
    }
    return this.uvarint32(end) | 0;
  }

  /** An int64 as a number (exact up to 2^53, nearest double beyond). */
  int64(end: number): number {
    const b = this.buf[this.pos];
    if (b !== undefined && b < 128 && this.pos < end) {
      this.pos++;
      return b;
    }
    const [lo, hi] = this.varint64(end);
    if (hi & 0x80000000) {
      const nlo = ~lo >>> 0;
      const nhi = ~hi >>> 0;
      return -(nhi * TWO_32 + nlo + 1);
    }
    return hi * TWO_32 + lo;
  }

  int64Big(end: number): bigint {
    const [lo, hi] = this.varint64(end);
    return BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo));
  }

  bool(end: number): boolean {
    const [lo, hi] = this.varint64(end);
    return lo !== 0 || hi !== 0;
  }

  double(end: number): number {
    if (this.pos + 8 > end) this.eof();
    const view = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8);
    this.pos += 8;
    return view.getFloat64(0, true);
  }

  /** Reads a length prefix and returns the end offset of the section it announces. */
  lenEnd(end: number): number {
    const len = this.uvarint32(end);
    if (len > end - this.pos) {
      if (len > 0x7fffffff) throw protobufError('negative length found during unmarshaling');
      this.eof();
    }
    return this.pos + len;
  }

  bytes(end: number): Uint8Array {
    const e = this.lenEnd(end);
    const out = this.buf.subarray(this.pos, e);
    this.pos = e;
    return out;
  }

  string(end: number): string {
    const e = this.lenEnd(end);
    const buf = this.buf;
    let p = this.pos;
    const n = e - p;
    if (n < 24) {
      // Short ASCII strings (names, keys) are cheaper to build here than through TextDecoder.
      let s = '';
      for (; p < e; p++) {
        const c = buf[p]!;
        if (c >= 128) break;
        s += String.fromCharCode(c);
      }
      if (p === e) {
        this.pos = e;
        return s;
      }
    }
    const s = utf8.decode(buf.subarray(this.pos, e));
    this.pos = e;
    return s;
  }

  /**
   * Skips a field this decoder does not know, as Go's generated skip does (groups included, their
   * nesting bounded by maxDepth).
   */
  skip(tag: number, end: number, depth: number, maxDepth: number): void {
    const wireType = tag & 7;
    switch (wireType) {
      case 0:
        this.varint64(end);
        return;
      case 1:
        if (this.pos + 8 > end) this.eof();
        this.pos += 8;
        return;
      case 2:
        this.pos = this.lenEnd(end);
        return;
      case 5:
        if (this.pos + 4 > end) this.eof();
        this.pos += 4;
        return;
      case 3: {
        let groups = 1;
        while (groups > 0) {
          if (depth + groups > maxDepth) throw protobufError('exceeded max depth');
          const t = this.tag(end);
          const wt = t & 7;
          if (wt === 3) groups++;
          else if (wt === 4) groups--;
          else this.skip(t, end, depth, maxDepth);
        }
        return;
      }
      case 4:
        throw protobufError('unexpected end group');
      default:
        throw protobufError(`illegal wireType ${wireType}`);
    }
  }
}
