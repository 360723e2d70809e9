// internal/codec/protobuf/stored-json owns reading an object's compact JSON bytes for the protobuf
// encoder: the result is JSON.parse's, except that each metadata.managedFields[i].fieldsV1 is
// left as the bytes of its JSON text. Protobuf carries fieldsV1 as raw JSON bytes, so parsing it
// into objects only for the encoder to stringify it again was wasted: in the bench's 2.2 KB pod it
// is 870 bytes and most of the keys (a first protobuf list of 10,000 of them: 760 vs 980 ms CPU).
// The bytes are taken as they are only where they are what JSON.stringify of the parsed value
// writes (compact, ASCII, no escapes but \" and \\, no integer-like keys, which V8 reorders);
// anything else is parsed as a whole, as before. Imports: storedobject (the compact-value skip).

import { skipCompactValue } from '../../storedobject/stored-object.js';

// Byte values of JSON's structural characters.
const [QUOTE, BACKSLASH, COLON, COMMA] = [0x22, 0x5c, 0x3a, 0x2c];
const [OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET] = [0x7b, 0x7d, 0x5b, 0x5d];

const METADATA = Buffer.from('"metadata"');
const MANAGED_FIELDS = Buffer.from('"managedFields"');
const FIELDS_V1 = Buffer.from('"fieldsV1"');

/** A fieldsV1 value found in the bytes: which managedFields entry, and its span. */
interface Span {
  index: number;
  start: number;
  end: number;
}

/** Thrown inside the scan when the bytes are not in the expected compact form. */
const notCompact = new Error('not compact JSON');

/**
 * The parsed object with managedFields' fieldsV1 values as the bytes of their JSON text (a view
 * of `bytes`: encode before `bytes` may change). Everything else is exactly JSON.parse's result.
 */
export function parseForProtobuf(bytes: Buffer): Record<string, unknown> {
  let spans: Span[] | undefined;
  try {
    spans = fieldsV1Spans(bytes);
  } catch {
    // Not the compact form (or nested beyond the stack): JSON.parse decides, as it did before.
  }
  if (!spans || spans.length === 0) return JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  let text = '';
  let at = 0;
  for (const s of spans) {
    // A placeholder the parse leaves in place of the value, checked below.
    text += `${bytes.toString('utf8', at, s.start)}0`;
    at = s.end;
  }
  text += bytes.toString('utf8', at);
  const obj = JSON.parse(text) as Record<string, unknown>;
  const entries = (obj.metadata as { managedFields?: unknown } | undefined)?.managedFields;
  for (const s of spans) {
    const entry = Array.isArray(entries) ? (entries[s.index] as Record<string, unknown> | undefined) : undefined;
    // The scan and the parse must agree on where each value was; if not, parse it all.
    if (!entry || entry.fieldsV1 !== 0) return JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
    entry.fieldsV1 = bytes.subarray(s.start, s.end);
  }
  return obj;
}

/** The spans of metadata.managedFields[*].fieldsV1, the last of any repeated key as JSON.parse keeps. */
function fieldsV1Spans(b: Buffer): Span[] {
  let spans: Span[] = [];
  let i = expect(b, 0, OPEN_BRACE);
  if (b[i] === CLOSE_BRACE) return spans;
  for (;;) {
    const key = i;
    i = expect(b, skipString(b, i), COLON);
    if (keyIs(b, key, i - 1, METADATA) && b[i] === OPEN_BRACE) {
      spans = [];
      i = scanMetadata(b, i, spans);
    } else i = skipValue(b, i);
    if (b[i] === CLOSE_BRACE) return spans;
    i = expect(b, i, COMMA);
  }
}

function scanMetadata(b: Buffer, i: number, spans: Span[]): number {
  i = expect(b, i, OPEN_BRACE);
  if (b[i] === CLOSE_BRACE) return i + 1;
  for (;;) {
    const key = i;
    i = expect(b, skipString(b, i), COLON);
    if (keyIs(b, key, i - 1, MANAGED_FIELDS) && b[i] === OPEN_BRACKET) {
      spans.length = 0;
      i = scanManagedFields(b, i, spans);
    } else i = skipValue(b, i);
    if (b[i] === CLOSE_BRACE) return i + 1;
    i = expect(b, i, COMMA);
  }
}

function scanManagedFields(b: Buffer, i: number, spans: Span[]): number {
  i = expect(b, i, OPEN_BRACKET);
  if (b[i] === CLOSE_BRACKET) return i + 1;
  for (let index = 0; ; index++) {
    if (b[i] === OPEN_BRACE) {
      i++;
      let found: Span | undefined;
      if (b[i] !== CLOSE_BRACE) {
        for (;;) {
          const key = i;
          i = expect(b, skipString(b, i), COLON);
          const isFields = keyIs(b, key, i - 1, FIELDS_V1);
          if (isFields && b[i] === OPEN_BRACE) {
            const end = skipCanonicalFields(b, i);
            found = { index, start: i, end };
            i = end;
          } else {
            // A later non-object fieldsV1 replaces an earlier one in JSON.parse's result.
            if (isFields) found = undefined;
            i = skipValue(b, i);
          }
          if (b[i] === CLOSE_BRACE) break;
          i = expect(b, i, COMMA);
        }
      }
      i++;
      if (found) spans.push(found);
    } else i = skipValue(b, i);
    if (b[i] === CLOSE_BRACKET) return i + 1;
    i = expect(b, i, COMMA);
  }
}

/** Whether the string from `start` to `end` (quotes included) is `key`. */
function keyIs(b: Buffer, start: number, end: number, key: Buffer): boolean {
  return end - start === key.length && b.compare(key, 0, key.length, start, end) === 0;
}

function expect(b: Buffer, i: number, c: number): number {
  if (b[i] !== c) throw notCompact;
  return i + 1;
}

/** Past the string starting at `i` (its opening quote). */
function skipString(b: Buffer, i: number): number {
  if (b[i] !== QUOTE) throw notCompact;
  return skipValue(b, i);
}

/** Past any compact JSON value starting at `i`. */
function skipValue(b: Buffer, i: number): number {
  const end = skipCompactValue(b, i);
  if (end < 0) throw notCompact;
  return end;
}

/**
 * Past a fieldsV1 object at `i`, checking it is what JSON.stringify would write for it: objects
 * of objects only, no whitespace, ASCII keys whose only escapes are \" and \\, and no key that
 * V8 would order as an array index (all digits).
 */
function skipCanonicalFields(b: Buffer, i: number): number {
  i = expect(b, i, OPEN_BRACE);
  if (b[i] === CLOSE_BRACE) return i + 1;
  for (;;) {
    if (b[i] !== QUOTE) throw notCompact;
    const first = b[i + 1]!;
    let j = i + 1;
    for (;;) {
      const c = b[j];
      if (c === undefined || c >= 0x80 || c < 0x20) throw notCompact;
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        const e = b[j + 1];
        if (e !== QUOTE && e !== BACKSLASH) throw notCompact;
        j += 2;
        continue;
      }
      j++;
    }
    if (first >= 0x30 && first <= 0x39) throw notCompact;
    i = expect(b, j + 1, COLON);
    i = skipCanonicalFields(b, i);
    if (b[i] === CLOSE_BRACE) return i + 1;
    i = expect(b, i, COMMA);
  }
}
