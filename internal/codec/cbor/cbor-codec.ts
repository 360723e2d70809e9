// internal/codec/cbor/cbor-codec owns the CBOR wire format (gate CBORServingAndStorage; the HTTP
// layer checks the gate) with upstream's conventions from apimachinery's cbor serializer:
//  - output starts with the self-described CBOR tag (0xd9d9f7), which doubles as a magic number;
//  - strings and map keys are written as byte strings (upstream does not validate UTF-8 on
//    encode), map keys sorted bytewise by their encoding (RFC 8949 core deterministic order),
//    floats in the shortest exact width, definite lengths only, NaN/±Inf refused;
//  - []byte values (base64 strings in the JSON form) become tag 22 + the raw bytes, when the
//    caller names the schema so the `format: byte` fields are known;
//  - decoding accepts text or byte strings, tags 55799/0/21/22/23, indefinite lengths, and refuses
//    duplicate map keys, invalid UTF-8 text, NaN/±Inf, nesting over 64, arrays or maps over 1024
//    entries, integers outside int64 and trailing bytes (400 StatusErrors).
// Imports: apierrors, schema (OpenAPI index), protobuf wire-writer (a growing byte buffer),
// patch/json-value (setMember).
//
// cbor-x is not used on these paths: it writes text strings and unsorted keys, has no float16
// output, and neither detects duplicate keys nor bounds nesting without a separate validation
// pass; the tests use it as an independent reference implementation.

import { errors, type StatusError } from '../../apierrors/status.js';
import { builtinSchemas, SchemaIndex, type SchemaNode } from '../../schema/openapi-index.js';
import { acquireWriter, releaseWriter, type WireWriter } from '../protobuf/wire-writer.js';
import { setMember } from '../../patch/json-value.js';

export const SELF_DESCRIBED_CBOR = Uint8Array.of(0xd9, 0xd9, 0xf7);

export interface CborDecodeResult {
  value: unknown;
  /** Paths of duplicated map keys; only filled with duplicateKeys: 'report'. */
  duplicateFields: string[];
}

export interface CborDecodeOptions {
  /** Upstream: 64. */
  maxDepth?: number;
  /** Upstream: 1024 each. */
  maxArrayElements?: number;
  maxMapPairs?: number;
  /**
   * `reject` (default, upstream: a CBOR map with duplicate keys is invalid and the request fails)
   * or `report` (keep the last value and list the paths, like the JSON decoder).
   */
  duplicateKeys?: 'reject' | 'report';
}

export interface CborEncodeOptions {
  /**
   * The OpenAPI schema of the value: its `format: byte` fields (base64 strings in the JSON form)
   * are written as tag 22 byte strings, as upstream writes Go []byte. Without it they stay strings.
   */
  schemaName?: string;
  schemas?: SchemaIndex;
  /** Prefix the self-described tag (default true, as upstream). */
  selfDescribed?: boolean;
}

function cborError(detail: string): StatusError {
  return errors.badRequest(`error decoding CBOR: cbor: ${detail}`);
}

// ---- encoding ----

/** Which paths under a schema hold `format: byte` strings; undefined subtrees hold none. */
interface ByteTree {
  bytes: boolean;
  props?: Map<string, ByteTree>;
  items?: ByteTree;
  values?: ByteTree;
}

const byteTrees = new WeakMap<SchemaIndex, Map<string, ByteTree | undefined>>();

function byteTreeFor(schemas: SchemaIndex, name: string): ByteTree | undefined {
  let cache = byteTrees.get(schemas);
  if (!cache) byteTrees.set(schemas, (cache = new Map()));
  if (cache.has(name)) return cache.get(name);
  cache.set(name, undefined); // recursion guard: a self-referencing schema adds nothing new
  const node = schemas.get(name);
  const tree = node ? buildByteTree(schemas, node) : undefined;
  cache.set(name, tree);
  return tree;
}

function buildByteTree(schemas: SchemaIndex, raw: SchemaNode): ByteTree | undefined {
  const ref = SchemaIndex.refName(raw);
  if (ref) return byteTreeFor(schemas, ref);
  if (raw.type === 'string' && raw.format === 'byte') return { bytes: true };
  let tree: ByteTree | undefined;
  if (raw.properties) {
    for (const [k, v] of Object.entries(raw.properties)) {
      const sub = buildByteTree(schemas, v);
      if (sub) {
        tree ??= { bytes: false };
        (tree.props ??= new Map()).set(k, sub);
      }
    }
  }
  if (raw.items) {
    const sub = buildByteTree(schemas, raw.items);
    if (sub) (tree ??= { bytes: false }).items = sub;
  }
  if (raw.additionalProperties && typeof raw.additionalProperties === 'object') {
    const sub = buildByteTree(schemas, raw.additionalProperties);
    if (sub) (tree ??= { bytes: false }).values = sub;
  }
  return tree;
}

function head(w: WireWriter, major: number, n: number): void {
  const m = major << 5;
  if (n < 24) w.byte(m | n);
  else if (n < 0x100) w.byte2(m | 24, n);
  else if (n < 0x10000) {
    w.ensure(3);
    w.buf[w.pos++] = m | 25;
    w.buf.writeUInt16BE(n, w.pos);
    w.pos += 2;
  } else if (n < 0x100000000) {
    w.ensure(5);
    w.buf[w.pos++] = m | 26;
    w.buf.writeUInt32BE(n, w.pos);
    w.pos += 4;
  } else {
    w.ensure(9);
    w.buf[w.pos++] = m | 27;
    w.buf.writeBigUInt64BE(BigInt(n), w.pos);
    w.pos += 8;
  }
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The IEEE half-precision bits of v if v is exactly representable in 16 bits, else -1. */
function toHalfExact(v: number): number {
  f32[0] = v;
  if (f32[0] !== v) return -1;
  const bits = u32[0]!;
  const sign = (bits >>> 16) & 0x8000;
  if (v === 0) return sign;
  const exp = ((bits >>> 23) & 0xff) - 127;
  const mant = bits & 0x7fffff;
  if (exp > 15) return -1;
  if (exp >= -14) return mant & 0x1fff ? -1 : sign | ((exp + 15) << 10) | (mant >>> 13);
  if (exp < -24) return -1;
  // Subnormal half: v = m * 2^-24 with m the 24-bit significand shifted right.
  const full = mant | 0x800000;
  const shift = -exp - 1;
  return full & ((1 << shift) - 1) ? -1 : sign | (full >>> shift);
}

function writeFloat(w: WireWriter, v: number): void {
  if (!Number.isFinite(v)) throw errors.internal(`CBOR encoding: ${v} has no representation`);
  const half = toHalfExact(v);
  if (half >= 0) {
    w.ensure(3);
    w.buf[w.pos++] = 0xf9;
    w.buf.writeUInt16BE(half, w.pos);
    w.pos += 2;
    return;
  }
  f32[0] = v;
  if (f32[0] === v) {
    w.ensure(5);
    w.buf[w.pos++] = 0xfa;
    w.buf.writeFloatBE(v, w.pos);
    w.pos += 4;
    return;
  }
  w.ensure(9);
  w.buf[w.pos++] = 0xfb;
  w.buf.writeDoubleBE(v, w.pos);
  w.pos += 8;
}

function writeNumber(w: WireWriter, v: number): void {
  if (Number.isInteger(v) && Math.abs(v) <= Number.MAX_SAFE_INTEGER) {
    if (v >= 0) head(w, 0, v);
    else head(w, 1, -1 - v);
    return;
  }
  if (Number.isInteger(v) && v >= -(2 ** 63) && v < 2 ** 64) {
    // Beyond 2^53 a JSON integer is already approximate; keep it an integer as Go's int64 would.
    const big = BigInt(v);
    w.ensure(9);
    w.buf[w.pos++] = big >= 0n ? 0x1b : 0x3b;
    w.buf.writeBigUInt64BE(big >= 0n ? big : -1n - big, w.pos);
    w.pos += 8;
    return;
  }
  writeFloat(w, v);
}

/** A string as a byte string (major type 2), as upstream encodes Go strings. */
function writeString(w: WireWriter, s: string): void {
  const n = s.length;
  if (n < 24) {
    w.ensure(1 + 3 * n);
    const buf = w.buf;
    const start = w.pos;
    let p = start + 1;
    let ascii = true;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 128) {
        ascii = false;
        break;
      }
      buf[p++] = c;
    }
    if (ascii) {
      buf[start] = 0x40 | n;
      w.pos = p;
      return;
    }
  }
  const len = Buffer.byteLength(s, 'utf8');
  head(w, 2, len);
  w.ensure(len);
  w.buf.write(s, w.pos, 'utf8');
  w.pos += len;
}

const NON_ASCII = /[^\x00-\x7f]/;

/** Keys in the order of their encoded form: shorter UTF-8 first, then bytewise. */
function sortKeys(keys: string[]): string[] {
  let ascii = true;
  for (const k of keys) {
    if (NON_ASCII.test(k)) {
      ascii = false;
      break;
    }
  }
  if (ascii) return keys.sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
  const enc = new Map(keys.map((k) => [k, Buffer.from(k, 'utf8')]));
  return keys.sort((a, b) => {
    const x = enc.get(a)!;
    const y = enc.get(b)!;
    return x.length - y.length || Buffer.compare(x, y);
  });
}

const MAX_ENCODE_DEPTH = 10_000;

function writeValue(w: WireWriter, v: unknown, tree: ByteTree | undefined, depth: number): void {
  if (depth > MAX_ENCODE_DEPTH) throw errors.internal('CBOR encoding: value nested too deeply');
  switch (typeof v) {
    case 'string':
      if (tree?.bytes) {
        const raw = Buffer.from(v, 'base64');
        w.byte(0xd6); // tag 22: expected later base64 encoding
        head(w, 2, raw.length);
        w.raw(raw);
      } else writeString(w, v);
      return;
    case 'number':
      writeNumber(w, v);
      return;
    case 'boolean':
      w.byte(v ? 0xf5 : 0xf4);
      return;
    case 'undefined':
      w.byte(0xf6);
      return;
    case 'object':
      break;
    default:
      throw errors.internal(`CBOR encoding: unsupported ${typeof v} value`);
  }
  if (v === null) {
    w.byte(0xf6);
    return;
  }
  if (v instanceof EncodedCbor) {
    if (partsSink) partsSink.split(w, v.bytes);
    else w.raw(v.bytes);
    return;
  }
  if (v instanceof Uint8Array) {
    w.byte(0xd6);
    head(w, 2, v.length);
    w.raw(v);
    return;
  }
  if (Array.isArray(v)) {
    head(w, 4, v.length);
    const items = tree?.items;
    for (let i = 0; i < v.length; i++) writeValue(w, v[i], items, depth + 1);
    return;
  }
  const o = v as Record<string, unknown>;
  const keys = sortKeys(Object.keys(o).filter((k) => o[k] !== undefined));
  head(w, 5, keys.length);
  for (const k of keys) {
    writeString(w, k);
    writeValue(w, o[k], tree ? (tree.props?.get(k) ?? tree.values) : undefined, depth + 1);
  }
}

/** Encodes a JSON-form value as upstream's CBOR serializer would (see the module comment). */
export function encodeCbor(value: unknown, options: CborEncodeOptions = {}): Buffer {
  const tree = options.schemaName ? byteTreeFor(options.schemas ?? builtinSchemas, options.schemaName) : undefined;
  const w = acquireWriter();
  try {
    if (options.selfDescribed !== false) w.raw(SELF_DESCRIBED_CBOR);
    writeValue(w, value, tree, 0);
    return w.finish();
  } finally {
    releaseWriter(w);
  }
}

/**
 * A value already encoded as one CBOR data item (no self-described tag), written as it is where
 * it stands in a value: lists are assembled from cached item encodings with it.
 */
export class EncodedCbor {
  constructor(readonly bytes: Buffer) {}
}

/** Collects the output of encodeCborParts: written bytes copied out, EncodedCbor bytes referenced. */
class PartsSink {
  readonly parts: Buffer[] = [];

  /** Ends the current written run at the writer's position, then adds `bytes` as a part. */
  split(w: WireWriter, bytes: Buffer): void {
    this.flush(w);
    this.parts.push(bytes);
  }

  flush(w: WireWriter): void {
    if (w.pos > 0) this.parts.push(w.finish());
    w.reset();
  }
}

/** The sink of the encodeCborParts call under way (encoding is synchronous, never nested). */
let partsSink: PartsSink | undefined;

/**
 * encodeCbor's output as buffers to write in sequence, with each EncodedCbor in the value
 * referenced rather than copied into the output.
 */
export function encodeCborParts(value: unknown, options: CborEncodeOptions = {}): Buffer[] {
  const tree = options.schemaName ? byteTreeFor(options.schemas ?? builtinSchemas, options.schemaName) : undefined;
  const sink = new PartsSink();
  const w = acquireWriter();
  partsSink = sink;
  try {
    if (options.selfDescribed !== false) w.raw(SELF_DESCRIBED_CBOR);
    writeValue(w, value, tree, 0);
    sink.flush(w);
    return sink.parts;
  } finally {
    partsSink = undefined;
    releaseWriter(w);
  }
}

/** An `application/cbor-seq` body: each item a complete self-described CBOR data item. */
export function encodeCborSeq(items: readonly unknown[], options: CborEncodeOptions = {}): Buffer {
  return Buffer.concat(items.map((item) => encodeCbor(item, options)));
}

/**
 * One watch event for an `application/cbor-seq` stream: {type, object}. `object` is the JSON-form
 * object or its already-encoded CBOR (embedded as is; a leading self-described tag is harmless).
 */
export function encodeCborWatchEvent(type: string, object: unknown, options: CborEncodeOptions = {}): Buffer {
  const w = acquireWriter();
  try {
    w.raw(SELF_DESCRIBED_CBOR);
    w.byte(0xa2);
    // Keys in encoded order: "type" (4 bytes) before "object" (6 bytes).
    writeString(w, 'type');
    writeString(w, type);
    writeString(w, 'object');
    if (object instanceof Uint8Array) w.raw(object);
    else {
      const tree = options.schemaName ? byteTreeFor(options.schemas ?? builtinSchemas, options.schemaName) : undefined;
      writeValue(w, object, tree, 0);
    }
    return w.finish();
  } finally {
    releaseWriter(w);
  }
}

// ---- decoding ----

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });
const lenientUtf8 = new TextDecoder('utf-8');
const BREAK = Symbol('break');
const INT64_MAX = 2n ** 63n - 1n;

class CborReader {
  pos = 0;
  readonly duplicates: string[] = [];
  private readonly reported = new Set<string>();

  constructor(
    private readonly buf: Uint8Array,
    private readonly maxDepth: number,
    private readonly maxArray: number,
    private readonly maxMap: number,
    private readonly rejectDuplicates: boolean,
  ) {}

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw cborError('unexpected EOF');
  }

  private uint(info: number): number | bigint {
    const b = this.buf;
    if (info < 24) return info;
    switch (info) {
      case 24:
        this.need(1);
        return b[this.pos++]!;
      case 25: {
        this.need(2);
        const v = (b[this.pos]! << 8) | b[this.pos + 1]!;
        this.pos += 2;
        return v;
      }
      case 26: {
        this.need(4);
        const v = ((b[this.pos]! << 24) | (b[this.pos + 1]! << 16) | (b[this.pos + 2]! << 8) | b[this.pos + 3]!) >>> 0;
        this.pos += 4;
        return v;
      }
      case 27: {
        this.need(8);
        const v = new DataView(b.buffer, b.byteOffset + this.pos, 8).getBigUint64(0);
        this.pos += 8;
        return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
      }
      default:
        throw cborError(`invalid additional information ${info}`);
    }
  }

  /** A length that must fit in what is left of the input (each element takes at least a byte). */
  private length(info: number, what: string, limit: number): number {
    const n = this.uint(info);
    if (typeof n === 'bigint' || n > limit) throw cborError(`exceeded max number of elements ${limit} for CBOR ${what}`);
    if (n > this.buf.length - this.pos) throw cborError('unexpected EOF');
    return n;
  }

  private bytesOf(major: number, info: number, depth: number): Uint8Array {
    if (info === 31) {
      const chunks: Uint8Array[] = [];
      for (;;) {
        this.need(1);
        const b = this.buf[this.pos++]!;
        if (b === 0xff) break;
        if (b >> 5 !== major || (b & 31) === 31) throw cborError('wrong element type in indefinite-length string');
        chunks.push(this.bytesOf(major, b & 31, depth));
      }
      return Buffer.concat(chunks);
    }
    const n = this.length(info, 'string', Number.MAX_SAFE_INTEGER);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  item(depth: number, path: string): unknown {
    if (depth > this.maxDepth) throw cborError(`exceeded max nested level ${this.maxDepth}`);
    this.need(1);
    const ib = this.buf[this.pos++]!;
    const major = ib >> 5;
    const info = ib & 31;
    switch (major) {
      case 0: {
        const n = this.uint(info);
        if (typeof n === 'bigint') {
          if (n > INT64_MAX) throw cborError(`cannot unmarshal positive integer into Go value of type int64 (${n} overflows)`);
          return Number(n);
        }
        return n;
      }
      case 1: {
        const n = this.uint(info);
        if (typeof n === 'bigint') {
          if (n > INT64_MAX) throw cborError(`cannot unmarshal negative integer into Go value of type int64 (-1-${n} overflows)`);
          return -1 - Number(n);
        }
        return -1 - n;
      }
      case 2:
        return lenientUtf8.decode(this.bytesOf(2, info, depth));
      case 3: {
        const raw = this.bytesOf(3, info, depth);
        try {
          return fatalUtf8.decode(raw);
        } catch {
          throw cborError('invalid UTF-8 string');
        }
      }
      case 4: {
        const out: unknown[] = [];
        if (info === 31) {
          for (;;) {
            const v = this.itemOrBreak(depth + 1, `${path}[${out.length}]`);
            if (v === BREAK) break;
            if (out.length >= this.maxArray) throw cborError(`exceeded max number of elements ${this.maxArray} for CBOR array`);
            out.push(v);
          }
          return out;
        }
        const n = this.length(info, 'array', this.maxArray);
        for (let i = 0; i < n; i++) out.push(this.item(depth + 1, `${path}[${i}]`));
        return out;
      }
      case 5: {
        const out: Record<string, unknown> = {};
        const indefinite = info === 31;
        const n = indefinite ? Number.POSITIVE_INFINITY : this.length(info, 'map', this.maxMap);
        for (let i = 0; i < n; i++) {
          const k = this.itemOrBreak(depth + 1, path);
          if (k === BREAK) {
            if (!indefinite) throw cborError('unexpected break');
            break;
          }
          if (i >= this.maxMap) throw cborError(`exceeded max number of key-value pairs ${this.maxMap} for CBOR map`);
          if (typeof k !== 'string') throw cborError(`cannot unmarshal ${describe(k)} map key into Go value of type string`);
          const childPath = path ? `${path}.${k}` : k;
          const v = this.item(depth + 1, childPath);
          if (Object.prototype.hasOwnProperty.call(out, k)) {
            if (this.rejectDuplicates) throw cborError(`found duplicate map key ${JSON.stringify(k)} at map element index ${i}`);
            if (!this.reported.has(childPath)) {
              this.reported.add(childPath);
              this.duplicates.push(childPath);
            }
          }
          setMember(out, k, v);
        }
        return out;
      }
      case 6: {
        const tag = this.uint(info);
        switch (tag) {
          case 55799:
            return this.item(depth + 1, path);
          case 0: {
            const v = this.item(depth + 1, path);
            if (typeof v !== 'string') throw cborError('tag number 0 must be followed by text string');
            return v;
          }
          case 21:
          case 22:
          case 23: {
            this.need(1);
            const b = this.buf[this.pos]!;
            if (b >> 5 !== 2) throw cborError(`tag number ${tag} must be followed by a byte string`);
            this.pos++;
            const raw = Buffer.from(this.bytesOf(2, b & 31, depth));
            if (tag === 21) return raw.toString('base64url');
            if (tag === 22) return raw.toString('base64');
            return raw.toString('hex');
          }
          default:
            throw cborError(`unsupported tag number ${tag}`);
        }
      }
      default:
        return this.simple(info);
    }
  }

  private itemOrBreak(depth: number, path: string): unknown {
    this.need(1);
    if (this.buf[this.pos] === 0xff) {
      this.pos++;
      return BREAK;
    }
    return this.item(depth, path);
  }

  private simple(info: number): unknown {
    const b = this.buf;
    let v: number;
    switch (info) {
      case 20:
        return false;
      case 21:
        return true;
      case 22:
      case 23: // undefined decodes to nil in Go
        return null;
      case 25: {
        this.need(2);
        v = halfToNumber((b[this.pos]! << 8) | b[this.pos + 1]!);
        this.pos += 2;
        break;
      }
      case 26:
        this.need(4);
        v = new DataView(b.buffer, b.byteOffset + this.pos, 4).getFloat32(0);
        this.pos += 4;
        break;
      case 27:
        this.need(8);
        v = new DataView(b.buffer, b.byteOffset + this.pos, 8).getFloat64(0);
        this.pos += 8;
        break;
      case 31:
        throw cborError('unexpected break');
      default:
        throw cborError(`unsupported simple value ${info < 24 ? info : 'extension'}`);
    }
    if (!Number.isFinite(v)) throw cborError(`floating-point number ${v} is not accepted`);
    return v;
  }

  get remaining(): number {
    return this.buf.length - this.pos;
  }
}

function halfToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'map';
  return typeof v === 'number' ? 'number' : typeof v;
}

/**
 * Decodes a CBOR body (with or without the self-described tag). Throws a 400 StatusError for
 * malformed or hostile input (see the module comment); never anything else.
 */
export function decodeCbor(bytes: Uint8Array, options: CborDecodeOptions = {}): CborDecodeResult {
  const r = new CborReader(
    bytes,
    options.maxDepth ?? 64,
    options.maxArrayElements ?? 1024,
    options.maxMapPairs ?? 1024,
    (options.duplicateKeys ?? 'reject') === 'reject',
  );
  if (bytes.length === 0) throw cborError('unexpected EOF');
  const value = r.item(0, '');
  if (r.remaining > 0) throw cborError(`${r.remaining} bytes of extraneous data starting at index ${bytes.length - r.remaining}`);
  return { value, duplicateFields: r.duplicates };
}

/** Splits an `application/cbor-seq` body into its items, each decoded as decodeCbor would. */
export function decodeCborSeq(bytes: Uint8Array, options: CborDecodeOptions = {}): unknown[] {
  const out: unknown[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const r = new CborReader(
      bytes.subarray(offset),
      options.maxDepth ?? 64,
      options.maxArrayElements ?? 1024,
      options.maxMapPairs ?? 1024,
      (options.duplicateKeys ?? 'reject') === 'reject',
    );
    out.push(r.item(0, ''));
    offset += r.pos;
  }
  return out;
}

/** Whether a body starts with the self-described CBOR tag (upstream's recognizer test). */
export function looksLikeCbor(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xd9 && bytes[1] === 0xd9 && bytes[2] === 0xf7;
}
