// internal/store/applier owns turning committed commands into durable state: it evaluates each
// command's compares against the key index, assigns revisions, and writes everything a batch of
// commands changed — history records, tombstones, compaction deletes and metadata — as ONE
// level batch, so a crash leaves either all of a batch or none of it. It is deterministic: the
// same commands in the same order give the same revisions and bytes on every replica.
// Nothing else writes the database's data. Imports: types, key-index, layout.

import { KeyIndex } from './key-index.js';
import { encodeRecord, historyKey, META_APPLIED, META_COMPACTED, META_REVISION } from './layout.js';
import type { AppliedBatch, Command, StoreEvent, TxnResult } from './types.js';

/**
 * The part of a level database the store uses: classic-level (LevelDB) and memory-level both
 * satisfy it. `sync` asks LevelDB to fsync before the write resolves.
 */
export interface LevelDb {
  open(): Promise<void>;
  close(): Promise<void>;
  get(key: string): Promise<Uint8Array | undefined>;
  /** fillCache false: the blocks read are not kept in LevelDB's block cache (see RangeOptions.once). */
  getMany(keys: string[], options?: { fillCache?: boolean }): Promise<Array<Uint8Array | undefined>>;
  put(key: string, value: Uint8Array, options?: { sync?: boolean }): Promise<void>;
  /** A chained batch: cheaper per operation than the array form. */
  batch(): ChainedBatch;
  iterator(options: { gte?: string; lt?: string; snapshot?: DbSnapshot }): AsyncIterable<[string, Uint8Array]>;
  /**
   * Keys as bytes (keyEncoding 'view'; the bounds are bytes then). highWaterMarkBytes: how many
   * bytes of entries one read from the native side may gather (classic-level: 16 KiB by
   * default, up to 1,000 entries either way).
   */
  iterator(options: { gte: Uint8Array; lt: Uint8Array; keyEncoding: 'view'; highWaterMarkBytes?: number; fillCache?: boolean; snapshot?: DbSnapshot }): BatchIterator<Uint8Array, Uint8Array>;
  /** An explicit read snapshot (taken synchronously): what a Raft snapshot image is read from. */
  snapshot(): DbSnapshot;
}

/**
 * abstract-level's iterator, read a batch at a time: nextv gives up to `size` entries per
 * promise (empty once the range is done), where iterating it one entry at a time costs a
 * promise and two async calls per entry.
 */
export interface BatchIterator<K, V> extends AsyncIterable<[K, V]> {
  nextv(size: number): Promise<Array<[K, V]>>;
  close(): Promise<void>;
}

export interface DbSnapshot {
  close(): Promise<void>;
}

export interface ChainedBatch {
  put(key: string, value: Uint8Array): ChainedBatch;
  del(key: string): ChainedBatch;
  write(options?: { sync?: boolean }): Promise<void>;
}

export interface CommittedCommand {
  command: Command;
  /** Log index of the entry (Raft); recorded so a restart knows what is already applied. */
  index?: number;
  /** Decoded values by key, when the command was proposed here (see StoreEvent.decoded). */
  decoded?: ReadonlyMap<string, unknown>;
  /** Attribute bytes by key, when the log entry carried them (see StoreEvent.attributes). */
  attributes?: ReadonlyMap<string, Uint8Array>;
}

export interface ApplierState {
  revision: number;
  compacted: number;
  applied: number;
}

/** Derives a put's watch-cache attributes from its writer's decoded value (see StoreEvent.attributes). */
export type DescribeValue = (key: string, decoded: unknown) => Uint8Array | undefined;

export class Applier {
  /**
   * Set by the store's owner once the watch cache exists: a put proposed here (with its decoded
   * value) and carrying no attributes from its log entry gets them from this, so that its
   * record stores them. Puts without either are stored without attributes (parsed at load).
   */
  describe: DescribeValue | undefined;

  constructor(
    private readonly db: LevelDb,
    private readonly index: KeyIndex,
    readonly state: ApplierState,
  ) {}

  /**
   * Applies commands in order and writes them durably (fsync when `sync`). Mutates the key
   * index before the write: the caller must not expose revisions above the previous
   * `state.revision` to readers until this resolves. A write failure leaves memory ahead of
   * disk, which is unrecoverable in-process: the caller must treat it as fatal.
   */
  async apply(commands: CommittedCommand[], sync: boolean): Promise<{ results: TxnResult[]; batch: AppliedBatch }> {
    const batch = this.db.batch();
    const events: StoreEvent[] = [];
    const results: TxnResult[] = [];
    let compactedRevision: number | undefined;
    let revision = this.state.revision;
    let applied = this.state.applied;

    for (const { command, index, decoded, attributes } of commands) {
      if (index !== undefined) {
        // A replayed log entry that is already in the state: skip it, deterministically.
        if (index <= applied) {
          results.push({ succeeded: false, revision });
          continue;
        }
        applied = index;
      }
      if (command.type === 'compact') {
        if (command.revision > this.state.compacted && command.revision <= revision) {
          this.state.compacted = command.revision;
          compactedRevision = command.revision;
          this.index.compact(command.revision, (key, rev) => void batch.del(historyKey(key, rev)));
        }
        results.push({ succeeded: true, revision });
        continue;
      }
      const failed = command.compares.find((c) => {
        const latest = this.index.latest(c.key);
        const current = latest && !latest.tombstone ? latest.revision : 0;
        return current !== c.modRevision;
      });
      if (failed) {
        results.push({ succeeded: false, revision, failedKey: failed.key });
        continue;
      }
      const changes = command.ops.filter((op) => {
        if (op.type === 'put') return true;
        const latest = this.index.latest(op.key);
        return latest !== undefined && !latest.tombstone;
      });
      if (changes.length === 0) {
        results.push({ succeeded: true, revision });
        continue;
      }
      revision++;
      for (const op of changes) {
        if (op.type === 'put') {
          const r = this.index.put(op.key, revision);
          const hint = decoded?.get(op.key);
          // What the proposer derived travels in the log entry; a local proposal derives it here.
          const carried = attributes?.get(op.key) ?? (hint !== undefined && this.describe ? this.describe(op.key, hint) : undefined);
          batch.put(historyKey(op.key, revision), encodeRecord(false, r.createRevision, r.version, op.value, carried));
          const ev: StoreEvent = {
            type: 'put',
            kv: { key: op.key, value: op.value, createRevision: r.createRevision, modRevision: revision, version: r.version },
          };
          if (hint !== undefined) ev.decoded = hint;
          if (carried !== undefined) ev.attributes = carried;
          events.push(ev);
        } else {
          const createRevision = this.index.latest(op.key)!.createRevision;
          this.index.tombstone(op.key, revision);
          batch.put(historyKey(op.key, revision), encodeRecord(true, createRevision, 0, new Uint8Array(0)));
          events.push({
            type: 'delete',
            kv: { key: op.key, value: new Uint8Array(0), createRevision, modRevision: revision, version: 0 },
          });
        }
      }
      results.push({ succeeded: true, revision });
    }

    batch.put(META_REVISION, encodeNumber(revision));
    if (compactedRevision !== undefined) batch.put(META_COMPACTED, encodeNumber(compactedRevision));
    if (applied !== this.state.applied) batch.put(META_APPLIED, encodeNumber(applied));
    await batch.write({ sync });
    this.state.revision = revision;
    this.state.applied = applied;
    const announced: AppliedBatch = { revision, events };
    if (compactedRevision !== undefined) announced.compactedRevision = compactedRevision;
    return { results, batch: announced };
  }
}

export function encodeNumber(n: number): Uint8Array {
  return Buffer.from(String(n), 'utf8');
}

export function decodeNumber(bytes: Uint8Array | undefined): number {
  if (!bytes) return 0;
  const n = Number(Buffer.from(bytes).toString('utf8'));
  if (!Number.isSafeInteger(n) || n < 0) throw new Error('corrupt store metadata');
  return n;
}
