// raft/storage/key-layout.ts owns the byte layout of keys in the durable log store.
// One byte of prefix names the record kind; entry keys append the index as 8 big-endian
// bytes so that LevelDB's bytewise order is index order and a range scan is a log scan.
//
//   0x01                     format version (uvarint)
//   0x02                     HardState
//   0x03                     SnapshotMetadata (index, term, ConfState)
//   0x04                     snapshot data (the application's image), when it is kept in the
//                            database (format 1, and stores without a snapshot directory)
//   0x05                     sequence number of the first record of the redo log file that
//                            LevelDB may not hold durably (format 3; see wal-file.ts)
//   0x10 ++ be64(index)      Entry
//
// Format 2 may keep snapshot data in a file beside the database instead (see
// snapshotFileName); format 1 stores are read as they are. Format 3 may hold acknowledged
// writes only in the redo log file (WAL_FILE_NAME) beside the database: a build that does not
// replay it must not open the store.

export const FORMAT_VERSION = 3;
/** Formats this build reads. */
export const READABLE_FORMATS: readonly number[] = [1, 2, 3];

export const VERSION_KEY = new Uint8Array([0x01]);
export const HARD_STATE_KEY = new Uint8Array([0x02]);
export const SNAPSHOT_META_KEY = new Uint8Array([0x03]);
export const SNAPSHOT_DATA_KEY = new Uint8Array([0x04]);
export const WAL_START_KEY = new Uint8Array([0x05]);
/** A key range that holds nothing: compacting it only flushes LevelDB's memtable (a checkpoint). */
export const EMPTY_RANGE: readonly [Uint8Array, Uint8Array] = [new Uint8Array([0x06]), new Uint8Array([0x07])];
/** The redo log file, in the database directory. */
export const WAL_FILE_NAME = 'raft-wal';
const ENTRY_PREFIX = 0x10;

/** The key of entry `index` (1 ≤ index < 2^53). */
export function entryKey(index: number): Uint8Array {
  if (!Number.isSafeInteger(index) || index < 0) throw new RangeError(`entry index ${index}`);
  const key = new Uint8Array(9);
  key[0] = ENTRY_PREFIX;
  // 2^53 does not fit 32-bit operators: split into a high and a low 32-bit word. Written
  // byte by byte (no DataView): one key per entry written or deleted.
  const hi = Math.floor(index / 0x100000000);
  const lo = index % 0x100000000;
  key[1] = hi >>> 24;
  key[2] = (hi >>> 16) & 0xff;
  key[3] = (hi >>> 8) & 0xff;
  key[4] = hi & 0xff;
  key[5] = lo >>> 24;
  key[6] = (lo >>> 16) & 0xff;
  key[7] = (lo >>> 8) & 0xff;
  key[8] = lo & 0xff;
  return key;
}

/** The index an entry key names; throws on anything that is not an entry key. */
export function indexOfEntryKey(key: Uint8Array): number {
  if (key.length !== 9 || key[0] !== ENTRY_PREFIX) throw new RangeError('not an entry key');
  const view = new DataView(key.buffer, key.byteOffset, key.byteLength);
  return view.getUint32(1) * 0x100000000 + view.getUint32(5);
}

/** Bounds of the entry key range: [ENTRY_RANGE_START, ENTRY_RANGE_END). */
export const ENTRY_RANGE_START = new Uint8Array([ENTRY_PREFIX]);
export const ENTRY_RANGE_END = new Uint8Array([ENTRY_PREFIX + 1]);

/**
 * The file holding the data of the snapshot at (index, term) in a store's snapshot
 * directory. Fixed-width hexadecimal, so names sort in index order.
 */
export function snapshotFileName(index: number, term: number): string {
  const hex = (n: number): string => n.toString(16).padStart(16, '0');
  return `snap-${hex(index)}-${hex(term)}.snap`;
}

/** Whether `name` is a snapshot data file (or a temporary one being written). */
export function isSnapshotFileName(name: string): boolean {
  return /^snap-[0-9a-f]{16}-[0-9a-f]{16}\.snap(\.tmp)?$/.test(name);
}
