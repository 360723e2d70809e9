// raft/storage/level-log-store.ts owns the LevelDB implementation of DurableLogStore: every
// save() is one atomic batch, durable before it resolves (see Durability below), and
// compact() a few (each deleting the lowest entries), so a crash at any moment leaves a
// consistent state. It keeps only bounds in memory
// (first and last stored index, the last entry's term, the hard state and snapshot metadata);
// entries and snapshot data live on disk. Key layout: key-layout.ts. Value encoding: raft/codec.
//
// On disk (createLevelLogStore), snapshot data goes to a file of its own in a `snapshots`
// directory inside the database directory, as etcd keeps .snap files beside its WAL: an image
// of megabytes written into LevelDB went through its log and memtable and forced a memtable
// flush, stalling every save behind it on every member at once. The file is written and
// fsynced under a temporary name, renamed, and only then referenced by the metadata record in
// the same atomic batch as the rest of the save; files no record references (a crash between
// the two, or the previous snapshot) are deleted afterwards and at open().
// With `snapshotRefs`, snapshot data travels as a reference to that file (snapshot-ref.ts):
// written from a stream (stageSnapshotStream), adopted by rename when a transport spooled it
// into the directory, and handed back by open() without being read into memory. The files
// are snapshot-files.ts's, shared with the segment store.
//
// Durability (on disk): a save is durable once its record is in the redo log file beside the
// database (wal-file.ts), written there on the calling thread and fdatasynced either on it too,
// when the caller says it has nothing else to do meanwhile (LogSaveBatch.idle: one request in
// flight) and the record is at most 2 KB, or else on the thread pool, so that a busy loop keeps
// working during the sync (syncing every save on the loop halved a leader's throughput at 16
// in flight: it could no longer pipeline the next batch behind its write). The same batch then
// goes to LevelDB unsynced, in the background, gathered with the following ones into writes of
// about 64 KB (one pool round trip each, not one per save), one write at a time and in order
// (a read of an entry, a checkpoint and close() first hand over what is gathered and wait).
// A LevelDB write with sync crosses to libuv's thread pool and back, and fdatasyncs a log file
// that grows with every write, which on ext4 waits for a journal commit: on a loaded two-core
// machine that made a Raft member's slow log writes about twice as slow as etcd's fdatasync
// of its preallocated WAL (measured: half of a slow write's time passed before the pool's
// thread ran). (One unsynced LevelDB write per save behind the redo log cost more CPU than one
// synced write: at 16 in flight 0.69 against 0.48 ms of the members' CPU per put in one
// loaded run; gathered, 0.38 against 0.40.) open() first replays the
// records LevelDB may lack (all of them since the last checkpoint: replaying a write LevelDB
// holds already changes nothing, in order). A checkpoint (when the file is full, and at
// close()) flushes LevelDB's memtable to a synced table file (compactRange of an empty range
// does exactly that) and records where the redo log starts over.

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { AbstractBatchOperation, AbstractBatchOptions, AbstractLevel } from 'abstract-level';
import { ClassicLevel } from 'classic-level';
import { MemoryLevel } from 'memory-level';
import { BinaryReader } from '../codec/binary-reader.js';
import { BinaryWriter } from '../codec/binary-writer.js';
import {
  decodeEntry,
  decodeHardState,
  decodeSnapshotMetadata,
  encodeEntry,
  encodeHardState,
  encodeSnapshotMetadata,
} from '../codec/raft-codec.js';
import type { DurableLogState, Entry, HardState, Snapshot, SnapshotMetadata } from '../types.js';
import {
  EMPTY_RANGE,
  ENTRY_RANGE_END,
  ENTRY_RANGE_START,
  FORMAT_VERSION,
  HARD_STATE_KEY,
  READABLE_FORMATS,
  SNAPSHOT_DATA_KEY,
  SNAPSHOT_META_KEY,
  VERSION_KEY,
  WAL_FILE_NAME,
  WAL_START_KEY,
  entryKey,
  indexOfEntryKey,
} from './key-layout.js';
import { LogStoreError, type DurableLogStore, type LogSaveBatch } from './log-store.js';
import { readSnapshotData } from './snapshot-ref.js';
import { SnapshotFiles } from './snapshot-files.js';
import { WalFile, encodeWalRecord } from './wal-file.js';

type Bytes = Uint8Array;
type LevelDb = AbstractLevel<Bytes, Bytes, Bytes>;
type BatchOp = AbstractBatchOperation<LevelDb, Bytes, Bytes>;

const EMPTY_HARD_STATE: HardState = { term: 0, vote: 0, commit: 0 };

export interface LevelLogStoreOptions {
  /**
   * Entry deletions per write when compacting (see compact()). Default 512: small enough that
   * a save waits for one such write at most a millisecond or two.
   */
  compactBatch?: number;
  /**
   * Directory for snapshot data files (see the module header). Without it, snapshot data is
   * kept in the database (memory-level stores, which have no directory).
   */
  snapshotDir?: string;
  /**
   * With a snapshot directory: open() returns the snapshot's data as a reference to its file
   * (snapshot-ref.ts) instead of reading it into memory, and stageSnapshotStream() is
   * available. Consumers must then accept references (RaftNode and Http2Transport do).
   */
  snapshotRefs?: boolean;
  /**
   * The redo log that makes saves durable (see the module header); without it every save is
   * a LevelDB write with sync. createLevelLogStore sets it.
   */
  wal?: {
    path: string;
    /** Capacity of the file in bytes: a checkpoint starts it over when full. */
    bytes: number;
    /** Makes every write LevelDB has taken so far durable (a memtable flush). */
    flush: () => Promise<void>;
    /** Records of idle saves (LogSaveBatch.idle) up to this size are fdatasynced on the calling thread. Default 2048. */
    inlineSyncBytes?: number;
  };
}

/** Default capacity of the redo log: a checkpoint (a memtable flush) per 32 MB of writes. */
const DEFAULT_WAL_BYTES = 32 << 20;
/** Records up to this size are fdatasynced on the calling thread (see writeThroughWal). */
const DEFAULT_WAL_INLINE_SYNC_BYTES = 2048;
/** LevelDB writes queued behind the redo log before a save waits for them. */
const MAX_LEVEL_BACKLOG = 8;
/**
 * Bytes of redo log records gathered into one LevelDB write. At 32 creates in flight on three
 * replicas a Raft batch holds about 8 entries: at 16 KB every other batch also cost a LevelDB
 * write, one more round trip to the thread pool (and two thread wake-ups) beside its fdatasync
 * and the store's apply write; at 64 KB, one batch in four or five (measured: 0.50 against 0.22
 * of these writes per apply batch on every member). Reads and checkpoints wait for what is
 * gathered either way, and the redo log holds it.
 */
const LEVEL_BATCH_BYTES = 64 << 10;



/**
 * A store backed by LevelDB at `location` (a directory), every save durable before it
 * resolves (through the redo log; `walBytes` is its capacity, 0 for none: LevelDB syncs).
 */
export function createLevelLogStore(location: string, options: Omit<LevelLogStoreOptions, 'snapshotDir' | 'wal'> & { walBytes?: number } = {}): DurableLogStore {
  const db = new ClassicLevel<Bytes, Bytes>(location, { keyEncoding: 'view', valueEncoding: 'view' });
  const { walBytes = DEFAULT_WAL_BYTES, ...rest } = options;
  const wal = walBytes > 0 ? { path: join(location, WAL_FILE_NAME), bytes: walBytes, flush: () => db.compactRange(EMPTY_RANGE[0], EMPTY_RANGE[1]) } : undefined;
  return new LevelLogStore(db as unknown as LevelDb, { ...rest, snapshotDir: join(location, 'snapshots'), ...(wal ? { wal } : {}) });
}

/**
 * A store in memory (memory-level), for tests of logic only: close() then open() on the same
 * instance sees the same data, which simulates a clean restart but not a crash.
 */
export function createMemoryLogStore(): DurableLogStore {
  const db = new MemoryLevel<Bytes, Bytes>({ keyEncoding: 'view', valueEncoding: 'view' });
  return new LevelLogStore(db as unknown as LevelDb);
}

/** What the store knows about the log without reading it: bounds and a little metadata. */
interface LogBounds {
  hardState: HardState;
  snapshot: SnapshotMetadata | null;
  /** Lowest and highest stored entry index; both 0 when no entry is stored. */
  firstStored: number;
  lastStored: number;
  /** Term of the entry at lastStored (0 when none). */
  lastStoredTerm: number;
}

export class LevelLogStore implements DurableLogStore {
  private bounds: LogBounds | null = null;
  /** Tail of the serialized operation chain: save/compact/close run one after another. */
  private tail: Promise<unknown> = Promise.resolve();
  /** Set when a write failed: the in-memory bounds may no longer match the disk. */
  private failed: unknown = null;

  private readonly compactBatch: number;
  /** Snapshot data files, with a snapshot directory (snapshot-files.ts). */
  private readonly files: SnapshotFiles | undefined;
  private readonly walOptions: LevelLogStoreOptions['wal'];
  private readonly walInlineSyncBytes: number;
  /** The open redo log (see the module header). */
  private wal: WalFile | null = null;
  /** The LevelDB writes of records not yet in LevelDB, chained in order; null when none. */
  private levelWrite: Promise<void> | null = null;
  private levelWritesPending = 0;
  /** Operations of records in the redo log not handed to LevelDB yet, in order (see startLevelWrite). */
  private levelPending: BatchOp[] = [];
  private levelPendingBytes = 0;

  constructor(
    private readonly db: LevelDb,
    options: LevelLogStoreOptions = {},
  ) {
    this.compactBatch = Math.max(1, Math.floor(options.compactBatch ?? 512));
    this.files = options.snapshotDir === undefined ? undefined : new SnapshotFiles(options.snapshotDir, options.snapshotRefs === true, (cause) => (this.failed = cause));
    this.walOptions = options.wal;
    this.walInlineSyncBytes = options.wal?.inlineSyncBytes ?? DEFAULT_WAL_INLINE_SYNC_BYTES;
    // Offered only where references can be kept: a driver checks for the method.
    if (this.files?.refs) this.stageSnapshotStream = (metadata, chunks) => this.stageStream(metadata, chunks);
  }

  /** With snapshotRefs: the reference to the recorded snapshot's file. */
  recordedSnapshotData(): Uint8Array | undefined {
    return this.files?.recorded;
  }

  readonly stageSnapshotStream?: (metadata: SnapshotMetadata, chunks: AsyncIterable<Uint8Array>) => Promise<Uint8Array>;

  async open(): Promise<DurableLogState> {
    try {
      await this.db.open();
      if (this.files) await mkdir(this.files.dir, { recursive: true });
    } catch (cause) {
      throw new LogStoreError('LOG_IO', `cannot open log store: ${(cause as Error).message}`, { cause });
    }
    this.failed = null;
    this.files?.reset();
    if (this.walOptions) await this.replayWal(this.walOptions);
    const { state, bounds } = await this.load();
    this.bounds = bounds;
    return state;
  }

  save(batch: LogSaveBatch): Promise<void> {
    return this.serialize(() => this.doSave(batch));
  }

  async compact(index: number): Promise<void> {
    // In batches of `compactBatch` deletions, each its own serialized write, so that saves
    // issued meanwhile (the driver keeps persisting Readies) wait for one batch, not for
    // thousands of deletions. Deleting from the front keeps the stored log contiguous after
    // every batch, so a crash in between leaves a valid store with a longer prefix.
    for (;;) {
      let more = false;
      await this.serialize(async () => {
        more = await this.doCompact(index, this.compactBatch);
      });
      if (!more) return;
    }
  }

  async close(): Promise<void> {
    await this.tail.catch(() => undefined);
    await this.files?.settle();
    await this.levelCaughtUp();
    if (this.wal) {
      // The next open() then has nothing to replay; if this fails, it replays.
      if (!this.wal.empty && !this.failed) await this.checkpoint().catch(() => undefined);
      this.wal.close();
      this.wal = null;
    }
    this.bounds = null;
    if (this.db.status === 'open' || this.db.status === 'opening') await this.db.close();
  }

  // ---- internals ----------------------------------------------------------------------------

  private serialize(op: () => Promise<void>): Promise<void> {
    const run = this.tail.catch(() => undefined).then(op);
    this.tail = run;
    return run;
  }

  private openBounds(): LogBounds {
    if (this.failed) throw new LogStoreError('LOG_IO', 'an earlier write failed; re-open the store', { cause: this.failed });
    if (!this.bounds) throw new LogStoreError('LOG_CLOSED', 'log store is not open');
    return this.bounds;
  }

  /** Writes `ops` atomically; with `sync`, durable on return (`idle`: see LogSaveBatch). */
  private async write(ops: BatchOp[], sync = true, idle = false): Promise<void> {
    if (ops.length === 0) return;
    if (this.wal) return this.writeThroughWal(this.wal, ops, sync, idle);
    return this.levelBatch(ops, sync);
  }

  /** See the module header: the record durable here, LevelDB's copy in the background. */
  private async writeThroughWal(wal: WalFile, ops: BatchOp[], sync: boolean, idle: boolean): Promise<void> {
    // A bound on LevelDB's backlog (its writes are much cheaper than the fdatasyncs here).
    if (this.levelWritesPending >= MAX_LEVEL_BACKLOG) await this.levelWrite;
    if (this.failed) throw new LogStoreError('LOG_IO', 'an earlier write failed; re-open the store', { cause: this.failed });
    const record = encodeWalRecord(ops);
    if (!wal.fits(record)) {
      await this.checkpoint();
      if (!wal.fits(record)) {
        // Larger than the whole file: straight to LevelDB, then flushed (after the checkpoint,
        // so no record older than it is replayed over it).
        await this.levelBatch(ops, false);
        await this.flushLevel();
        return;
      }
    }
    try {
      // A busy caller's loop has other work to do meanwhile, so its fdatasync goes to the
      // thread pool; so does a large record's (a loaded member's: many entries per Ready).
      const inline = idle && record.length <= this.walInlineSyncBytes;
      wal.append(record, sync && inline);
      if (sync && !inline) await wal.sync();
    } catch (cause) {
      this.failed = cause;
      throw new LogStoreError('LOG_IO', `log store write failed: ${(cause as Error).message}`, { cause });
    }
    // LevelDB's copy goes a few records at a time (each write is a round trip to the pool, and
    // the redo log holds the records meanwhile).
    for (const op of ops) this.levelPending.push(op);
    this.levelPendingBytes += record.length;
    if (this.levelPendingBytes >= LEVEL_BATCH_BYTES) this.startLevelWrite();
  }

  /** Hands the operations waiting for LevelDB to it, as one write behind those in flight. */
  private startLevelWrite(): void {
    if (this.levelPending.length === 0) return;
    const ops = this.levelPending;
    this.levelPending = [];
    this.levelPendingBytes = 0;
    this.levelWritesPending++;
    const write = (this.levelWrite ?? Promise.resolve())
      // After a failure (levelBatch recorded it) nothing more is written: the records are
      // durable, and the next open() replays them.
      .then(() => (this.failed ? undefined : this.levelBatch(ops, false)))
      .catch(() => undefined)
      .finally(() => {
        this.levelWritesPending--;
        if (this.levelWrite === write) this.levelWrite = null;
      });
    this.levelWrite = write;
  }

  /** Resolves once LevelDB has taken every record written so far (reads and flushes wait for it). */
  private async levelCaughtUp(): Promise<void> {
    this.startLevelWrite();
    if (this.levelWrite) await this.levelWrite;
  }

  /**
   * Flushes LevelDB (everything it took is then durable), records where the redo log starts
   * over and flushes that too, then starts it over. Flushing is the only durability of
   * LevelDB's own that the store relies on. A crash before the second flush completes replays
   * the records since the previous checkpoint (LevelDB holds them all durably already), or
   * none if the new start survived.
   */
  private async checkpoint(): Promise<void> {
    const wal = this.wal!;
    await this.levelCaughtUp();
    await this.flushLevel();
    await this.levelBatch([{ type: 'put', key: WAL_START_KEY, value: new BinaryWriter(10).uvarint(wal.nextSeq).finish().slice() }], false);
    await this.flushLevel();
    wal.restart();
  }

  private async flushLevel(): Promise<void> {
    try {
      await this.walOptions!.flush();
    } catch (cause) {
      this.failed = cause;
      throw new LogStoreError('LOG_IO', `log store flush failed: ${(cause as Error).message}`, { cause });
    }
  }

  /**
   * Opens the redo log and writes to LevelDB every record it holds since the last checkpoint,
   * in order (whatever LevelDB holds of them already is written again, identically).
   */
  private async replayWal(o: NonNullable<LevelLogStoreOptions['wal']>): Promise<void> {
    this.wal?.close();
    this.wal = null;
    try {
      const raw = await this.db.get(WAL_START_KEY);
      const startSeq = raw === undefined ? 0 : new BinaryReader(raw).uvarint();
      // Whatever an earlier opening had gathered for LevelDB is in the file: replayed below.
      this.levelPending = [];
      this.levelPendingBytes = 0;
      const { wal, records } = WalFile.open(o.path, o.bytes, startSeq);
      this.wal = wal;
      for (const ops of records) {
        await this.levelBatch(
          ops.map((op): BatchOp => (op.type === 'put' ? { type: 'put', key: op.key, value: op.value! } : { type: 'del', key: op.key })),
          false,
        );
      }
    } catch (cause) {
      this.wal?.close();
      this.wal = null;
      if (cause instanceof LogStoreError) throw cause;
      throw new LogStoreError('LOG_IO', `cannot replay the log store's redo log: ${(cause as Error).message}`, { cause });
    }
  }

  /** One LevelDB batch; a failure marks the store failed. */
  private async levelBatch(ops: BatchOp[], sync: boolean): Promise<void> {
    try {
      // `sync` is a classic-level write option (fsync before resolving); memory-level ignores it.
      const options: AbstractBatchOptions<Bytes, Bytes> & { sync: boolean } = { sync };
      // A chained batch: classic-level hands each operation straight to its native batch,
      // where the array form normalizes and clones every operation in JavaScript first
      // (about 3× the CPU per entry, measured: the largest cost in a leader's profile).
      const b = this.db.batch();
      for (const op of ops) {
        if (op.type === 'put') b.put(op.key, op.value);
        else b.del(op.key);
      }
      await b.write(options);
    } catch (cause) {
      this.failed = cause;
      throw new LogStoreError('LOG_IO', `log store write failed: ${(cause as Error).message}`, { cause });
    }
  }

  /** Term of entry `i`, or undefined if the log does not hold it (snapshot counts). */
  private async termAt(b: LogBounds, i: number): Promise<number | undefined> {
    if (i === 0) return 0;
    if (b.lastStored !== 0 && i === b.lastStored) return b.lastStoredTerm;
    if (b.lastStored !== 0 && i >= b.firstStored && i <= b.lastStored) {
      await this.levelCaughtUp();
      const raw = await this.db.get(entryKey(i));
      if (raw === undefined) throw new LogStoreError('LOG_CORRUPT', `entry ${i} missing inside [${b.firstStored}, ${b.lastStored}]`);
      return decodeEntry(raw).term;
    }
    if (b.snapshot && i === b.snapshot.index) return b.snapshot.term;
    return undefined;
  }

  private async doSave(batch: LogSaveBatch): Promise<void> {
    const cur = this.openBounds();
    const next: LogBounds = { ...cur };
    const ops: BatchOp[] = [];
    const deleteRange = (lo: number, hi: number): void => {
      for (let i = lo; i <= hi; i++) ops.push({ type: 'del', key: entryKey(i) });
    };

    if (batch.snapshot) {
      const meta = batch.snapshot.metadata;
      const curSnapIndex = cur.snapshot?.index ?? 0;
      if (meta.index < curSnapIndex) {
        throw new LogStoreError('LOG_INVARIANT', `snapshot at ${meta.index} is older than the stored one at ${curSnapIndex}`);
      }
      const heldTerm = await this.termAt(cur, meta.index);
      if (heldTerm !== meta.term && cur.lastStored !== 0) {
        // Raft §7: no matching entry, so the whole log is superseded by the snapshot.
        deleteRange(cur.firstStored, cur.lastStored);
        next.firstStored = 0;
        next.lastStored = 0;
        next.lastStoredTerm = 0;
      }
      ops.push({ type: 'put', key: SNAPSHOT_META_KEY, value: encodeSnapshotMetadata(meta) });
      if (this.files) ops.push({ type: 'del', key: SNAPSHOT_DATA_KEY });
      else ops.push({ type: 'put', key: SNAPSHOT_DATA_KEY, value: await readSnapshotData(batch.snapshot.data) });
      next.snapshot = meta;
    }

    const snapIndex = next.snapshot?.index ?? 0;
    // Entries the snapshot already covers are dropped (they are committed and identical).
    const entries = batch.entries.filter((e) => e.index > snapIndex);
    if (entries.length > 0) {
      const first = entries[0]!;
      const logLast = Math.max(next.lastStored, snapIndex);
      if (first.index > logLast + 1) {
        throw new LogStoreError('LOG_INVARIANT', `entry ${first.index} would leave a gap after ${logLast}`);
      }
      const prevTerm = await this.termAt(next, first.index - 1);
      if (prevTerm === undefined || first.term < prevTerm) {
        throw new LogStoreError('LOG_INVARIANT', `entry ${first.index} term ${first.term} precedes term ${prevTerm} of entry ${first.index - 1}`);
      }
      for (let k = 1; k < entries.length; k++) {
        const e = entries[k]!;
        const prev = entries[k - 1]!;
        if (e.index !== prev.index + 1 || e.term < prev.term) {
          throw new LogStoreError('LOG_INVARIANT', `entries not contiguous or terms decreasing at ${e.index}`);
        }
      }
      // Committed entries are never rewritten: the store refuses rather than lose a commit.
      for (const e of entries) {
        if (e.index > cur.hardState.commit) break;
        if ((await this.termAt(next, e.index)) !== e.term) {
          throw new LogStoreError('LOG_INVARIANT', `entry ${e.index} is committed; refusing to overwrite it with term ${e.term}`);
        }
      }
      const last = entries[entries.length - 1]!;
      // A conflicting suffix beyond the new entries is discarded.
      if (next.lastStored > last.index) deleteRange(last.index + 1, next.lastStored);
      for (const e of entries) ops.push({ type: 'put', key: entryKey(e.index), value: encodeEntry(e) });
      next.firstStored = next.lastStored === 0 ? first.index : Math.min(next.firstStored, first.index);
      next.lastStored = last.index;
      next.lastStoredTerm = last.term;
    }

    if (batch.hardState) {
      next.hardState = { ...batch.hardState };
      ops.push({ type: 'put', key: HARD_STATE_KEY, value: encodeHardState(batch.hardState) });
    }
    const lastIndex = Math.max(next.lastStored, snapIndex);
    if (next.hardState.commit > lastIndex) {
      throw new LogStoreError('LOG_INVARIANT', `commit ${next.hardState.commit} beyond last index ${lastIndex}`);
    }

    // Every check passed: the data file goes first (unless stageSnapshot wrote it already),
    // so that the record naming it never points at a file that is not complete and durable.
    if (batch.snapshot && this.files) await this.files.prepare(batch.snapshot);
    await this.write(ops, batch.sync ?? true, batch.idle === true);
    this.bounds = next;
    if (batch.snapshot && this.files) await this.files.afterRecord(batch.snapshot);
  }

  /**
   * Writes the snapshot's data file now, outside the queue of saves, so that the save() that
   * records it later only writes its small metadata record: megabytes of image do not hold up
   * the Readies saved meanwhile. Without a snapshot directory there is nothing to stage.
   */
  async stageSnapshot(snapshot: Snapshot): Promise<void> {
    if (!this.files) return;
    this.openBounds();
    await this.files.stage(snapshot);
  }

  /**
   * stageSnapshot() for data produced as a stream (an image larger than memory should hold):
   * writes it to the snapshot's file and returns the reference that stands for it in the
   * Snapshot handed to save() and to peers. Needs `snapshotRefs`.
   */
  private async stageStream(metadata: SnapshotMetadata, chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
    this.openBounds();
    return this.files!.stageStream(metadata, chunks);
  }

  /** Deletes up to `maxDeletes` of the lowest stored entries ≤ index; resolves whether any remain. */
  private async doCompact(index: number, maxDeletes: number): Promise<boolean> {
    const cur = this.openBounds();
    const snapIndex = cur.snapshot?.index ?? 0;
    if (index > snapIndex) {
      throw new LogStoreError('LOG_INVARIANT', `cannot compact to ${index}: snapshot only covers ${snapIndex}`);
    }
    if (cur.lastStored === 0 || index < cur.firstStored) return false;
    const hi = Math.min(index, cur.lastStored, cur.firstStored + maxDeletes - 1);
    const ops: BatchOp[] = [];
    for (let i = cur.firstStored; i <= hi; i++) ops.push({ type: 'del', key: entryKey(i) });
    // Unsynced: losing deletions in a crash only leaves entries that open() skips, and the
    // next synced save flushes LevelDB's log with them anyway.
    await this.write(ops, false);
    const next = { ...cur };
    if (hi === cur.lastStored) {
      next.firstStored = 0;
      next.lastStored = 0;
      next.lastStoredTerm = 0;
    } else {
      next.firstStored = hi + 1;
    }
    this.bounds = next;
    return hi < Math.min(index, cur.lastStored);
  }

  /** Reads everything back and checks the invariants a crash must never break. */
  private async load(): Promise<{ state: DurableLogState; bounds: LogBounds }> {
    const corrupt = (msg: string): LogStoreError => new LogStoreError('LOG_CORRUPT', msg);
    const version = await this.db.get(VERSION_KEY);
    const writeVersion = (): Promise<void> =>
      this.write([{ type: 'put', key: VERSION_KEY, value: new BinaryWriter(1).uvarint(FORMAT_VERSION).finish().slice() }]);
    if (version === undefined) {
      await writeVersion();
    } else {
      const v = new BinaryReader(version).uvarint();
      if (!READABLE_FORMATS.includes(v)) throw corrupt(`log store format ${v}, this build reads ${READABLE_FORMATS.join(' and ')}`);
      // A format 1 store is a format 2 store whose snapshot data is in the database; marking
      // it current keeps older builds (which would not find a snapshot file, or would not
      // replay the redo log) from opening it.
      if (v !== FORMAT_VERSION) await writeVersion();
    }
    await this.levelCaughtUp();

    const decodeOrCorrupt = <T>(what: string, f: () => T): T => {
      try {
        return f();
      } catch (cause) {
        throw new LogStoreError('LOG_CORRUPT', `undecodable ${what}`, { cause });
      }
    };
    const hsRaw = await this.db.get(HARD_STATE_KEY);
    const hardState = hsRaw ? decodeOrCorrupt('hard state', () => decodeHardState(hsRaw)) : { ...EMPTY_HARD_STATE };
    const metaRaw = await this.db.get(SNAPSHOT_META_KEY);
    const snapMeta = metaRaw ? decodeOrCorrupt('snapshot metadata', () => decodeSnapshotMetadata(metaRaw)) : null;
    let snapData = snapMeta ? await this.db.get(SNAPSHOT_DATA_KEY) : undefined;
    // The recorded snapshot's file when its data is not in the database (format 2 on); files
    // of snapshots that never became current (a crash before their record was written), or
    // that a newer snapshot replaced, are removed either way.
    if (this.files) {
      const fromFile = await this.files.load(snapData === undefined ? snapMeta : null);
      snapData ??= fromFile;
    }
    if (snapMeta && snapData === undefined) throw corrupt(`snapshot metadata (index ${snapMeta.index}) without its data`);
    const snapIndex = snapMeta?.index ?? 0;
    const snapTerm = snapMeta?.term ?? 0;

    const entries: Entry[] = [];
    let firstStored = 0;
    let lastStored = 0;
    let lastStoredTerm = 0;
    for await (const [key, value] of this.db.iterator({ gte: ENTRY_RANGE_START, lt: ENTRY_RANGE_END })) {
      const index = indexOfEntryKey(key);
      const e = decodeOrCorrupt(`entry ${index}`, () => decodeEntry(value));
      if (e.index !== index) throw corrupt(`entry under key ${index} says index ${e.index}`);
      if (lastStored !== 0 && index !== lastStored + 1) throw corrupt(`gap in log: ${lastStored} then ${index}`);
      if (lastStored !== 0 && e.term < lastStoredTerm) throw corrupt(`term decreases at ${index}`);
      if (firstStored === 0) firstStored = index;
      lastStored = index;
      lastStoredTerm = e.term;
      if (index > snapIndex) {
        if (entries.length === 0) {
          if (index !== snapIndex + 1) throw corrupt(`first entry after snapshot ${snapIndex} is ${index}`);
          if (e.term < snapTerm) throw corrupt(`entry ${index} term below snapshot term`);
        }
        entries.push(e);
      }
    }
    const lastIndex = Math.max(lastStored, snapIndex);
    if (hardState.commit > lastIndex) throw corrupt(`commit ${hardState.commit} beyond last index ${lastIndex}`);

    // LevelDB hands back Buffers; callers get plain Uint8Arrays (a view, no copy).
    const snapshot = snapMeta && snapData
      ? { metadata: snapMeta, data: new Uint8Array(snapData.buffer, snapData.byteOffset, snapData.byteLength) }
      : null;
    return {
      state: { hardState, snapshot, entries },
      bounds: { hardState, snapshot: snapMeta, firstStored, lastStored, lastStoredTerm },
    };
  }
}
