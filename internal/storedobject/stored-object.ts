// internal/storedobject owns the byte form of API objects in the store and the watch cache.
// Stored bytes are JSON written in a fixed shape — `{"kind":…,"apiVersion":…,"metadata":{…},…}`
// with no resourceVersion, because the revision is only known when the command is applied.
// Serving bytes are the stored bytes with `"resourceVersion":"<rev>"` spliced in as the first
// metadata member: a memcpy, not a parse and re-encode. The splice point is the first
// `"metadata":{` in the bytes, which is the top-level one because kind and apiVersion come
// first and JSON strings cannot contain an unescaped quote.
// Imports: byte-pattern, patch/json-value (member copies).

import { setMember, withoutMember } from '../patch/json-value.js';
import { BytePattern } from './byte-pattern.js';

export type JsonObject = Record<string, unknown>;

/** Found from its `m` (see byte-pattern): searched in every object the cache loads at start. */
const METADATA_OPEN = new BytePattern('"metadata":{');

/** Encodes an object for the store: kind, apiVersion, metadata first; resourceVersion dropped. */
export function encodeStored(obj: JsonObject): Buffer {
  return Buffer.from(storedText(obj) ?? storedTextGeneral(obj), 'utf8');
}

function storedTextGeneral(obj: JsonObject): string {
  const metadata = (obj.metadata as JsonObject | undefined) ?? {};
  // Built member by member: a rest pattern, or a spread copy and `delete`, leave V8 a slower
  // object to serialize (a deleted member turns the copy into a dictionary), and the metadata
  // is copied only when it has a resourceVersion to leave out (an update's has).
  const meta = Object.prototype.hasOwnProperty.call(metadata, 'resourceVersion') ? withoutMember(metadata, 'resourceVersion') : metadata;
  const out: JsonObject = { kind: obj.kind, apiVersion: obj.apiVersion, metadata: meta };
  for (const k of Object.keys(obj)) if (k !== 'kind' && k !== 'apiVersion' && k !== 'metadata') setMember(out, k, obj[k]);
  return JSON.stringify(out);
}

/** Values whose JSON text is known (rememberJsonText), by identity. */
const jsonTexts = new WeakMap<object, string>();

/**
 * Tells encodeStored that `value` serializes to `text` (what JSON.stringify writes for it), so
 * that a managedFields entry holding it as its fieldsV1 is written from the text. The field
 * manager remembers the texts of the fieldsV1 objects it decodes: a write that keeps an
 * entry's fields keeps that very object. The value must not be changed afterwards (decoded
 * fieldsV1 objects never are).
 */
export function rememberJsonText(value: object, text: string): void {
  jsonTexts.set(value, text);
}

const isPlainObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/** A key JSON.stringify might not write in insertion order (integer-like keys come first). */
const mayBeIndex = (key: string): boolean => {
  const c = key.charCodeAt(0);
  return c >= 0x30 && c <= 0x39;
};

/**
 * storedTextGeneral's text, written member by member so that a managedFields entry's fieldsV1
 * whose text is known is not serialized again; undefined (the caller serializes the whole
 * object) when no entry has such a fieldsV1, or for shapes written by hand less surely
 * (integer-like keys, metadata or entries that are not plain objects).
 */
function storedText(obj: JsonObject): string | undefined {
  const metadata = obj.metadata;
  if (!isPlainObject(metadata)) return undefined;
  const entries = metadata.managedFields;
  if (!Array.isArray(entries)) return undefined;
  let known = false;
  for (const e of entries) {
    if (!isPlainObject(e)) return undefined;
    const f = e.fieldsV1;
    if (typeof f === 'object' && f !== null && jsonTexts.has(f)) known = true;
  }
  if (!known) return undefined;
  let out = '{';
  let first = true;
  const member = (key: string, text: string | undefined): void => {
    if (text === undefined) return;
    out += `${first ? '' : ','}${JSON.stringify(key)}:${text}`;
    first = false;
  };
  for (const key of Object.keys(obj)) if (mayBeIndex(key)) return undefined;
  member('kind', JSON.stringify(obj.kind));
  member('apiVersion', JSON.stringify(obj.apiVersion));
  let meta = '{';
  let firstMeta = true;
  for (const key of Object.keys(metadata)) {
    if (mayBeIndex(key)) return undefined;
    if (key === 'resourceVersion') continue;
    let text: string | undefined;
    if (key === 'managedFields') {
      text = entriesText(entries);
      if (text === undefined) return undefined;
    } else text = JSON.stringify(metadata[key]);
    if (text === undefined) continue;
    meta += `${firstMeta ? '' : ','}${JSON.stringify(key)}:${text}`;
    firstMeta = false;
  }
  member('metadata', `${meta}}`);
  for (const key of Object.keys(obj)) {
    if (key === 'kind' || key === 'apiVersion' || key === 'metadata') continue;
    member(key, JSON.stringify(obj[key]));
  }
  return `${out}}`;
}

/** JSON.stringify(entries) with known fieldsV1 texts spliced in; entries are plain objects. */
function entriesText(entries: unknown[]): string | undefined {
  let out = '[';
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as JsonObject;
    let text = '{';
    let first = true;
    for (const key of Object.keys(e)) {
      if (mayBeIndex(key)) return undefined;
      const v = e[key];
      const known = key === 'fieldsV1' && typeof v === 'object' && v !== null ? jsonTexts.get(v) : undefined;
      const value = known ?? JSON.stringify(v);
      if (value === undefined) continue;
      text += `${first ? '' : ','}${JSON.stringify(key)}:${value}`;
      first = false;
    }
    out += `${i > 0 ? ',' : ''}${text}}`;
  }
  return `${out}]`;
}

/**
 * Splices the resource version into stored bytes. Throws on bytes not written by encodeStored.
 * `alloc` gives the result's memory (the watch cache packs what it loads at start).
 */
export function withResourceVersion(stored: Uint8Array, revision: number, alloc: (n: number) => Buffer = Buffer.allocUnsafeSlow): Buffer {
  const buf = Buffer.isBuffer(stored) ? stored : Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  const at = METADATA_OPEN.indexIn(buf);
  if (at < 0) throw new Error('stored object has no metadata');
  const cut = at + METADATA_OPEN.length;
  const empty = buf[cut] === 0x7d; // '}'
  const insert = `"resourceVersion":"${revision}"${empty ? '' : ','}`;
  // By default an exact-size allocation of its own: the cache keeps these for long, and a slice
  // of Node's shared 8 KiB pool would pin the whole pool slab (and whatever garbage shares it).
  const out = alloc(buf.length + insert.length);
  // One copy of the whole value, shifted past the insert, then its head (up to the metadata's
  // brace, a few dozen bytes) moved back in place: no views of the source made per copy, as
  // Buffer.copy of a part makes (the cache's load does this for every stored object).
  out.set(buf, insert.length);
  out.copyWithin(0, insert.length, insert.length + cut);
  out.write(insert, cut, 'latin1');
  return out;
}

/**
 * Replaces the resource version in serving bytes (made by withResourceVersion), as a DELETED
 * event needs: the object's last state, versioned at the delete's revision.
 */
export function replaceResourceVersion(serving: Buffer, revision: number): Buffer {
  const at = METADATA_OPEN.indexIn(serving);
  const start = at + METADATA_OPEN.length;
  const head = '"resourceVersion":"';
  if (at < 0 || serving.toString('utf8', start, start + head.length) !== head) throw new Error('serving bytes carry no resourceVersion');
  const end = serving.indexOf(0x22, start + head.length); // closing quote
  const insert = String(revision);
  const out = Buffer.allocUnsafeSlow(start + head.length + insert.length + (serving.length - end));
  serving.copy(out, 0, 0, start + head.length);
  out.write(insert, start + head.length, 'latin1');
  serving.copy(out, start + head.length + insert.length, end);
  return out;
}

/**
 * The named members of the top-level metadata of stored or serving bytes, each parsed on its
 * own; the others (managedFields above all, often half an object's bytes) are skipped unparsed.
 * What needs a few metadata members of every stored object (the garbage collector's graph)
 * pays a scan instead of a parse, and stops once every named member is read (JSON.stringify
 * writes no member twice): what follows the last of them, often managedFields, is not even
 * skipped. Undefined when the bytes are not in the compact shape JSON.stringify writes (the
 * caller then parses the whole object), as far as they are read.
 */
export function metadataMembers(bytes: Buffer, names: readonly string[]): Record<string, unknown> | undefined {
  const at = METADATA_OPEN.indexIn(bytes);
  if (at < 0) return undefined;
  const out: Record<string, unknown> = {};
  let i = at + METADATA_OPEN.length;
  if (bytes[i] === 0x7d || names.length === 0) return out; // '{}'
  let found = 0;
  for (;;) {
    const valueEnd = memberEnd(bytes, i);
    if (valueEnd < 0) return undefined;
    const keyEnd = lastKeyEnd;
    // JSON.stringify escapes no letter, so a wanted (plain) name appears as itself; most
    // members differ in length from every wanted name and cost no string.
    const length = keyEnd - i - 2;
    const name = names.some((w) => w.length === length) ? bytes.toString('utf8', i + 1, keyEnd - 1) : '';
    if (name !== '' && names.includes(name)) {
      try {
        out[name] = JSON.parse(bytes.toString('utf8', keyEnd + 1, valueEnd));
        if (++found === names.length) return out;
      } catch {
        return undefined;
      }
    }
    if (bytes[valueEnd] === 0x7d) return out; // '}'
    if (bytes[valueEnd] !== 0x2c) return undefined; // ','
    i = valueEnd + 1;
  }
}

/** Where the top-level metadata lies in compact JSON bytes, and its managedFields member if any. */
interface MetadataLayout {
  /** The metadata object's `{` … just after its `}`. */
  start: number;
  end: number;
  /** The managedFields member with one comma beside it (after it, or before it when last). */
  managedFields?: [from: number, to: number];
}

/**
 * Finds the top-level metadata by walking the top-level members from the start, so a nested
 * `metadata` (a template's) is never taken for it, then walks the metadata's own members (one
 * pass over its bytes). Undefined when the bytes are not in the compact shape JSON.stringify
 * writes, as far as they are read, or have no metadata object.
 */
function metadataLayout(bytes: Buffer): MetadataLayout | undefined {
  if (bytes[0] !== 0x7b) return undefined; // '{'
  let i = 1;
  for (;;) {
    if (bytes[i] !== 0x22) return undefined;
    const keyEnd = skipCompactValue(bytes, i);
    if (keyEnd < 0 || bytes[keyEnd] !== 0x3a) return undefined; // ':'
    if (keyEnd - i === 10 && bytes.toString('latin1', i, keyEnd) === '"metadata"') return bytes[keyEnd + 1] === 0x7b ? metadataMembersLayout(bytes, keyEnd + 1) : undefined;
    const valueEnd = skipCompactValue(bytes, keyEnd + 1);
    if (valueEnd < 0 || bytes[valueEnd] !== 0x2c) return undefined; // ',': no more members
    i = valueEnd + 1;
  }
}

function metadataMembersLayout(bytes: Buffer, start: number): MetadataLayout | undefined {
  if (bytes[start + 1] === 0x7d) return { start, end: start + 2 }; // '{}'
  let managedFields: [number, number] | undefined;
  let i = start + 1;
  for (;;) {
    const valueEnd = memberEnd(bytes, i);
    if (valueEnd < 0) return undefined;
    const last = bytes[valueEnd] === 0x7d; // '}'
    if (lastKeyEnd - i === 15 && bytes.toString('latin1', i, lastKeyEnd) === '"managedFields"') {
      managedFields = !last ? [i, valueEnd + 1] : i > start + 1 ? [i - 1, valueEnd] : [i, valueEnd];
    }
    if (last) return managedFields ? { start, end: valueEnd + 1, managedFields } : { start, end: valueEnd + 1 };
    if (bytes[valueEnd] !== 0x2c) return undefined;
    i = valueEnd + 1;
  }
}

/**
 * The top-level metadata of stored or serving bytes as the bytes they hold (a view, not a
 * copy): the compact JSON JSON.stringify wrote, which is what JSON.stringify of the parsed
 * metadata gives again. Undefined when it cannot be found (see metadataLayout).
 */
export function metadataBytes(bytes: Buffer): Buffer | undefined {
  const at = metadataLayout(bytes);
  return at && bytes.subarray(at.start, at.end);
}

/**
 * An object's metadata bytes (as metadataBytes) and, for readers that never look at
 * managedFields and would otherwise parse it (often half an object's bytes), the object's bytes
 * without that member (a copy; the bytes themselves when it has none). Undefined when the
 * metadata cannot be found.
 */
export function metadataAndRest(bytes: Buffer): { metadata: Buffer; withoutManagedFields: Buffer } | undefined {
  const at = metadataLayout(bytes);
  if (!at) return undefined;
  const mf = at.managedFields;
  return { metadata: bytes.subarray(at.start, at.end), withoutManagedFields: mf ? Buffer.concat([bytes.subarray(0, mf[0]), bytes.subarray(mf[1])]) : bytes };
}

/**
 * JSON.parse of stored or serving bytes, except that no managedFields entry's `fieldsV1` is
 * parsed: `fieldsV1` receives each one's text and returns the value the entry holds (the field
 * manager's one shared value per text, whose set it decodes once). The fieldsV1 values are
 * often half an object's bytes and most of its parse, and a write that decodes the stored
 * object only reads them as sets. Bytes not in the compact shape JSON.stringify writes (as far
 * as the managed fields go) are parsed whole, their fieldsV1 values as JSON.parse makes them.
 */
export function parseStored(bytes: Buffer, fieldsV1: (text: string) => unknown): JsonObject {
  return parseSkippingFieldsV1(bytes, fieldsV1) ?? (JSON.parse(bytes.toString('utf8')) as JsonObject);
}

const MANAGED_FIELDS_OPEN = new BytePattern('"managedFields":[');
const FIELDS_V1_OPEN = new BytePattern('"fieldsV1":{');

/** Per source of values: fieldsV1 texts met lately (their bytes) and its values for them, latest first. */
const recentFieldsV1 = new WeakMap<(text: string) => unknown, Array<{ bytes: Buffer; value: unknown }>>();
const RECENT_FIELDS_V1 = 8;

/**
 * parseStored's fast path. The managed fields are found by native searches, not by walking the
 * bytes: each entry's fieldsV1 value is compared with the texts met lately (one memcmp; equal
 * bytes are the same complete object, so its end is known) and only walked when new. The
 * values are replaced by `0` in the text JSON.parse reads and filled in afterwards. Whatever
 * the searches found is checked against the parse (the placeholders must be exactly the
 * entries' fieldsV1 members of the top-level metadata's managedFields); undefined when not,
 * or when the bytes are not compact JSON, and the caller parses them whole.
 */
function parseSkippingFieldsV1(bytes: Buffer, fieldsV1: (text: string) => unknown): JsonObject | undefined {
  const open = MANAGED_FIELDS_OPEN.indexIn(bytes);
  if (open < 0) return undefined;
  // [value start, value end, the value] of every entry's fieldsV1, in byte order.
  const found: Array<[number, number, unknown]> = [];
  let recent = recentFieldsV1.get(fieldsV1);
  if (recent === undefined) recentFieldsV1.set(fieldsV1, (recent = []));
  let i = open + MANAGED_FIELDS_OPEN.length;
  if (bytes[i] === 0x5d) return undefined; // ']': nothing to skip
  for (;;) {
    if (bytes[i] !== 0x7b) return undefined; // '{': entries are objects
    const key = FIELDS_V1_OPEN.indexIn(bytes, i);
    if (key < 0) return undefined;
    const start = key + FIELDS_V1_OPEN.length - 1;
    const [end, value] = fieldsV1At(bytes, start, fieldsV1, recent);
    if (end < 0) return undefined;
    found.push([start, end, value]);
    // The entry's members after fieldsV1 (a subresource), then the next entry or the end.
    let j = end;
    while (bytes[j] === 0x2c) {
      j = memberEnd(bytes, j + 1);
      if (j < 0) return undefined;
    }
    if (bytes[j] !== 0x7d) return undefined; // '}'
    if (bytes[j + 1] === 0x5d) break; // ']'
    if (bytes[j + 1] !== 0x2c) return undefined;
    i = j + 2;
  }
  let text = '';
  let at = 0;
  for (const [start, end] of found) {
    text += `${bytes.toString('utf8', at, start)}0`;
    at = end;
  }
  text += bytes.toString('utf8', at);
  let obj: JsonObject;
  try {
    obj = JSON.parse(text) as JsonObject;
  } catch {
    return undefined;
  }
  const meta = obj.metadata;
  const entries = typeof meta === 'object' && meta !== null ? (meta as JsonObject).managedFields : undefined;
  if (!Array.isArray(entries) || entries.length !== found.length) return undefined;
  for (let k = 0; k < found.length; k++) {
    const e = entries[k] as JsonObject;
    if (e.fieldsV1 !== 0) return undefined;
    e.fieldsV1 = found[k]![2];
  }
  return obj;
}

/**
 * The end of the fieldsV1 object at `start` and its value, or [-1] when it does not end.
 * `recent` is the source's list of texts met lately, kept up to date here.
 */
function fieldsV1At(bytes: Buffer, start: number, fieldsV1: (text: string) => unknown, recent: Array<{ bytes: Buffer; value: unknown }>): [number, unknown] {
  for (let r = 0; r < recent.length; r++) {
    const known = recent[r]!;
    const end = start + known.bytes.length;
    if (end <= bytes.length && bytes.compare(known.bytes, 0, known.bytes.length, start, end) === 0) {
      if (r > 0) {
        recent.splice(r, 1);
        recent.unshift(known);
      }
      return [end, known.value];
    }
  }
  const end = skipCompactValue(bytes, start);
  if (end < 0) return [-1, undefined];
  const value = fieldsV1(bytes.toString('utf8', start, end));
  // A copy: the bytes may be a slab's, reused once their entry is gone.
  recent.unshift({ bytes: Buffer.from(bytes.subarray(start, end)), value });
  if (recent.length > RECENT_FIELDS_V1) recent.pop();
  return [end, value];
}

/** Where the key of the member memberEnd read last ends (just after its closing quote). */
let lastKeyEnd = 0;

/**
 * The index just after the value of the compact JSON member (`"key":value`) starting at `i`, or
 * -1 when there is none; the key's end is left in lastKeyEnd (no pair allocated per member).
 */
function memberEnd(bytes: Buffer, i: number): number {
  if (bytes[i] !== 0x22) return -1;
  const keyEnd = skipCompactValue(bytes, i);
  if (keyEnd < 0 || bytes[keyEnd] !== 0x3a) return -1; // ':'
  lastKeyEnd = keyEnd;
  return skipCompactValue(bytes, keyEnd + 1);
}

/**
 * The index just after the compact JSON value starting at `i`, or -1 when it does not end:
 * strings to their closing quote (a backslash escapes the byte after it), objects and arrays
 * to their closing bracket (strings inside skipped), scalars to the next delimiter.
 */
function skipCompactValue(bytes: Buffer, i: number): number {
  const n = bytes.length;
  const first = bytes[i];
  if (first === 0x22) {
    for (i++; i < n && bytes[i] !== 0x22; i++) if (bytes[i] === 0x5c) i++;
    return i < n ? i + 1 : -1;
  }
  if (first === 0x7b || first === 0x5b) {
    let depth = 0;
    for (; i < n; i++) {
      const c = bytes[i]!;
      if (c === 0x22) {
        for (i++; i < n && bytes[i] !== 0x22; i++) if (bytes[i] === 0x5c) i++;
      } else if (c === 0x7b || c === 0x5b) depth++;
      else if ((c === 0x7d || c === 0x5d) && --depth === 0) return i + 1;
    }
    return -1;
  }
  const from = i;
  while (i < n && bytes[i] !== 0x2c && bytes[i] !== 0x7d && bytes[i] !== 0x5d) i++;
  return i < n && i > from ? i : -1;
}

/** Parses stored bytes into an object carrying its resource version. */
export function decodeStored(stored: Uint8Array, revision: number): JsonObject {
  const obj = JSON.parse(Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength).toString('utf8')) as JsonObject;
  const meta = (obj.metadata ?? {}) as JsonObject;
  obj.metadata = { resourceVersion: String(revision), ...meta };
  return obj;
}

/**
 * kind and apiVersion of serving (or stored) bytes, read from their fixed head
 * `{"kind":…,"apiVersion":…,` without parsing the rest of the object.
 */
export function typeMetaOf(bytes: Buffer): { kind: string; apiVersion: string } {
  const at = METADATA_OPEN.indexIn(bytes);
  if (at === 1) return { kind: '', apiVersion: '' }; // `{"metadata":{`: neither was stored
  if (at < 1 || bytes[at - 1] !== 0x2c) throw new Error('stored object has no metadata');
  const head = JSON.parse(`${bytes.toString('utf8', 0, at - 1)}}`) as { kind?: unknown; apiVersion?: unknown };
  return { kind: typeof head.kind === 'string' ? head.kind : '', apiVersion: typeof head.apiVersion === 'string' ? head.apiVersion : '' };
}
