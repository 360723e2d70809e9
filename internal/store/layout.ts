// internal/store/layout owns how the revision store lays out its level database:
//   h/<key>\0<revision: 12 hex digits>  → record (a put's value with its generation and, when
//                                          known, its watch-cache attributes; or a tombstone)
//   m/revision, m/compacted, m/applied  → store metadata, written in the same batch as the data
//   m/held                              → the Raft index an in-place snapshot recorded as held
// The \0 separator sorts a key's revisions before any longer key sharing its prefix, and
// fixed-width hex revisions sort numerically. Imports: nothing from the project.

export const HISTORY_PREFIX = 'h/';
export const META_REVISION = 'm/revision';
export const META_COMPACTED = 'm/compacted';
export const META_APPLIED = 'm/applied';
/** Present while a snapshot image replaces the data: a store opened with it holds nothing usable. */
export const META_RESTORING = 'm/restoring';
/**
 * The Raft log index whose state this store holds durably, recorded by an in-place Raft snapshot
 * (LevelRevisionStore.persistThrough): entries after the last command (no-ops, membership
 * changes) move it past m/applied.
 */
export const META_HELD = 'm/held';
/** The naming mode the data was written with; switching it on existing data is refused. */
export const META_NAMING = 'm/naming';

const REVISION_WIDTH = 12;

export function historyKey(key: string, revision: number): string {
  return `${HISTORY_PREFIX}${key}\u0000${revision.toString(16).padStart(REVISION_WIDTH, '0')}`;
}

export function parseHistoryKey(stored: string): { key: string; revision: number } {
  const sep = stored.lastIndexOf('\u0000');
  if (!stored.startsWith(HISTORY_PREFIX) || sep < 0) throw new Error(`not a history key: ${JSON.stringify(stored)}`);
  return { key: stored.slice(HISTORY_PREFIX.length, sep), revision: parseInt(stored.slice(sep + 1), 16) };
}

/**
 * parseHistoryKey for a key read as bytes (the store's scan at open). The key comes out as a
 * string of its own: a slice of the history key's string keeps the whole of that alive, and
 * the index holds every key for good (with 50,000 pods, about 50 B each).
 */
export function parseHistoryKeyBytes(stored: Uint8Array): { key: string; revision: number } {
  const b = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  const sep = b.length - REVISION_WIDTH - 1;
  if (sep < HISTORY_PREFIX.length || b[sep] !== 0 || b[0] !== 0x68 /* h */ || b[1] !== 0x2f /* / */) {
    throw new Error(`not a history key: ${JSON.stringify(b.toString('utf8'))}`);
  }
  let revision = 0;
  for (let i = sep + 1; i < b.length; i++) {
    const c = b[i]!;
    const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
    if (digit < 0) throw new Error(`not a history key: ${JSON.stringify(b.toString('utf8'))}`);
    revision = revision * 16 + digit;
  }
  return { key: b.toString('utf8', HISTORY_PREFIX.length, sep), revision };
}

/** Keys are printable paths; a NUL would break the layout, so the store refuses it. */
export function isValidKey(key: string): boolean {
  return key.length > 0 && !key.includes('\u0000');
}

// Record: 1 byte flags (bit 0 = tombstone, bit 1 = attributes follow), 6 bytes createRevision,
// 6 bytes version, then — when bit 1 is set — 4 bytes attribute length n and n bytes of
// attributes, then the value. The attributes are what the watch cache derived from the value
// when it was written (opaque here; see StoreEvent.attributes): a restart builds the cache from
// them instead of parsing every object. Records written before bit 1 existed never set it and
// read as before; an old reader would take a new record's attributes for part of the value.
const HEADER = 13;
const TOMBSTONE = 1;
const WITH_ATTRIBUTES = 2;

export function encodeRecord(tombstone: boolean, createRevision: number, version: number, value: Uint8Array, attributes?: Uint8Array): Uint8Array {
  const extra = attributes === undefined ? 0 : 4 + attributes.length;
  const out = Buffer.allocUnsafe(HEADER + extra + value.length);
  out[0] = (tombstone ? TOMBSTONE : 0) | (attributes === undefined ? 0 : WITH_ATTRIBUTES);
  out.writeUIntBE(createRevision, 1, 6);
  out.writeUIntBE(version, 7, 6);
  if (attributes !== undefined) {
    out.writeUInt32BE(attributes.length, HEADER);
    out.set(attributes, HEADER + 4);
  }
  out.set(value, HEADER + extra);
  return out;
}

/**
 * A record's header alone, for reads that need no value (the key index at open): no views
 * into the record are made.
 */
export function decodeRecordHead(bytes: Uint8Array): { tombstone: boolean; createRevision: number; version: number } {
  if (bytes.length < HEADER) throw new Error('store record too short');
  return { tombstone: (bytes[0]! & TOMBSTONE) !== 0, createRevision: readUint48(bytes, 1), version: readUint48(bytes, 7) };
}

function readUint48(b: Uint8Array, at: number): number {
  return ((b[at]! * 256 + b[at + 1]!) * 256 + b[at + 2]!) * 2 ** 24 + ((b[at + 3]! << 16) | (b[at + 4]! << 8) | b[at + 5]!);
}

export interface StoredRecord {
  tombstone: boolean;
  createRevision: number;
  version: number;
  value: Uint8Array;
  /** Present when the record was written with attributes (views into `bytes`, as `value`). */
  attributes?: Uint8Array;
}

export function decodeRecord(bytes: Uint8Array): StoredRecord {
  if (bytes.length < HEADER) throw new Error('store record too short');
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const flags = b[0]!;
  const out: StoredRecord = { tombstone: (flags & TOMBSTONE) !== 0, createRevision: b.readUIntBE(1, 6), version: b.readUIntBE(7, 6), value: b.subarray(HEADER) };
  if ((flags & WITH_ATTRIBUTES) !== 0) {
    if (b.length < HEADER + 4) throw new Error('store record too short');
    const n = b.readUInt32BE(HEADER);
    const end = HEADER + 4 + n;
    if (end > b.length) throw new Error('store record attributes overrun the record');
    out.attributes = b.subarray(HEADER + 4, end);
    out.value = b.subarray(end);
  }
  return out;
}
