// internal/codec/protobuf/json-transcoder owns writing a cached object's protobuf message straight
// from its compact JSON bytes, without JSON.parse and without a JS object: a first protobuf list
// encodes every cached object, and parsing 10,000 pods only to walk the objects once cost most of
// that list. Each message gets a transcoding plan, built once on first use from its MessagePlan:
// its fields in field-number order (Go's order; JSON's key order is arbitrary) with their tag
// bytes and a hash table from the JSON key's bytes to the field. A message's object is scanned
// once for the value spans of its known keys, then the fields are written in number order.
// Strings without escapes are copied as the UTF-8 bytes they already are. One pass over the
// bytes first records where each string, object and array ends (and whether a string has
// escapes or non-ASCII bytes), so skipping a value at any depth costs one lookup instead of a
// scan of it at every level it is nested in.
//
// The result must be byte for byte what the compiled encoder writes for JSON.parse of the same
// bytes. Anything the plans do not handle the same way for certain — escapes in keys, repeated
// keys, whitespace, a value of an unexpected JSON type, null where it is not simply absent, a
// message with inlined fields or a JSONSchemaProps "or" type — makes transcode() return false,
// and the caller takes the general path, which also owns every error. Messages the plans never
// handle (inline, the JSONSchemaProps "or" types) are written by the compiled encoder from
// JSON.parse of just their value. Imports: compiled-messages, message-plans,
// well-known-values, wire-writer.

import { isUtf8 } from 'node:buffer';
import { tagBytes, type CompiledMessages, type EncodeFn } from './compiled-messages.js';
import type { FieldPlan, MessagePlan, ProtoSchema, ScalarType, SpecialKind } from './message-plans.js';
import { GO_ZERO_TIME_SECONDS, parseGoDuration, parsePlainUtcSeconds, parseRfc3339 } from './well-known-values.js';
import type { WireWriter } from './wire-writer.js';

const [QUOTE, BACKSLASH, COLON, COMMA, MINUS] = [0x22, 0x5c, 0x3a, 0x2c, 0x2d];
const [OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET] = [0x7b, 0x7d, 0x5b, 0x5d];
const [LOWER_T, LOWER_F, LOWER_N] = [0x74, 0x66, 0x6e];
const INT64_LIMIT = 9223372036854775807;

/** Thrown inside a transcode when the bytes need the general path; never escapes transcode(). */
const GENERAL = new Error('needs the general protobuf path');

const enum Kind {
  String,
  Bool,
  Int32,
  Int64,
  Double,
  Bytes,
  Message,
}

const SCALAR_KIND: Record<ScalarType, Kind> = {
  string: Kind.String,
  bool: Kind.Bool,
  int32: Kind.Int32,
  int64: Kind.Int64,
  double: Kind.Double,
  bytes: Kind.Bytes,
};

interface FieldStep {
  readonly key: Buffer;
  readonly hash: number;
  /** The field's tag (the element tag for repeated fields and map entries): its first byte, and its second or -1. */
  readonly tag0: number;
  readonly tag1: number;
  readonly kind: Kind;
  readonly repeated: boolean;
  readonly map: boolean;
  /** Message type of message fields and map values. */
  readonly message: string | undefined;
  sub: MessageStep | undefined;
}

interface MessageStep {
  readonly fullName: string;
  readonly special: SpecialKind | undefined;
  /** Written by the compiled encoder from JSON.parse of the value (inline fields, "or" types). */
  readonly general: boolean;
  readonly fields: readonly FieldStep[];
  /** Open addressing: field index + 1 by key hash; 0 is empty. */
  readonly table: Int32Array;
  readonly mask: number;
  encoder: EncodeFn | undefined;
}

/** Specials written here; the others (JSONSchemaProps' "or" types) go through the compiled encoder. */
const HANDLED_SPECIALS = new Set<SpecialKind>(['time', 'microtime', 'duration', 'quantity', 'intorstring', 'rawjson', 'rawextension', 'stringlist']);

function keyHash(bytes: Uint8Array): number {
  let h = 0;
  for (let i = 0; i < bytes.length; i++) h = (Math.imul(h, 31) + bytes[i]!) | 0;
  return h;
}

// Spans of the fields of the messages being written (two entries per field: start, end), and
// map entries being sorted, on one stack shared by the nesting levels.
let stack = new Int32Array(4096);
let sp = 0;
/** The bytes being transcoded. */
let b: Buffer = Buffer.alloc(0);
let w: WireWriter;
/** For the index of each string's opening quote and each object's or array's opening bracket: the index after its end. */
let ends = new Int32Array(64 * 1024);
/** For the index of each string's opening quote: STRING_ESCAPED | STRING_NON_ASCII | STRING_OTHER_ESCAPE. */
let stringFlags = new Uint8Array(64 * 1024);
const STRING_ESCAPED = 1;
const STRING_NON_ASCII = 2;
/** An escape other than \" and \\ (the only ones JSON.stringify writes in plain ASCII keys). */
const STRING_OTHER_ESCAPE = 4;
let open = new Int32Array(256);

/** 1 for the bytes a string's scan passes over without a look: not a quote, backslash or non-ASCII. */
const PLAIN_IN_STRING = new Uint8Array(256).map((_, c) => (c === QUOTE || c === BACKSLASH || c >= 0x80 ? 0 : 1));

/** Fills `ends` and `stringFlags` for b (see above); false when the bytes do not balance. */
function scanStructure(): boolean {
  const bytes = b;
  const n = bytes.length;
  if (ends.length < n) {
    ends = new Int32Array(n * 2);
    stringFlags = new Uint8Array(n * 2);
  }
  const e = ends;
  const flagsAt = stringFlags;
  const plain = PLAIN_IN_STRING;
  let opened = open;
  let top = 0;
  for (let i = 0; i < n; i++) {
    const c = bytes[i]!;
    if (c === QUOTE) {
      const start = i;
      let flags = 0;
      for (i++; ; i++) {
        while (i < n && plain[bytes[i]!] === 1) i++;
        if (i >= n) return false;
        const d = bytes[i]!;
        if (d === QUOTE) break;
        if (d === BACKSLASH) {
          const x = bytes[++i];
          flags |= x === QUOTE || x === BACKSLASH ? STRING_ESCAPED : STRING_ESCAPED | STRING_OTHER_ESCAPE;
        } else flags |= STRING_NON_ASCII;
      }
      e[start] = i + 1;
      flagsAt[start] = flags;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (top === opened.length) {
        const next = new Int32Array(opened.length * 2);
        next.set(opened);
        open = opened = next;
      }
      opened[top++] = i;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (top === 0) return false;
      e[opened[--top]!] = i + 1;
    }
  }
  return top === 0;
}

/** The index after the value at `i`. */
function skip(i: number): number {
  const c = b[i];
  if (c === QUOTE || c === OPEN_BRACE || c === OPEN_BRACKET) return ends[i]!;
  const from = i;
  const n = b.length;
  while (i < n) {
    const d = b[i]!;
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET) break;
    i++;
  }
  if (i === from || i === n) throw GENERAL;
  return i;
}

/**
 * Whether the object b[i, end) is what JSON.stringify writes for its parsed value: objects of
 * objects only, keys ASCII with no escapes but \" and \\, and none V8 would order first as an
 * array index (all digits). fieldsV1 is such an object, and is then copied as it is.
 */
function canonicalFields(i: number): boolean {
  let j = i + 1;
  if (b[j] === CLOSE_BRACE) return true;
  for (;;) {
    if (b[j] !== QUOTE) return false;
    const flags = stringFlags[j]!;
    const keyEnd = ends[j]!;
    // Raw control characters cannot be in a JSON string; escaped ones have STRING_OTHER_ESCAPE.
    if (flags & (STRING_NON_ASCII | STRING_OTHER_ESCAPE)) return false;
    const first = b[j + 1]!;
    if (first >= 0x30 && first <= 0x39) return false;
    if (b[keyEnd] !== COLON || b[keyEnd + 1] !== OPEN_BRACE) return false;
    if (!canonicalFields(keyEnd + 1)) return false;
    j = ends[keyEnd + 1]!;
    if (b[j] === CLOSE_BRACE) return true;
    if (b[j] !== COMMA) return false;
    j++;
  }
}

export class JsonTranscoder {
  private readonly steps = new Map<string, MessageStep>();

  constructor(
    private readonly schema: ProtoSchema,
    private readonly compiled: CompiledMessages,
  ) {}

  /**
   * Writes the message `fullName` of the JSON object in `bytes` (compact, as the server stores
   * it) into `writer` at its position. False when the bytes need the general path: the writer
   * then holds partial output the caller discards.
   */
  transcode(writer: WireWriter, bytes: Buffer, fullName: string): boolean {
    const step = this.step(fullName);
    if (step.special !== undefined || step.general) return false;
    const outerB = b;
    const outerW = w;
    const outerSp = sp;
    b = bytes;
    w = writer;
    try {
      if (bytes[0] !== OPEN_BRACE || !scanStructure()) return false;
      return this.object(step, 0) === bytes.length;
    } catch {
      // GENERAL, or anything else the general path will answer for (it owns the errors).
      return false;
    } finally {
      b = outerB;
      w = outerW;
      sp = outerSp;
    }
  }

  private step(fullName: string): MessageStep {
    let s = this.steps.get(fullName);
    if (s) return s;
    const plan: MessagePlan = this.schema.plan(fullName);
    const general = plan.fields.some((f) => f.inline) || (plan.special !== undefined && !HANDLED_SPECIALS.has(plan.special));
    const fields = general || plan.special ? [] : plan.fields.map(fieldStep);
    let size = 8;
    while (size < fields.length * 4) size *= 2;
    const table = new Int32Array(size);
    fields.forEach((f, i) => {
      let slot = f.hash & (size - 1);
      while (table[slot] !== 0) slot = (slot + 1) & (size - 1);
      table[slot] = i + 1;
    });
    s = { fullName, special: plan.special, general, fields, table, mask: size - 1, encoder: undefined };
    this.steps.set(fullName, s);
    return s;
  }

  private sub(f: FieldStep): MessageStep {
    f.sub ??= this.step(f.message!);
    return f.sub;
  }

  /** Writes the fields of the object at `i` (an open brace); returns the index after it. */
  private object(m: MessageStep, i: number): number {
    const bytes = b;
    const fields = m.fields;
    const n = fields.length;
    const base = sp;
    sp += 2 * n;
    if (sp > stack.length) growStack();
    const spans = stack;
    for (let q = base; q < sp; q++) spans[q] = -1;
    let j = i + 1;
    if (bytes[j] === CLOSE_BRACE) j++;
    else {
      for (;;) {
        if (bytes[j] !== QUOTE) throw GENERAL;
        const k = ends[j]! - 1;
        if (bytes[k + 1] !== COLON) throw GENERAL;
        const vs = k + 2;
        const ve = skip(vs);
        let f: number;
        if (stringFlags[j] & STRING_ESCAPED) f = this.lookupEscaped(m, j, k + 1);
        else {
          let h = 0;
          for (let q = j + 1; q < k; q++) h = (Math.imul(h, 31) + bytes[q]!) | 0;
          f = this.lookup(m, h, bytes, j + 1, k);
        }
        if (f >= 0) {
          // JSON.parse keeps a repeated key's last value; the general path sorts that out.
          if (spans[base + 2 * f] !== -1) throw GENERAL;
          spans[base + 2 * f] = vs;
          spans[base + 2 * f + 1] = ve;
        }
        j = ve;
        if (bytes[j] === CLOSE_BRACE) {
          j++;
          break;
        }
        if (bytes[j] !== COMMA) throw GENERAL;
        j++;
      }
    }
    for (let f = 0; f < n; f++) {
      const vs = spans[base + 2 * f]!;
      // Absent, or null: the compiled encoder skips both.
      if (vs < 0 || b[vs] === LOWER_N) continue;
      this.field(fields[f]!, vs, spans[base + 2 * f + 1]!);
    }
    sp = base;
    return j;
  }

  /** The field index of an escaped key, the JSON string b[start, end) (rare: decoded first). */
  private lookupEscaped(m: MessageStep, start: number, end: number): number {
    const key = Buffer.from(JSON.parse(b.toString('utf8', start, end)) as string, 'utf8');
    return this.lookup(m, keyHash(key), key, 0, key.length);
  }

  /** The index of the field whose JSON key is `bytes`[start, end), or -1. */
  private lookup(m: MessageStep, h: number, bytes: Uint8Array, start: number, end: number): number {
    const table = m.table;
    let slot = h & m.mask;
    for (;;) {
      const x = table[slot]!;
      if (x === 0) return -1;
      const f = m.fields[x - 1]!;
      if (f.hash === h && f.key.length === end - start) {
        const key = f.key;
        let same = true;
        for (let q = 0; q < key.length; q++) {
          if (key[q] !== bytes[start + q]) {
            same = false;
            break;
          }
        }
        if (same) return x - 1;
      }
      slot = (slot + 1) & m.mask;
    }
  }

  private field(f: FieldStep, vs: number, ve: number): void {
    if (f.map) return this.map(f, vs, ve);
    if (!f.repeated) {
      writeTag(f);
      this.value(f, vs, ve);
      return;
    }
    if (b[vs] !== OPEN_BRACKET) throw GENERAL;
    let j = vs + 1;
    if (b[j] === CLOSE_BRACKET) return;
    for (;;) {
      const e = skip(j);
      // A null element is written differently by each kind of element: leave it to the general path.
      if (e < 0 || b[j] === LOWER_N) throw GENERAL;
      writeTag(f);
      this.value(f, j, e);
      j = e;
      if (b[j] === CLOSE_BRACKET) return;
      if (b[j] !== COMMA) throw GENERAL;
      j++;
    }
  }

  /** One value of a field (without its tag), from the JSON value b[vs, ve). */
  private value(f: FieldStep, vs: number, ve: number): void {
    switch (f.kind) {
      case Kind.String:
        return writeString(vs, ve);
      case Kind.Bool:
        if (ve - vs === 4 && b[vs] === LOWER_T) w.byte(1);
        else if (ve - vs === 5 && b[vs] === LOWER_F) w.byte(0);
        else throw GENERAL;
        return;
      case Kind.Int32: {
        const v = readNumber(vs, ve);
        if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) throw GENERAL;
        return w.varint(v);
      }
      case Kind.Int64: {
        const v = readNumber(vs, ve);
        if (!Number.isInteger(v) || Math.abs(v) > INT64_LIMIT) throw GENERAL;
        return w.varint(v);
      }
      case Kind.Double: {
        const v = readNumber(vs, ve);
        if (!Number.isFinite(v)) throw GENERAL;
        return w.double(v);
      }
      case Kind.Bytes:
        return w.bytes(Buffer.from(asciiString(vs, ve), 'base64'));
      case Kind.Message: {
        const s = w.fork();
        this.message(this.sub(f), vs, ve);
        w.join(s);
        return;
      }
    }
  }

  /** The content of message `m` (no tag, no length) from the JSON value b[vs, ve). */
  private message(m: MessageStep, vs: number, ve: number): void {
    if (m.general) {
      m.encoder ??= this.compiled.encoder(m.fullName);
      m.encoder(w, JSON.parse(b.toString('utf8', vs, ve)));
      return;
    }
    switch (m.special) {
      case undefined:
        if (b[vs] !== OPEN_BRACE) throw GENERAL;
        this.object(m, vs);
        return;
      case 'time':
      case 'microtime': {
        const plain = stringFlags[vs] === 0 && b[vs] === QUOTE ? parsePlainUtcSeconds(b, vs + 1, ve - 1) : undefined;
        const t = plain !== undefined ? { seconds: plain, nanos: 0 } : parseRfc3339(asciiString(vs, ve));
        if (!t) throw GENERAL;
        // As the compiled encoder: nothing for Go's zero time; Time drops sub-second precision.
        const micro = m.special === 'microtime';
        if (t.seconds === GO_ZERO_TIME_SECONDS && (t.nanos === 0 || !micro)) return;
        w.byte(8);
        w.varint(t.seconds);
        w.byte(16);
        w.varint(micro ? t.nanos : 0);
        return;
      }
      case 'duration': {
        const d = parseGoDuration(asciiString(vs, ve));
        if (d === undefined) throw GENERAL;
        w.byte(8);
        w.varintBig(d);
        return;
      }
      case 'quantity':
        w.byte(10);
        if (b[vs] === QUOTE) writeString(vs, ve);
        else {
          const v = readNumber(vs, ve);
          if (!Number.isFinite(v)) throw GENERAL;
          w.string(String(v));
        }
        return;
      case 'intorstring':
        if (b[vs] === QUOTE) {
          w.byte2(8, 1);
          w.byte2(16, 0);
          w.byte(26);
          writeString(vs, ve);
        } else {
          const v = readNumber(vs, ve);
          if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) throw GENERAL;
          w.byte2(8, 0);
          w.byte(16);
          w.varint(v);
          w.byte2(26, 0);
        }
        return;
      case 'rawjson':
      case 'rawextension':
        w.byte(10);
        // What JSON.stringify writes for the parsed value: the bytes themselves when they are
        // already in that form (objects of objects with plain keys, as fieldsV1 is).
        if (b[vs] === OPEN_BRACE && canonicalFields(vs)) {
          w.uvarint32(ve - vs);
          w.rawRange(b, vs, ve);
        } else w.bytes(Buffer.from(JSON.stringify(JSON.parse(b.toString('utf8', vs, ve)))));
        return;
      case 'stringlist': {
        if (b[vs] !== OPEN_BRACKET) throw GENERAL;
        let j = vs + 1;
        if (b[j] === CLOSE_BRACKET) return;
        for (;;) {
          const e = skip(j);
          if (e < 0) throw GENERAL;
          w.byte(10);
          writeString(j, e);
          j = e;
          if (b[j] === CLOSE_BRACKET) return;
          if (b[j] !== COMMA) throw GENERAL;
          j++;
        }
      }
      default:
        throw GENERAL;
    }
  }

  /** A map<string, V>: one entry message per key, in Go's key order (bytewise). */
  private map(f: FieldStep, vs: number, ve: number): void {
    if (b[vs] !== OPEN_BRACE) throw GENERAL;
    const base = sp;
    let j = vs + 1;
    if (b[j] !== CLOSE_BRACE) {
      for (;;) {
        if (b[j] !== QUOTE) throw GENERAL;
        let k = j + 1;
        for (;;) {
          const c = b[k];
          if (c === QUOTE) break;
          // Escaped or non-ASCII keys: their order needs decoding; rare, left to the general path.
          if (c === BACKSLASH || c === undefined || c >= 0x80) throw GENERAL;
          k++;
        }
        if (b[k + 1] !== COLON) throw GENERAL;
        const e = skip(k + 2);
        if (e < 0) throw GENERAL;
        if (sp + 4 > stack.length) growStack();
        stack[sp++] = j + 1;
        stack[sp++] = k;
        stack[sp++] = k + 2;
        stack[sp++] = e;
        j = e;
        if (b[j] === CLOSE_BRACE) break;
        if (b[j] !== COMMA) throw GENERAL;
        j++;
      }
    }
    const count = (sp - base) / 4;
    // Insertion sort of the entries by key bytes (maps are small).
    for (let x = 1; x < count; x++) {
      const at = base + 4 * x;
      const ks = stack[at]!;
      const ke = stack[at + 1]!;
      const v0 = stack[at + 2]!;
      const v1 = stack[at + 3]!;
      let y = x - 1;
      for (; y >= 0; y--) {
        const other = base + 4 * y;
        const c = compareRanges(stack[other]!, stack[other + 1]!, ks, ke);
        if (c === 0) throw GENERAL; // a repeated key: JSON.parse keeps the last
        if (c < 0) break;
        stack.copyWithin(other + 4, other, other + 4);
      }
      const to = base + 4 * (y + 1);
      stack[to] = ks;
      stack[to + 1] = ke;
      stack[to + 2] = v0;
      stack[to + 3] = v1;
    }
    for (let at = base; at < base + 4 * count; at += 4) {
      const keyStart = stack[at]!;
      const keyEnd = stack[at + 1]!;
      const v0 = stack[at + 2]!;
      writeTag(f);
      const s = w.fork();
      w.byte(10);
      w.uvarint32(keyEnd - keyStart);
      w.rawRange(b, keyStart, keyEnd);
      const isNull = b[v0] === LOWER_N;
      // As the compiled encoder: a string value always (empty for null), bytes only when not null.
      if (f.kind === Kind.String) {
        w.byte(18);
        if (isNull) w.byte(0);
        else writeString(v0, stack[at + 3]!);
      } else if (f.kind === Kind.Bytes) {
        if (!isNull) {
          w.byte(18);
          this.value(f, v0, stack[at + 3]!);
        }
      } else if (f.kind === Kind.Message) {
        if (isNull) throw GENERAL;
        w.byte(18);
        this.value(f, v0, stack[at + 3]!);
      } else throw GENERAL;
      w.join(s);
    }
    sp = base;
  }
}

function fieldStep(f: FieldPlan): FieldStep {
  const key = Buffer.from(f.jsonKey, 'utf8');
  const kind = f.scalar ? SCALAR_KIND[f.scalar] : Kind.Message;
  const wire = f.map || kind === Kind.String || kind === Kind.Bytes || kind === Kind.Message ? 2 : kind === Kind.Double ? 1 : 0;
  const tag = tagBytes(f.number, wire);
  // Field numbers of the built-in messages stay below 2,048: tags of one or two bytes.
  if (tag.length > 2) throw new Error(`field number ${f.number} of ${f.protoName} is beyond the transcoder's two-byte tags`);
  return { key, hash: keyHash(key), tag0: tag[0]!, tag1: tag.length === 2 ? tag[1]! : -1, kind, repeated: f.repeated, map: f.map, message: f.message, sub: undefined };
}

function writeTag(f: FieldStep): void {
  if (f.tag1 < 0) w.byte(f.tag0);
  else w.byte2(f.tag0, f.tag1);
}

function growStack(): void {
  // Deeper than any built-in object nests in practice; the general path takes it from here.
  if (stack.length >= 1 << 20) throw GENERAL;
  const next = new Int32Array(stack.length * 4);
  next.set(stack);
  stack = next;
}

/** Bytewise order of b[a0, a1) and b[c0, c1): Go's order of (ASCII) strings. */
function compareRanges(a0: number, a1: number, c0: number, c1: number): number {
  const n = Math.min(a1 - a0, c1 - c0);
  for (let q = 0; q < n; q++) {
    const d = b[a0 + q]! - b[c0 + q]!;
    if (d !== 0) return d;
  }
  return a1 - a0 - (c1 - c0);
}

/** A length-prefixed string from the JSON string b[vs, ve), its bytes copied when it has no escapes. */
function writeString(vs: number, ve: number): void {
  if (b[vs] !== QUOTE) throw GENERAL;
  const start = vs + 1;
  const end = ve - 1;
  const flags = stringFlags[vs]!;
  if (flags & STRING_ESCAPED) {
    w.string(JSON.parse(b.toString('utf8', vs, ve)) as string);
    return;
  }
  // Invalid UTF-8 decodes to U+FFFD in the general path: decode it the same way.
  if (flags & STRING_NON_ASCII && !isUtf8(b.subarray(start, end))) {
    w.string(b.toString('utf8', start, end));
    return;
  }
  w.uvarint32(end - start);
  w.rawRange(b, start, end);
}

/** The text of a JSON string without escapes or non-ASCII bytes (times, durations, base64). */
function asciiString(vs: number, ve: number): string {
  if (b[vs] !== QUOTE || stringFlags[vs] !== 0) throw GENERAL;
  return b.toString('latin1', vs + 1, ve - 1);
}

/** The value of the JSON number b[vs, ve); anything else needs the general path. */
function readNumber(vs: number, ve: number): number {
  let q = vs;
  const negative = b[q] === MINUS;
  if (negative) q++;
  if (ve - q > 0 && ve - q <= 15) {
    let v = 0;
    for (; q < ve; q++) {
      const d = b[q]! - 0x30;
      if (d < 0 || d > 9) break;
      v = v * 10 + d;
    }
    if (q === ve) return negative ? -v : v;
  }
  for (let r = vs; r < ve; r++) {
    const c = b[r]!;
    // Digits, sign, point, exponent: JSON's number characters (the bytes are valid JSON).
    if (!((c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === MINUS)) throw GENERAL;
  }
  const v = Number(b.toString('latin1', vs, ve));
  if (Number.isNaN(v)) throw GENERAL;
  return v;
}
