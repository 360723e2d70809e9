// raft/storage/log-store.ts owns the contract of the durable Raft log store: what a save
// means, what survives a crash, which errors come back. Implementations: segment-log-store.ts
// (append-only segment files: what replicas use, log-store-dir.ts), level-log-store.ts (LevelDB
// through classic-level, the store of earlier builds, and memory-level for logic tests).
// Conformance suite: log-store-suite.ts.

import type { DurableLogState, Entry, HardState, Snapshot, SnapshotMetadata } from '../types.js';

/** What one Ready asks to make durable. */
export interface LogSaveBatch {
  /** Replaces the stored hard state when present. */
  hardState?: HardState;
  /**
   * Appended in index order. They must be contiguous and start at most one past the last
   * stored index; an entry at an index already held overwrites it and every stored entry
   * after it is discarded (a new leader's log wins over a conflicting suffix).
   */
  entries: Entry[];
  /**
   * Installed before `entries`. Following the Raft paper (§7, InstallSnapshot): "If existing
   * log entry has same index and term as snapshot's last included entry, retain log entries
   * following it"; otherwise the whole log is discarded. Entries at or below the snapshot
   * index are not reported by open() any more (compact() deletes them from disk).
   * A snapshot older than the stored one is a programming error.
   */
  snapshot?: Snapshot;
  /**
   * Whether the batch must reach stable storage before save() resolves (Ready.mustSync).
   * Default true. A batch that only moves the commit index may pass false: a lost commit index
   * is re-learned from the leader. The batch is atomic either way.
   */
  sync?: boolean;
  /**
   * The caller has nothing else to do until this save completes (one request in flight): a
   * store may make the batch durable on the calling thread, blocking it, rather than beside
   * it (a round trip to another thread costs two waits for a core on a loaded machine). A
   * busy caller leaves it unset, so that its loop keeps working during the sync.
   */
  idle?: boolean;
}

export type LogStoreErrorCode =
  /** The caller asked for something that would break the log's invariants (a gap, a commit past the end). */
  | 'LOG_INVARIANT'
  /** What is on disk does not satisfy the invariants: not recoverable without an operator. */
  | 'LOG_CORRUPT'
  /** The store is not open (never opened, or closed). */
  | 'LOG_CLOSED'
  /** The underlying database failed (I/O error, lock held by another process). */
  | 'LOG_IO';

export class LogStoreError extends Error {
  readonly code: LogStoreErrorCode;
  constructor(code: LogStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LogStoreError';
    this.code = code;
  }
}

export function isLogStoreError(err: unknown, code?: LogStoreErrorCode): err is LogStoreError {
  return err instanceof LogStoreError && (code === undefined || err.code === code);
}

/**
 * The durable half of a Raft node's log. One writer at a time: the driver owns the store and
 * calls save() once per Ready, awaiting it before sending the Ready's messages.
 *
 * Crash consistency: each save() is atomic and durable before it resolves, so after a crash
 * open() sees either all of a save or none of it, and always: entries contiguous and after
 * the snapshot, hardState.commit ≤ last index (the snapshot index when there are no entries).
 * A compaction interrupted by a crash may leave some of the entries it was deleting (the
 * lowest ones go first, so what is left stays contiguous); open() does not report entries at
 * or below the snapshot either way.
 */
export interface DurableLogStore {
  /**
   * Opens (creating if missing) and reads everything needed to rebuild the in-memory log.
   * Rejects with LOG_CORRUPT when the stored state breaks an invariant, LOG_IO when the
   * database cannot be opened (for example another process holds its lock).
   */
  open(): Promise<DurableLogState>;
  /**
   * Makes one Ready durable: one atomic batch, resolved only once it is on
   * disk. Calls are serialized in call order. Rejects with LOG_INVARIANT (nothing written)
   * when the batch would leave a gap, entries below the snapshot, or a commit index beyond
   * the last index; with LOG_IO when the write failed (the store's state is then unknown and
   * the caller must stop: re-open to recover).
   */
  save(batch: LogSaveBatch): Promise<void>;
  /**
   * Optional. Makes a snapshot's data durable ahead of the save() that records it, beside the
   * saves issued meanwhile rather than queued with them (an image can be megabytes): a driver
   * calls it for snapshots of its own state, then save() with the same snapshot only records
   * it. Nothing is recorded until that save(); data staged and never recorded is discarded,
   * at the latest by the next open(). Rejects with LOG_IO when the data cannot be written.
   */
  stageSnapshot?(snapshot: Snapshot): Promise<void>;
  /**
   * Optional. stageSnapshot() for data produced as chunks (an image too large to hold in
   * memory): writes them durably and resolves with the data to put in the Snapshot handed to
   * save() and to peers — a reference to the file (snapshot-ref.ts). A store that offers it
   * may also hand back references from open() and accept them in save(); see
   * LevelLogStoreOptions.snapshotRefs.
   */
  stageSnapshotStream?(metadata: SnapshotMetadata, chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array>;
  /**
   * Optional. The data of the snapshot the last save() recorded, as open() would hand it back
   * (a store keeping snapshots in files gives a reference to its file, which may differ from
   * the reference save() was given: a received snapshot spooled elsewhere is moved into place).
   */
  recordedSnapshotData?(): Uint8Array | undefined;
  /**
   * Deletes stored entries with index ≤ `index`. `index` must not exceed the stored
   * snapshot's index: entries not covered by a snapshot are never discarded (LOG_INVARIANT).
   * Need not be atomic nor synced (see crash consistency above): an implementation may split
   * it into several writes and let save() calls made meanwhile run in between.
   */
  compact(index: number): Promise<void>;
  /** Flushes and closes; later calls reject with LOG_CLOSED. Idempotent. */
  close(): Promise<void>;
}
