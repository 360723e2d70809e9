// internal/codec/protobuf/json-transcoder owns writing a cached object's protobuf message straight
// from its compact JSON bytes, without JSON.parse and without a JS object: a first protobuf list
// encodes every cached object, and parsing 10,000 pods only to walk the objects once cost most of
// that list. Each message gets a transcoding plan, built once on first use from its MessagePlan:
// its fields in field-number order (Go's order) with their tag bytes and a hash table from the
// JSON key's bytes to the field, plus the order of keys last seen, so a key is usually matched by
// one comparison with the key expected at its place.
//
// One pass over the bytes: each field is written where the cursor meets it, strings without
// escapes copied byte by byte as they are scanned. JSON's key order is arbitrary and Go writes
// fields in number order, so a message (or map, whose entries Go writes in key order) written
// out of order is put in order afterwards by moving the fields' written bytes, which are
// contiguous per field: a copy of what was written, instead of a second pass over the JSON.
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
import { copyRange, type WireWriter } from './wire-writer.js';

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
  /** Message fields: the last value written (see ValueMemo); undefined until one is big enough. */
  memo: ValueMemo | undefined;
}

/**
 * The JSON bytes of the last message value a field had and the content written for them. A
 * message's encoding is a function of its JSON bytes alone, and the objects of one collection
 * often share whole values (the pods of one ReplicaSet share containers, tolerations, security
 * contexts, managedFields entries written in the same second): a value whose bytes begin with
 * the last value's bytes is that value (a JSON object ends where its braces balance), and its
 * content is copied instead of written again. A field whose values keep differing stops keeping
 * them for a while, so the copies it makes are few.
 */
interface ValueMemo {
  json: Buffer;
  jsonLength: number;
  out: Buffer;
  outLength: number;
  /** Values since the last hit; beyond MEMO_PATIENCE only every MEMO_RETRY-th is kept. */
  misses: number;
}

/** Message values shorter than this are written, not looked up (the lookup's native calls cost more). */
const MEMO_MIN_JSON = 48;
/** Nor are values longer than this kept (a memo lives as long as the codec). */
const MEMO_MAX_JSON = 16 * 1024;
const MEMO_PATIENCE = 8;
const MEMO_RETRY = 32;

/** Keys whose expected field is remembered per message (the first ones of an object). */
const EXPECTED_KEYS = 64;

interface MessageStep {
  readonly fullName: string;
  readonly special: SpecialKind | undefined;
  /** Written by the compiled encoder from JSON.parse of the value (inline fields, "or" types). */
  readonly general: boolean;
  readonly fields: readonly FieldStep[];
  /** Open addressing: field index + 1 by key hash; 0 is empty. */
  readonly table: Int32Array;
  readonly mask: number;
  /** For the k-th key of an object: the field index + 1 the k-th key was last time (0: unknown). */
  readonly expected: Int32Array;
  encoder: EncodeFn | undefined;
}

/** Specials written here; the others (JSONSchemaProps' "or" types) go through the compiled encoder. */
const HANDLED_SPECIALS = new Set<SpecialKind>(['time', 'microtime', 'duration', 'quantity', 'intorstring', 'rawjson', 'rawextension', 'stringlist']);

function keyHash(bytes: Uint8Array, start: number, end: number): number {
  let h = 0;
  for (let i = start; i < end; i++) h = (Math.imul(h, 31) + bytes[i]!) | 0;
  return h;
}

// What the fields written so far at each open message or map occupy in the output, on one stack
// shared by the nesting levels: three entries per field (field index, output start, output end),
// four per map entry (key start, key end, output start, output end).
let stack = new Int32Array(4096);
let sp = 0;
/** The bytes being transcoded, and the cursor: the index of the next byte to read. */
let b: Buffer = Buffer.alloc(0);
let pos = 0;
let w: WireWriter;
/** Where a message's fields are moved to when they were written out of order. */
let scratch = Buffer.allocUnsafe(16 * 1024);

/** 1 for the bytes a string's scan passes over without a look: not a quote, backslash, control or non-ASCII. */
const PLAIN_IN_STRING = new Uint8Array(256).map((_, c) => (c === QUOTE || c === BACKSLASH || c >= 0x80 || c < 0x20 ? 0 : 1));

/** Set by scanString for the string it scanned. */
let stringFlags = 0;
const STRING_ESCAPED = 1;
const STRING_NON_ASCII = 2;

/** The index after the JSON string at `i` (its opening quote); sets stringFlags. */
function scanString(i: number): number {
  const bytes = b;
  const plain = PLAIN_IN_STRING;
  let flags = 0;
  for (i++; ; i++) {
    while (plain[bytes[i]!] === 1) i++;
    const d = bytes[i];
    if (d === QUOTE) break;
    if (d === undefined || d < 0x20) throw GENERAL;
    if (d === BACKSLASH) {
      flags |= STRING_ESCAPED;
      i++;
    } else flags |= STRING_NON_ASCII;
  }
  stringFlags = flags;
  return i + 1;
}

/** The index after the value at `i`: a scan of it (only unknown fields and general values are skipped). */
function skipValue(i: number): number {
  const bytes = b;
  const c = bytes[i];
  if (c === QUOTE) return scanString(i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    for (;;) {
      const d = bytes[i];
      if (d === undefined) throw GENERAL;
      if (d === QUOTE) {
        i = scanString(i);
        continue;
      }
      if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
      else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
        if (--depth === 0) return i + 1;
      }
      i++;
    }
  }
  return literalEnd(i);
}

/** The index after the number or literal at `i`. */
function literalEnd(i: number): number {
  const bytes = b;
  const from = i;
  for (;;) {
    const d = bytes[i];
    if (d === undefined) throw GENERAL;
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET) break;
    i++;
  }
  if (i === from) throw GENERAL;
  return i;
}

/**
 * If the object at `i` is what JSON.stringify writes for its parsed value — objects of objects
 * only, keys ASCII with no escapes but \" and \\, none V8 would order first as an array index
 * (all digits) — the index after it; else -1. fieldsV1 is such an object, and is then copied as
 * it is.
 */
function canonicalFieldsEnd(i: number): number {
  const bytes = b;
  let j = i + 1;
  if (bytes[j] === CLOSE_BRACE) return j + 1;
  for (;;) {
    if (bytes[j] !== QUOTE) return -1;
    const first = bytes[j + 1]!;
    if (first >= 0x30 && first <= 0x39) return -1;
    for (j++; ; j++) {
      const d = bytes[j];
      if (d === QUOTE) break;
      if (d === BACKSLASH) {
        const x = bytes[++j];
        if (x !== QUOTE && x !== BACKSLASH) return -1;
      } else if (d === undefined || d >= 0x80 || d < 0x20) return -1;
    }
    if (bytes[j + 1] !== COLON || bytes[j + 2] !== OPEN_BRACE) return -1;
    j = canonicalFieldsEnd(j + 2);
    if (j < 0) return -1;
    if (bytes[j] === CLOSE_BRACE) return j + 1;
    if (bytes[j] !== COMMA) return -1;
    j++;
  }
}

export class JsonTranscoder {
  private readonly steps = new Map<string, MessageStep>();
  private lastStep: MessageStep | undefined;
  /** Message values copied from a field's memo (see ValueMemo), for tests and profiles. */
  memoHits = 0;

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
    const outerPos = pos;
    b = bytes;
    w = writer;
    pos = 0;
    try {
      if (bytes[0] !== OPEN_BRACE) return false;
      this.object(step);
      return pos === bytes.length;
    } catch {
      // GENERAL, or anything else the general path will answer for (it owns the errors).
      return false;
    } finally {
      b = outerB;
      w = outerW;
      sp = outerSp;
      pos = outerPos;
    }
  }

  /**
   * The step of `fullName`: the last one asked for, else from the map. Kept apart from
   * buildStep, so that the optimizing compiler, which compiles this for every transcode, does not
   * compile the plan building with it (about a tenth of the compile time of a first list).
   */
  private step(fullName: string): MessageStep {
    const last = this.lastStep;
    if (last !== undefined && last.fullName === fullName) return last;
    const s = this.steps.get(fullName) ?? this.buildStep(fullName);
    this.lastStep = s;
    return s;
  }

  private buildStep(fullName: string): MessageStep {
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
    const s: MessageStep = { fullName, special: plan.special, general, fields, table, mask: size - 1, expected: new Int32Array(EXPECTED_KEYS), encoder: undefined };
    this.steps.set(fullName, s);
    return s;
  }

  private sub(f: FieldStep): MessageStep {
    f.sub ??= this.steps.get(f.message!) ?? this.buildStep(f.message!);
    return f.sub;
  }

  /** Writes the fields of the object at pos (an open brace), in field-number order; pos moves past it. */
  private object(m: MessageStep): void {
    const bytes = b;
    const fields = m.fields;
    const expected = m.expected;
    const base = sp;
    let last = -1;
    let ordered = true;
    let k = 0;
    let j = pos + 1;
    if (bytes[j] === CLOSE_BRACE) {
      pos = j + 1;
      return;
    }
    for (; ; k++) {
      if (bytes[j] !== QUOTE) throw GENERAL;
      let f = -1;
      let keyEnd = -1;
      // The key expected at this place: one comparison, which also finds where the key ends.
      const guess = k < EXPECTED_KEYS ? expected[k]! - 1 : -1;
      if (guess >= 0) {
        const key = fields[guess]!.key;
        const n = key.length;
        let q = 0;
        while (q < n && key[q] === bytes[j + 1 + q]) q++;
        if (q === n && bytes[j + 1 + n] === QUOTE) {
          f = guess;
          keyEnd = j + 1 + n;
        }
      }
      if (keyEnd < 0) {
        let h = 0;
        let q = j + 1;
        for (;;) {
          const c = bytes[q];
          if (c === QUOTE || c === BACKSLASH || c === undefined) break;
          h = (Math.imul(h, 31) + c) | 0;
          q++;
        }
        if (bytes[q] === QUOTE) {
          keyEnd = q;
          f = this.lookup(m, h, bytes, j + 1, q);
        } else {
          keyEnd = scanString(j) - 1;
          f = this.lookupEscaped(m, j, keyEnd + 1);
        }
        if (k < EXPECTED_KEYS) expected[k] = f + 1;
      }
      if (bytes[keyEnd + 1] !== COLON) throw GENERAL;
      pos = keyEnd + 2;
      if (f < 0) pos = skipValue(pos);
      else {
        if (f <= last) {
          // JSON.parse keeps a repeated key's last value; the general path sorts that out.
          for (let q = base; q < sp; q += 3) if (stack[q] === f) throw GENERAL;
          ordered = false;
        } else last = f;
        if (sp + 3 > stack.length) growStack();
        const at = sp;
        stack[at] = f;
        stack[at + 1] = w.pos;
        sp += 3;
        // Null: absent, as the compiled encoder has it (but still a key seen).
        if (bytes[pos] === LOWER_N) pos = literalEnd(pos);
        else this.field(fields[f]!);
        stack[at + 2] = w.pos;
      }
      j = pos;
      const c = bytes[j];
      if (c === CLOSE_BRACE) break;
      if (c !== COMMA) throw GENERAL;
      j++;
    }
    pos = j + 1;
    if (!ordered) {
      sortSegments(base, sp, 3, false);
      moveSegments(base, sp, 3, 1);
    }
    sp = base;
  }

  /** The field index of an escaped key, the JSON string b[start, end) (rare: decoded first). */
  private lookupEscaped(m: MessageStep, start: number, end: number): number {
    const key = Buffer.from(JSON.parse(b.toString('utf8', start, end)) as string, 'utf8');
    return this.lookup(m, keyHash(key, 0, key.length), key, 0, key.length);
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

  /** A field's value at pos (not null), tags included. */
  private field(f: FieldStep): void {
    if (f.map) return this.map(f);
    if (!f.repeated) {
      writeTag(f);
      this.value(f);
      return;
    }
    if (b[pos] !== OPEN_BRACKET) throw GENERAL;
    pos++;
    if (b[pos] === CLOSE_BRACKET) {
      pos++;
      return;
    }
    for (;;) {
      // A null element is written differently by each kind of element: leave it to the general path.
      if (b[pos] === LOWER_N) throw GENERAL;
      writeTag(f);
      this.value(f);
      const c = b[pos];
      pos++;
      if (c === CLOSE_BRACKET) return;
      if (c !== COMMA) throw GENERAL;
    }
  }

  /** One value of a field (without its tag), from the JSON value at pos. */
  private value(f: FieldStep): void {
    switch (f.kind) {
      case Kind.String:
        return writeString();
      case Kind.Bool:
        if (b[pos] === LOWER_T) w.byte(1);
        else if (b[pos] === LOWER_F) w.byte(0);
        else throw GENERAL;
        pos = literalEnd(pos);
        return;
      case Kind.Int32: {
        const v = readNumber();
        if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) throw GENERAL;
        return w.varint(v);
      }
      case Kind.Int64: {
        const v = readNumber();
        if (!Number.isInteger(v) || Math.abs(v) > INT64_LIMIT) throw GENERAL;
        return w.varint(v);
      }
      case Kind.Double: {
        const v = readNumber();
        if (!Number.isFinite(v)) throw GENERAL;
        return w.double(v);
      }
      case Kind.Bytes:
        return w.bytes(Buffer.from(asciiString(), 'base64'));
      case Kind.Message: {
        const s = w.fork();
        const vs = pos;
        const memo = f.memo;
        if (memo !== undefined && memo.jsonLength <= b.length - vs && b.compare(memo.json, 0, memo.jsonLength, vs, vs + memo.jsonLength) === 0) {
          memo.misses = 0;
          this.memoHits++;
          pos = vs + memo.jsonLength;
          w.ensure(memo.outLength);
          copyRange(memo.out, 0, memo.outLength, w.buf, w.pos);
          w.pos += memo.outLength;
        } else {
          this.message(this.sub(f));
          if (pos - vs >= MEMO_MIN_JSON && pos - vs <= MEMO_MAX_JSON && b[vs] === OPEN_BRACE) remember(f, vs, s + 1);
        }
        w.join(s);
        return;
      }
    }
  }

  /** The content of message `m` (no tag, no length) from the JSON value at pos. */
  private message(m: MessageStep): void {
    if (m.general) {
      m.encoder ??= this.compiled.encoder(m.fullName);
      const vs = pos;
      pos = skipValue(vs);
      m.encoder(w, JSON.parse(b.toString('utf8', vs, pos)));
      return;
    }
    switch (m.special) {
      case undefined:
        if (b[pos] !== OPEN_BRACE) throw GENERAL;
        this.object(m);
        return;
      case 'time':
      case 'microtime': {
        if (b[pos] !== QUOTE) throw GENERAL;
        const vs = pos;
        pos = scanString(vs);
        const plain = stringFlags === 0 ? parsePlainUtcSeconds(b, vs + 1, pos - 1) : undefined;
        const t = plain !== undefined ? { seconds: plain, nanos: 0 } : parseRfc3339(asciiAt(vs, pos));
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
        const d = parseGoDuration(asciiString());
        if (d === undefined) throw GENERAL;
        w.byte(8);
        w.varintBig(d);
        return;
      }
      case 'quantity':
        w.byte(10);
        if (b[pos] === QUOTE) writeString();
        else {
          const v = readNumber();
          if (!Number.isFinite(v)) throw GENERAL;
          w.string(String(v));
        }
        return;
      case 'intorstring':
        if (b[pos] === QUOTE) {
          w.byte2(8, 1);
          w.byte2(16, 0);
          w.byte(26);
          writeString();
        } else {
          const v = readNumber();
          if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) throw GENERAL;
          w.byte2(8, 0);
          w.byte(16);
          w.varint(v);
          w.byte2(26, 0);
        }
        return;
      case 'rawjson':
      case 'rawextension': {
        w.byte(10);
        // What JSON.stringify writes for the parsed value: the bytes themselves when they are
        // already in that form (objects of objects with plain keys, as fieldsV1 is).
        const vs = pos;
        const end = b[vs] === OPEN_BRACE ? canonicalFieldsEnd(vs) : -1;
        if (end >= 0) {
          pos = end;
          w.uvarint32(end - vs);
          w.rawRange(b, vs, end);
        } else {
          pos = skipValue(vs);
          w.bytes(Buffer.from(JSON.stringify(JSON.parse(b.toString('utf8', vs, pos)))));
        }
        return;
      }
      case 'stringlist': {
        if (b[pos] !== OPEN_BRACKET) throw GENERAL;
        pos++;
        if (b[pos] === CLOSE_BRACKET) {
          pos++;
          return;
        }
        for (;;) {
          w.byte(10);
          writeString();
          const c = b[pos];
          pos++;
          if (c === CLOSE_BRACKET) return;
          if (c !== COMMA) throw GENERAL;
        }
      }
      default:
        throw GENERAL;
    }
  }

  /** A map<string, V>: one entry message per key, in Go's key order (bytewise). */
  private map(f: FieldStep): void {
    if (b[pos] !== OPEN_BRACE) throw GENERAL;
    const base = sp;
    let ordered = true;
    pos++;
    if (b[pos] === CLOSE_BRACE) {
      pos++;
      return;
    }
    for (;;) {
      if (b[pos] !== QUOTE) throw GENERAL;
      const keyStart = pos + 1;
      let k = keyStart;
      for (;;) {
        const c = b[k];
        if (c === QUOTE) break;
        // Escaped or non-ASCII keys: their order needs decoding; rare, left to the general path.
        if (c === BACKSLASH || c === undefined || c >= 0x80) throw GENERAL;
        k++;
      }
      if (b[k + 1] !== COLON) throw GENERAL;
      if (sp > base) {
        const c = compareRanges(stack[sp - 4]!, stack[sp - 3]!, keyStart, k);
        if (c === 0) throw GENERAL; // a repeated key: JSON.parse keeps the last
        if (c > 0) ordered = false;
      }
      if (sp + 4 > stack.length) growStack();
      const at = sp;
      stack[at] = keyStart;
      stack[at + 1] = k;
      stack[at + 2] = w.pos;
      sp += 4;
      pos = k + 2;
      writeTag(f);
      const s = w.fork();
      w.byte(10);
      w.uvarint32(k - keyStart);
      w.rawRange(b, keyStart, k);
      const isNull = b[pos] === LOWER_N;
      // As the compiled encoder: a string value always (empty for null), bytes only when not null.
      if (isNull && f.kind !== Kind.Message) pos = literalEnd(pos);
      if (f.kind === Kind.String) {
        w.byte(18);
        if (isNull) w.byte(0);
        else writeString();
      } else if (f.kind === Kind.Bytes) {
        if (!isNull) {
          w.byte(18);
          this.value(f);
        }
      } else if (f.kind === Kind.Message) {
        if (isNull) throw GENERAL;
        w.byte(18);
        this.value(f);
      } else throw GENERAL;
      w.join(s);
      stack[at + 3] = w.pos;
      const c = b[pos];
      pos++;
      if (c === CLOSE_BRACE) break;
      if (c !== COMMA) throw GENERAL;
    }
    if (!ordered) {
      sortSegments(base, sp, 4, true);
      moveSegments(base, sp, 4, 2);
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
  return { key, hash: keyHash(key, 0, key.length), tag0: tag[0]!, tag1: tag.length === 2 ? tag[1]! : -1, kind, repeated: f.repeated, map: f.map, message: f.message, sub: undefined, memo: undefined };
}

/** Keeps the value b[vs, pos) and its content w.buf[outStart, w.pos) as f's memo, unless f's values keep differing. */
function remember(f: FieldStep, vs: number, outStart: number): void {
  let memo = f.memo;
  if (memo === undefined) memo = f.memo = { json: Buffer.allocUnsafeSlow(256), jsonLength: 0, out: Buffer.allocUnsafeSlow(256), outLength: 0, misses: 0 };
  else if (++memo.misses > MEMO_PATIENCE && memo.misses % MEMO_RETRY !== 0) return;
  const jsonLength = pos - vs;
  const outLength = w.pos - outStart;
  if (memo.json.length < jsonLength) memo.json = Buffer.allocUnsafeSlow(Math.max(jsonLength, 2 * memo.json.length));
  if (memo.out.length < outLength) memo.out = Buffer.allocUnsafeSlow(Math.max(outLength, 2 * memo.out.length));
  copyRange(b, vs, pos, memo.json, 0);
  copyRange(w.buf, outStart, w.pos, memo.out, 0);
  memo.jsonLength = jsonLength;
  memo.outLength = outLength;
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

const held = new Int32Array(4);

/**
 * Insertion sort of the segments in stack[base, top), `width` entries each (fields and map
 * entries are few): (field, start, end) triples by field index, or with `byKey`, (key start, key
 * end, start, end) map entries by key bytes. Equal keys (a repeated key) need the general path.
 */
function sortSegments(base: number, top: number, width: number, byKey: boolean): void {
  const st = stack;
  for (let x = base + width; x < top; x += width) {
    for (let q = 0; q < width; q++) held[q] = st[x + q]!;
    let y = x - width;
    for (; y >= base; y -= width) {
      const c = byKey ? compareRanges(st[y]!, st[y + 1]!, held[0]!, held[1]!) : st[y]! - held[0]!;
      if (c === 0) throw GENERAL;
      if (c < 0) break;
      for (let q = 0; q < width; q++) st[y + width + q] = st[y + q]!;
    }
    for (let q = 0; q < width; q++) st[y + width + q] = held[q]!;
  }
}

/**
 * Rewrites the output written for the segments in stack[base, top) (`width` entries each, the
 * output start and end at `at` and `at` + 1), now sorted, in their sorted order. The segments
 * cover the output from the first one written to w.pos without gaps. Leading and trailing
 * segments already in their place stay (a pod's metadata ends with its managedFields, the
 * largest field and the last in number order).
 */
function moveSegments(base: number, top: number, width: number, at: number): void {
  const st = stack;
  let p = Number.MAX_SAFE_INTEGER;
  for (let x = base; x < top; x += width) p = Math.min(p, st[x + at]!);
  let lo = base;
  while (lo < top && st[lo + at] === p) {
    p = st[lo + at + 1]!;
    lo += width;
  }
  let hi = top;
  let e = w.pos;
  while (hi > lo && st[hi - width + at + 1] === e) {
    e = st[hi - width + at]!;
    hi -= width;
  }
  const n = e - p;
  if (n <= 0) return;
  if (scratch.length < n) scratch = Buffer.allocUnsafe(Math.max(n, scratch.length * 2));
  const buf = w.buf;
  const from = p;
  copyRange(buf, from, e, scratch, 0);
  for (let x = lo; x < hi; x += width) {
    const s = st[x + at]! - from;
    const end = st[x + at + 1]! - from;
    if (end - s < 64) for (let q = s; q < end; q++) buf[p++] = scratch[q]!;
    else {
      copyRange(scratch, s, end, buf, p);
      p += end - s;
    }
  }
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

/**
 * A length-prefixed string from the JSON string at pos. Plain ASCII is copied while it is
 * scanned, behind a one-byte length moved right when the string is 128 bytes or longer.
 */
function writeString(): void {
  const bytes = b;
  if (bytes[pos] !== QUOTE) throw GENERAL;
  const start = pos + 1;
  // Output bound: the string's bytes and a length of up to 5 bytes.
  w.ensure(bytes.length - start + 5);
  const out = w.buf;
  const head = w.pos;
  let p = head + 1;
  let i = start;
  const plain = PLAIN_IN_STRING;
  for (;;) {
    const c = bytes[i]!;
    if (plain[c] !== 1) break;
    out[p++] = c;
    i++;
  }
  if (bytes[i] === QUOTE) {
    const len = i - start;
    pos = i + 1;
    if (len < 128) {
      out[head] = len;
      w.pos = p;
      return;
    }
    w.pos = head;
    w.uvarint32(len);
    w.rawRange(bytes, start, i);
    return;
  }
  // Escapes or non-ASCII bytes: scan it all, then write it the general path's way.
  const end = scanString(pos);
  pos = end;
  w.pos = head;
  if (stringFlags & STRING_ESCAPED) {
    w.string(JSON.parse(bytes.toString('utf8', start - 1, end)) as string);
    return;
  }
  // Invalid UTF-8 decodes to U+FFFD in the general path: decode it the same way.
  if (!isUtf8(bytes.subarray(start, end - 1))) {
    w.string(bytes.toString('utf8', start, end - 1));
    return;
  }
  w.uvarint32(end - 1 - start);
  w.rawRange(bytes, start, end - 1);
}

/** The text of the JSON string at pos, which has no escapes or non-ASCII bytes (times, durations, base64). */
function asciiString(): string {
  if (b[pos] !== QUOTE) throw GENERAL;
  const vs = pos;
  pos = scanString(vs);
  return asciiAt(vs, pos);
}

/** The text of the JSON string b[vs, ve) just scanned, which must have no escapes or non-ASCII bytes. */
function asciiAt(vs: number, ve: number): string {
  if (stringFlags !== 0) throw GENERAL;
  return b.toString('latin1', vs + 1, ve - 1);
}

/** The value of the JSON number at pos; anything else needs the general path. */
function readNumber(): number {
  const vs = pos;
  const ve = literalEnd(vs);
  pos = ve;
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
