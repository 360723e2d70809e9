// internal/store/revision-store owns the multi-version key-value store over a level database
// (LevelDB on disk, or memory-level for --storage=memory: the same code). Reads come from the
// in-memory key index plus the database; every write is a Command handed to a Replicator and
// applied by the Applier. It announces applied batches to subscribers (the watch cache) in
// revision order, and runs periodic compaction as replicated commands.
// Imports: types, key-index, layout, applier, replicator.

import { Level } from 'level';
import { MemoryLevel } from 'memory-level';
import { Applier, decodeNumber, encodeNumber, type CommittedCommand, type DescribeValue, type LevelDb } from './applier.js';
import { KeyIndex, type Revision } from './key-index.js';
import {
  decodeRecord,
  decodeRecordHead,
  HISTORY_PREFIX,
  historyKey,
  isValidKey,
  META_APPLIED,
  META_COMPACTED,
  META_HELD,
  META_NAMING,
  META_RESTORING,
  META_REVISION,
  parseHistoryKey,
  parseHistoryKeyBytes,
} from './layout.js';
import { LocalReplicator, type Replicator } from './replicator.js';
import {
  StoreError,
  type AppliedBatch,
  type Command,
  type KeyValue,
  type OpenScanConsumer,
  type RangeOptions,
  type RangeResult,
  type RevisionStore,
  type StoreEvent,
  type TxnResult,
} from './types.js';

export interface OpenStoreOptions {
  /** 'leveldb' keeps data under `path`; 'memory' keeps nothing across restarts. */
  storage: 'leveldb' | 'memory';
  path?: string;
  replicator?: Replicator;
  /** fsync each applied batch (leveldb only). Default true: an acknowledged write survives kill -9. */
  sync?: boolean;
  /** Recorded on first open; a later open with another value fails (stored names would not match). */
  naming?: string;
  /** Given each key's latest value as the open's scan reads it (a single server's watch cache). */
  latest?: OpenScanConsumer;
}

/**
 * Told about each read and write with its operation, its first key and how long it took
 * (etcd_request_duration_seconds in internal/metrics). Compactions are not requests.
 */
export type StoreRequestObserver = (operation: 'get' | 'list' | 'create' | 'update' | 'delete', key: string, seconds: number) => void;

/** Bytes of entries one read of the open's scan may gather (see LevelRevisionStore.open). */
const SCAN_READ_BYTES = 4 << 20;
/** Entries one read of the open's scan may gather: classic-level's own cap per native read. */
const SCAN_BATCH = 1000;

export class LevelRevisionStore implements RevisionStore {
  private readonly listeners = new Set<(batch: AppliedBatch) => void>();
  private observer: StoreRequestObserver | undefined;
  private closed = false;
  /** Revision exposed to readers: only fully written batches. */
  private durableRevision: number;
  /** Reads below this fail even while a compaction is still being written. */
  private readFloor: number;
  /** The Raft index whose state is held durably, as persistThrough() recorded it (0: none). */
  private heldIndex = 0;

  private constructor(
    private readonly db: LevelDb,
    private readonly index: KeyIndex,
    private readonly applier: Applier,
    private readonly replicator: Replicator,
    private readonly sync: boolean,
    /** A database on disk (leveldb), not in memory. */
    private readonly onDisk: boolean,
  ) {
    this.durableRevision = applier.state.revision;
    this.readFloor = applier.state.compacted;
    replicator.start((commands) => this.applyCommitted(commands));
  }

  static async open(options: OpenStoreOptions): Promise<LevelRevisionStore> {
    let db: LevelDb;
    if (options.storage === 'leveldb') {
      if (!options.path) throw new Error('leveldb storage needs a path');
      db = new Level<string, Uint8Array>(options.path, { keyEncoding: 'utf8', valueEncoding: 'view' }) as unknown as LevelDb;
    } else {
      db = new MemoryLevel<string, Uint8Array>({ keyEncoding: 'utf8', valueEncoding: 'view' }) as unknown as LevelDb;
    }
    await db.open();
    try {
      if (options.naming !== undefined) {
        const stored = await db.get(META_NAMING);
        const recorded = stored ? Buffer.from(stored).toString('utf8') : undefined;
        if (recorded === undefined) await db.put(META_NAMING, Buffer.from(options.naming, 'utf8'), { sync: true });
        else if (recorded !== options.naming) {
          throw new StoreError(
            'STORE_CORRUPT',
            `the data in ${options.path ?? 'memory'} was written with --naming=${recorded}; start with that value or use another --data-dir`,
          );
        }
      }
      if (await db.get(META_RESTORING)) {
        // A snapshot image was being written when the process died: what is here is neither the
        // old state nor the new one. Start empty at applied index 0, so the Raft snapshot (which
        // the log store holds durably) is installed again before anything is served.
        await wipeState(db);
      }
      const [rev, compacted, applied, heldAt] = await db.getMany([META_REVISION, META_COMPACTED, META_APPLIED, META_HELD]);
      const index = new KeyIndex();
      // Keys as bytes: the index keeps strings of their own (see parseHistoryKeyBytes). Entries
      // gathered up to 1,000 per read from the native side: at the default 16 KiB a read brought
      // about 7 objects' records, each read a round trip through the thread pool.
      // Read once: nothing of it in the block cache (see RangeOptions.once).
      const scan = db.iterator({ gte: Buffer.from(HISTORY_PREFIX), lt: Buffer.from('h0'), keyEncoding: 'view', highWaterMarkBytes: SCAN_READ_BYTES, fillCache: false });
      const latest = options.latest;
      // A key's records are adjacent and in revision order (historyKey): its last one is its
      // latest, handed on once the next key starts (or the scan ends) unless it is a deletion.
      let held: { key: string; revision: number; bytes: Uint8Array } | undefined;
      let previous: string | undefined;
      // A batch per promise (see BatchIterator): as many entries as one native read gathers.
      try {
        for (;;) {
          const batch = await scan.nextv(SCAN_BATCH);
          if (batch.length === 0) break;
          for (const [stored, bytes] of batch) {
            const { key, revision } = parseHistoryKeyBytes(stored);
            const r = decodeRecordHead(bytes);
            const restored: Revision = { revision, tombstone: r.tombstone, createRevision: r.createRevision, version: r.version };
            // Another key than the previous record's is one not seen before (its records are adjacent).
            if (key !== previous) index.restoreFirst(key, restored);
            else index.restore(key, restored);
            previous = key;
            if (latest) {
              if (held !== undefined && held.key !== key) latest.value(latestValue(held));
              held = r.tombstone ? undefined : { key, revision, bytes };
            }
          }
        }
      } finally {
        await scan.close();
      }
      if (held !== undefined) latest?.value(latestValue(held));
      const state = { revision: decodeNumber(rev), compacted: decodeNumber(compacted), applied: decodeNumber(applied) };
      latest?.done(state.revision);
      const applier = new Applier(db, index, state);
      const store = new LevelRevisionStore(db, index, applier, options.replicator ?? new LocalReplicator(), options.sync ?? true, options.storage === 'leveldb');
      store.heldIndex = decodeNumber(heldAt);
      return store;
    } catch (e) {
      await db.close();
      throw e;
    }
  }

  currentRevision(): number {
    return this.durableRevision;
  }

  async consistentRevision(): Promise<number> {
    await this.replicator.barrier();
    return this.durableRevision;
  }

  assertWritable(): void {
    const failure = this.replicator.failure;
    if (failure !== undefined) throw new StoreError('STORE_UNAVAILABLE', `store failed: ${failure instanceof Error ? failure.message : String(failure)}`);
  }

  compactedRevision(): number {
    return this.readFloor;
  }

  /** Log index of the last applied entry (Raft replicas resume after it). */
  appliedIndex(): number {
    return this.applier.state.applied;
  }

  private checkRevision(revision: number | undefined): number {
    if (this.closed) throw new StoreError('STORE_CLOSED', 'store is closed');
    const current = this.durableRevision;
    if (!revision) return current;
    if (revision > current) {
      throw new StoreError('STORE_FUTURE_REVISION', `revision ${revision} is newer than the current revision ${current}`, {
        revision,
        currentRevision: current,
      });
    }
    if (revision < this.readFloor) {
      throw new StoreError('STORE_COMPACTED', `revision ${revision} has been compacted (compacted revision ${this.readFloor})`, {
        revision,
        compactedRevision: this.readFloor,
      });
    }
    return revision;
  }

  /**
   * Sets how puts proposed on this replica get the attributes their records store (the watch
   * cache's attributeBytes). A throw or an undefined answer stores the value without them: the
   * cache parses such values at load, as it did before records carried attributes.
   */
  describeWith(describe: DescribeValue): void {
    this.applier.describe = (key, decoded) => {
      try {
        return describe(key, decoded);
      } catch {
        return undefined;
      }
    };
  }

  /** Reports every later get, range and write to `observer` (one observer: the server's metrics). */
  observeRequests(observer: StoreRequestObserver): void {
    this.observer = observer;
  }

  private async measured<T>(operation: Parameters<StoreRequestObserver>[0], key: string, run: () => Promise<T>): Promise<T> {
    const observer = this.observer;
    if (!observer) return run();
    const started = performance.now();
    try {
      return await run();
    } finally {
      observer(operation, key, (performance.now() - started) / 1000);
    }
  }

  get(key: string, revision?: number): Promise<KeyValue | undefined> {
    return this.observer ? this.measured('get', key, () => this.read(key, revision)) : this.read(key, revision);
  }

  private async read(key: string, revision?: number): Promise<KeyValue | undefined> {
    const at = this.checkRevision(revision);
    const r = this.index.visible(key, at);
    if (!r) return undefined;
    const bytes = await this.db.get(historyKey(key, r.revision));
    if (!bytes) return this.missing(key, at);
    return { key, value: decodeRecord(bytes).value, createRevision: r.createRevision, modRevision: r.revision, version: r.version };
  }

  range(prefix: string, options: RangeOptions = {}): Promise<RangeResult> {
    return this.observer ? this.measured('list', prefix, () => this.rangeAt(prefix, options)) : this.rangeAt(prefix, options);
  }

  private async rangeAt(prefix: string, options: RangeOptions): Promise<RangeResult> {
    const at = this.checkRevision(options.revision);
    const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
    const picked: Array<{ key: string; revision: number; createRevision: number; version: number }> = [];
    let more = false;
    let count = 0;
    for (const key of this.index.keys(prefix, options.after)) {
      const r = this.index.visible(key, at);
      if (!r) continue;
      count++;
      if (picked.length >= limit) {
        more = true;
        if (!options.count) break;
        continue;
      }
      picked.push({ key, revision: r.revision, createRevision: r.createRevision, version: r.version });
    }
    const keys = picked.map((p) => historyKey(p.key, p.revision));
    const values = picked.length ? await (options.once ? this.db.getMany(keys, { fillCache: false }) : this.db.getMany(keys)) : [];
    const kvs: KeyValue[] = [];
    for (let i = 0; i < picked.length; i++) {
      const p = picked[i]!;
      const bytes = values[i];
      if (!bytes) return this.missing(p.key, at);
      const rec = decodeRecord(bytes);
      const kv: KeyValue = { key: p.key, value: rec.value, createRevision: p.createRevision, modRevision: p.revision, version: p.version };
      if (options.attributes && rec.attributes !== undefined) kv.attributes = rec.attributes;
      kvs.push(kv);
    }
    const result: RangeResult = { kvs, more, revision: at };
    if (options.count) result.count = count;
    return result;
  }

  /** A value the index promised is gone: compacted meanwhile (expected) or corruption (not). */
  private missing(key: string, at: number): never {
    if (at < this.readFloor) {
      throw new StoreError('STORE_COMPACTED', `revision ${at} has been compacted`, { revision: at, compactedRevision: this.readFloor });
    }
    throw new StoreError('STORE_CORRUPT', `store value for ${key} at revision ${at} is missing`);
  }

  async eventsSince(prefix: string, afterRevision: number): Promise<StoreEvent[]> {
    this.checkRevision(afterRevision || undefined);
    if (afterRevision < this.readFloor) {
      throw new StoreError('STORE_COMPACTED', `revision ${afterRevision} has been compacted`, {
        revision: afterRevision,
        compactedRevision: this.readFloor,
      });
    }
    const at = this.durableRevision;
    const wanted: Array<{ key: string; rev: { revision: number; tombstone: boolean; createRevision: number; version: number }; prev?: number }> = [];
    for (const key of this.index.keys(prefix)) {
      const hist = this.index.history(key);
      for (let i = 0; i < hist.length; i++) {
        const h = hist[i]!;
        if (h.revision <= afterRevision || h.revision > at) continue;
        const before = i > 0 && !hist[i - 1]!.tombstone ? hist[i - 1]!.revision : undefined;
        wanted.push(before !== undefined ? { key, rev: h, prev: before } : { key, rev: h });
      }
    }
    wanted.sort((a, b) => a.rev.revision - b.rev.revision || (a.key < b.key ? -1 : 1));
    const keys: string[] = [];
    for (const w of wanted) {
      keys.push(historyKey(w.key, w.rev.revision));
      if (w.prev !== undefined) keys.push(historyKey(w.key, w.prev));
    }
    const values = keys.length ? await this.db.getMany(keys) : [];
    const events: StoreEvent[] = [];
    let v = 0;
    for (const w of wanted) {
      const cur = values[v++];
      const prevBytes = w.prev !== undefined ? values[v++] : undefined;
      if (!cur || (w.prev !== undefined && !prevBytes)) return this.missing(w.key, afterRevision);
      const prevKv = prevBytes
        ? (() => {
            const p = decodeRecord(prevBytes);
            return { key: w.key, value: p.value, createRevision: p.createRevision, modRevision: w.prev!, version: p.version };
          })()
        : undefined;
      const rec = decodeRecord(cur);
      const ev: StoreEvent = {
        type: w.rev.tombstone ? 'delete' : 'put',
        kv: { key: w.key, value: rec.value, createRevision: w.rev.createRevision, modRevision: w.rev.revision, version: w.rev.version },
      };
      if (prevKv) ev.prevKv = prevKv;
      events.push(ev);
    }
    return events;
  }

  execute(command: Command, decoded?: ReadonlyMap<string, unknown>): Promise<TxnResult> {
    if (this.closed) return Promise.reject(new StoreError('STORE_CLOSED', 'store is closed'));
    if (command.type === 'txn') {
      const seen = new Set<string>();
      for (const op of command.ops) {
        // Two ops on one key at one revision would make history ambiguous.
        if (!isValidKey(op.key) || seen.has(op.key)) return Promise.reject(new Error(`invalid or duplicate key in command: ${op.key}`));
        seen.add(op.key);
      }
    }
    if (this.observer && command.type === 'txn' && (command.ops.length > 0 || command.compares.length > 0)) {
      const first = command.ops[0];
      const key = first?.key ?? command.compares[0]!.key;
      const operation =
        first?.type === 'delete' ? 'delete' : command.compares.some((c) => c.key === key && c.modRevision === 0) ? 'create' : 'update';
      return this.measured(operation, key, () => this.replicator.propose(command, decoded));
    }
    return this.replicator.propose(command, decoded);
  }

  /** Compacts history at or below `revision` through the log, like any other write. */
  compact(revision: number): Promise<TxnResult> {
    return this.execute({ type: 'compact', revision });
  }

  subscribe(listener: (batch: AppliedBatch) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Apply function handed to the replicator: durable first, then visible, then announced. */
  private async applyCommitted(commands: CommittedCommand[]): Promise<TxnResult[]> {
    const compact = commands.find((c) => c.command.type === 'compact');
    if (compact && compact.command.type === 'compact' && compact.command.revision > this.readFloor) {
      this.readFloor = Math.min(compact.command.revision, this.durableRevision);
    }
    const { results, batch } = await this.applier.apply(commands, this.sync);
    this.durableRevision = batch.revision;
    this.readFloor = this.applier.state.compacted;
    for (const listener of this.listeners) listener(batch);
    return results;
  }

  /** Whether the data outlives the process (a database on disk): what persistThrough() needs. */
  get durable(): boolean {
    return this.onDisk;
  }

  /**
   * Makes every applied batch durable and records that this store holds the Raft log's state at
   * `index`: an in-place Raft snapshot, for which the store itself is the snapshot (etcd's
   * backend), instead of an image of everything written to a file every few thousand writes.
   * Called between applies (every batch before it has been written): one synced write, since
   * LevelDB syncs its log, and every earlier write in it, with it.
   */
  async persistThrough(index: number): Promise<void> {
    if (!this.onDisk) throw new StoreError('STORE_UNAVAILABLE', 'a store in memory holds nothing durably');
    const held = Math.max(index, this.heldIndex);
    await this.db.put(META_HELD, encodeNumber(held), { sync: true });
    this.heldIndex = held;
  }

  /** Whether this store holds the state at Raft index `index` or a later one (see persistThrough). */
  holdsThrough(index: number): boolean {
    return this.applier.state.applied >= index || this.heldIndex >= index;
  }

  /**
   * An image of the whole state (history in the retention window and the store's metadata) for
   * a Raft snapshot. The state is captured before this returns (an explicit database snapshot
   * and the applier's counters), so applies may go on while the image is read.
   */
  captureImage(): Promise<Uint8Array> {
    return concatChunks(this.captureImageStream());
  }

  /**
   * captureImage() as chunks of about IMAGE_CHUNK_BYTES, read from the database as they are
   * consumed: the image goes to the Raft snapshot file without ever being whole in memory.
   * The state is captured before this returns.
   */
  captureImageStream(): AsyncIterable<Uint8Array> {
    const snapshot = this.db.snapshot();
    const { revision, compacted, applied } = this.applier.state;
    const db = this.db;
    return (async function* (): AsyncGenerator<Uint8Array> {
      try {
        const header = Buffer.allocUnsafe(IMAGE_HEADER_BYTES);
        header.write(IMAGE_MAGIC, 0, 'latin1');
        header.writeDoubleBE(applied, IMAGE_MAGIC.length);
        header.writeDoubleBE(revision, IMAGE_MAGIC.length + 8);
        header.writeDoubleBE(compacted, IMAGE_MAGIC.length + 16);
        yield header;
        // Records are written straight into the chunk being filled (no per-record parts to
        // join), keys as the bytes stored (not decoded to strings and encoded again). The
        // reads gather about a chunk each from the native side: at the default 16 KiB a read
        // brought about 7 records, a round trip through the thread pool each, and a replica
        // writes an image of its whole store every --snapshot-count entries. Not kept in the
        // block cache: a snapshot reads everything once.
        let chunk = Buffer.allocUnsafe(IMAGE_CHUNK_BYTES);
        let at = 0;
        const records = db.iterator({ gte: Buffer.from(HISTORY_PREFIX), lt: Buffer.from('h0'), keyEncoding: 'view', snapshot, highWaterMarkBytes: IMAGE_CHUNK_BYTES, fillCache: false });
        for await (const [key, value] of records) {
          const need = 8 + key.length + value.length;
          if (at + need > chunk.length) {
            if (at > 0) yield chunk.subarray(0, at);
            // A fresh buffer: the consumer may still hold the chunk just yielded.
            chunk = Buffer.allocUnsafe(Math.max(IMAGE_CHUNK_BYTES, need));
            at = 0;
          }
          chunk.writeUInt32BE(key.length, at);
          chunk.writeUInt32BE(value.length, at + 4);
          chunk.set(key, at + 8);
          chunk.set(value, at + 8 + key.length);
          at += need;
        }
        if (at > 0) yield chunk.subarray(0, at);
      } finally {
        await snapshot.close();
      }
    })();
  }

  /**
   * Replaces the whole state with an image from captureImage() (of this or another replica),
   * unless this store already holds the state at or after the image's log index (a restart:
   * the local state is a later state of the same log). Subscribers get a `reset` batch.
   */
  async restoreImage(image: Uint8Array): Promise<void> {
    await this.restoreImageStream([image]);
  }

  /** restoreImage() from chunks, read as they are written (the image is never whole in memory). */
  async restoreImageStream(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<void> {
    const reader = new ImageReader(chunks);
    try {
      const img = await reader.header();
      if (this.applier.state.applied >= img.applied) return;
      const db = this.db;
      await db.put(META_RESTORING, Buffer.from('1'), { sync: this.sync });
      await wipeState(db, false);
      let batch = db.batch();
      let n = 0;
      this.index.clear();
      for (let r = await reader.record(); r; r = await reader.record()) {
        batch.put(r.key, r.value);
        const { key: k, revision } = parseHistoryKey(r.key);
        const rec = decodeRecord(r.value);
        this.index.restore(k, { revision, tombstone: rec.tombstone, createRevision: rec.createRevision, version: rec.version });
        if (++n % 1000 === 0) {
          await batch.write();
          batch = db.batch();
        }
      }
      batch.put(META_REVISION, encodeNumber(img.revision));
      batch.put(META_COMPACTED, encodeNumber(img.compacted));
      batch.put(META_APPLIED, encodeNumber(img.applied));
      batch.del(META_RESTORING);
      await batch.write({ sync: this.sync });
      this.applier.state.revision = img.revision;
      this.applier.state.compacted = img.compacted;
      this.applier.state.applied = img.applied;
      this.heldIndex = 0;
      this.durableRevision = img.revision;
      this.readFloor = img.compacted;
      const reset: AppliedBatch = { revision: img.revision, events: [], reset: true };
      if (img.compacted > 0) reset.compactedRevision = img.compacted;
      for (const listener of this.listeners) listener(reset);
    } finally {
      await reader.close();
    }
  }

  /**
   * Closes and reopens a database on disk; the caller guarantees nothing else uses the store
   * meanwhile (the server's start, once the watch cache is loaded and before it serves).
   * LevelDB reads its table files through memory maps, and a table stays mapped while it is
   * open: after the start's reads (the key index scan, the cache's load) every page of the
   * data is mapped and resident — counted in the process's RSS (with 50,000 pods about 35 MB)
   * though the cache now answers reads and most of it is not read again. Reopened, LevelDB
   * maps a table again when a read or compaction needs it.
   */
  async releaseReadMappings(): Promise<void> {
    if (!this.onDisk || this.closed) return;
    await this.db.close();
    await this.db.open();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.replicator.close();
    this.closed = true;
    await this.db.close();
  }
}

export { encodeNumber };

const IMAGE_MAGIC = 'clusterd-store-image/1\n';

const IMAGE_HEADER_BYTES = IMAGE_MAGIC.length + 24;
/** Bytes of records per chunk of a streamed image. */
const IMAGE_CHUNK_BYTES = 1 << 20;

/** Chunks joined into one buffer. */
async function concatChunks(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const c of chunks) parts.push(c);
  return Buffer.concat(parts);
}

/** Reads an image (header, then records) from chunks, pulling only as many as it needs. */
class ImageReader {
  private readonly it: Iterator<Uint8Array> | AsyncIterator<Uint8Array>;
  private buf: Buffer = Buffer.alloc(0);
  private at = 0;
  private ended = false;

  constructor(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>) {
    this.it = Symbol.asyncIterator in chunks ? chunks[Symbol.asyncIterator]() : chunks[Symbol.iterator]();
  }

  async header(): Promise<{ applied: number; revision: number; compacted: number }> {
    if (!(await this.fill(IMAGE_HEADER_BYTES)) || this.buf.toString('latin1', this.at, this.at + IMAGE_MAGIC.length) !== IMAGE_MAGIC) {
      throw new StoreError('STORE_CORRUPT', 'not a store snapshot image');
    }
    const h = this.at + IMAGE_MAGIC.length;
    const out = { applied: this.buf.readDoubleBE(h), revision: this.buf.readDoubleBE(h + 8), compacted: this.buf.readDoubleBE(h + 16) };
    this.at += IMAGE_HEADER_BYTES;
    return out;
  }

  /** The next record, or null at the end of the image. */
  async record(): Promise<{ key: string; value: Uint8Array } | null> {
    if (!(await this.fill(1))) return null;
    if (!(await this.fill(8))) throw new StoreError('STORE_CORRUPT', 'store snapshot image truncated');
    const kl = this.buf.readUInt32BE(this.at);
    const vl = this.buf.readUInt32BE(this.at + 4);
    if (!(await this.fill(8 + kl + vl))) throw new StoreError('STORE_CORRUPT', 'store snapshot image truncated');
    const o = this.at + 8;
    const key = this.buf.toString('utf8', o, o + kl);
    const value = Uint8Array.prototype.slice.call(this.buf, o + kl, o + kl + vl);
    this.at = o + kl + vl;
    return { key, value };
  }

  /** Stops reading (closes a file the chunks come from). */
  async close(): Promise<void> {
    if (!this.ended) await this.it.return?.();
    this.ended = true;
  }

  /** Whether `n` bytes are available from the read position, pulling chunks as needed. */
  private async fill(n: number): Promise<boolean> {
    while (this.buf.length - this.at < n) {
      if (this.ended) return false;
      const next = await this.it.next();
      if (next.done) {
        this.ended = true;
        return false;
      }
      const c = next.value;
      const rest = this.buf.subarray(this.at);
      this.buf = rest.length === 0 ? Buffer.from(c.buffer, c.byteOffset, c.byteLength) : Buffer.concat([rest, c]);
      this.at = 0;
    }
    return true;
  }
}

/** Deletes every history record and the revision metadata (in small batches). */
async function wipeState(db: LevelDb, clearMarker = true): Promise<void> {
  let batch = db.batch();
  let n = 0;
  for await (const [key] of db.iterator({ gte: HISTORY_PREFIX, lt: 'h0' })) {
    batch.del(key);
    if (++n % 1000 === 0) {
      await batch.write();
      batch = db.batch();
    }
  }
  batch.del(META_REVISION).del(META_COMPACTED).del(META_APPLIED).del(META_HELD);
  if (clearMarker) batch.del(META_RESTORING);
  await batch.write({ sync: true });
}

/** A key's latest record as a range with attributes returns it (see OpenScanConsumer). */
function latestValue(held: { key: string; revision: number; bytes: Uint8Array }): KeyValue {
  const rec = decodeRecord(held.bytes);
  const kv: KeyValue = { key: held.key, value: rec.value, createRevision: rec.createRevision, modRevision: held.revision, version: rec.version };
  if (rec.attributes !== undefined) kv.attributes = rec.attributes;
  return kv;
}
