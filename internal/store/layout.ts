// internal/store/layout owns how the revision store lays out its level database:
//   h/<key>\0<revision: 12 hex digits>  → record (a put's value with its generation, or a tombstone)
//   m/revision, m/compacted, m/applied  → store metadata, written in the same batch as the data
// The \0 separator sorts a key's revisions before any longer key sharing its prefix, and
// fixed-width hex revisions sort numerically. Imports: nothing from the project.

export const HISTORY_PREFIX = 'h/';
export const META_REVISION = 'm/revision';
export const META_COMPACTED = 'm/compacted';
export const META_APPLIED = 'm/applied';
/** Present while a snapshot image replaces the data: a store opened with it holds nothing usable. */
export const META_RESTORING = 'm/restoring';
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

/** Keys are printable paths; a NUL would break the layout, so the store refuses it. */
export function isValidKey(key: string): boolean {
  return key.length > 0 && !key.includes('\u0000');
}

// Record: 1 byte flags (bit 0 = tombstone), 6 bytes createRevision, 6 bytes version, then the value.
const HEADER = 13;

export function encodeRecord(tombstone: boolean, createRevision: number, version: number, value: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafe(HEADER + value.length);
  out[0] = tombstone ? 1 : 0;
  out.writeUIntBE(createRevision, 1, 6);
  out.writeUIntBE(version, 7, 6);
  out.set(value, HEADER);
  return out;
}

export function decodeRecord(bytes: Uint8Array): { tombstone: boolean; createRevision: number; version: number; value: Uint8Array } {
  if (bytes.length < HEADER) throw new Error('store record too short');
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    tombstone: (b[0]! & 1) === 1,
    createRevision: b.readUIntBE(1, 6),
    version: b.readUIntBE(7, 6),
    value: b.subarray(HEADER),
  };
}
