// internal/store/types owns the storage vocabulary: versioned key-values, the Command every
// mutation is expressed as, its result, the events applying it produces, and store errors with
// stable codes. Everything above the store speaks these types; nothing here knows about objects.
// Imports: nothing from the project.

/** A key's value at one revision. Revisions are the store's global, gap-free mutation counter. */
export interface KeyValue {
  key: string;
  value: Uint8Array;
  /** Revision of the put that created this generation of the key. */
  createRevision: number;
  /** Revision of the last put (or, in delete events, of the delete). */
  modRevision: number;
  /** Number of puts since creation (1 after create). */
  version: number;
  /** What the watch cache derived from the value when it was written, when stored (range with `attributes`). */
  attributes?: Uint8Array;
}

/**
 * A precondition on one key: the key's current modRevision must equal `modRevision`
 * (0 = the key must not exist). This is the only compare the registry needs: it is how
 * create-if-absent, update-if-unchanged and delete-if-unchanged are written.
 */
export interface Compare {
  key: string;
  modRevision: number;
}

export type Op = { type: 'put'; key: string; value: Uint8Array } | { type: 'delete'; key: string };

/**
 * Every mutation: all compares hold → all ops apply atomically at one new revision;
 * any compare fails → nothing applies and the revision does not move.
 * `compact` commands drop history at or below a revision (replicated so all replicas agree).
 */
export type Command =
  | { type: 'txn'; compares: Compare[]; ops: Op[] }
  | { type: 'compact'; revision: number };

export interface TxnResult {
  succeeded: boolean;
  /** The store revision after this command (unchanged when it failed). */
  revision: number;
  /** The first failing compare's key when succeeded is false. */
  failedKey?: string;
}

/** One applied change. A command that touches several keys emits several events at one revision. */
export interface StoreEvent {
  type: 'put' | 'delete';
  /** For puts the new value; for deletes the key with an empty value and modRevision = the delete's revision. */
  kv: KeyValue;
  /** The value before this change, when there was one. */
  prevKv?: KeyValue;
  /**
   * The value as its writer had it decoded, when the write was proposed on this replica (a
   * hint: replicas applying others' writes do not have it). Read-only for everyone.
   */
  decoded?: unknown;
  /**
   * What the proposing replica's watch cache derived from the value (opaque to the store; the
   * cache's own format), carried in the log so that the other replicas need not parse it.
   */
  attributes?: Uint8Array;
}

/** What an applied batch announces to subscribers, in revision order. */
export interface AppliedBatch {
  /** The store revision after the batch. */
  revision: number;
  events: StoreEvent[];
  /** Set when the batch included a compaction: history at or below this revision is gone. */
  compactedRevision?: number;
  /**
   * Set when the whole state was replaced (a Raft snapshot installed on a replica that fell
   * behind): `events` is empty and subscribers must reload everything from the store.
   */
  reset?: boolean;
}

export type StoreErrorCode =
  | 'STORE_COMPACTED'
  | 'STORE_FUTURE_REVISION'
  | 'STORE_CLOSED'
  | 'STORE_CORRUPT'
  | 'STORE_UNAVAILABLE'
  /** The write was certainly not applied (no leader within the bound, or the proposal queue is full): retry. */
  | 'STORE_NOT_PROPOSED'
  /** The write may or may not have been applied (it timed out after entering the log). */
  | 'STORE_OUTCOME_UNKNOWN'
  /** A linearizable read could not confirm the committed state in time (no leader). */
  | 'STORE_READ_UNAVAILABLE';

export class StoreError extends Error {
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    readonly details: { revision?: number; compactedRevision?: number; currentRevision?: number; retryAfterSeconds?: number; tooManyRequests?: boolean } = {},
  ) {
    super(message);
    this.name = 'StoreError';
  }
}

export const isStoreError = (e: unknown, code?: StoreErrorCode): e is StoreError =>
  e instanceof StoreError && (code === undefined || e.code === code);

export interface RangeOptions {
  /** Read at this revision (0 or absent = the latest applied). */
  revision?: number;
  /** At most this many results (0 or absent = all). */
  limit?: number;
  /** Start strictly after this key (for continuation). */
  after?: string;
  /** Count every match after `after` (ignoring limit) into `count`. */
  count?: boolean;
  /** Return the attributes stored beside each value (KeyValue.attributes), where a store keeps them. */
  attributes?: boolean;
  /**
   * The range is read once, as part of reading everything (the watch cache's priming): a store
   * keeps none of it in its read cache. LevelDB's block cache, filled by such a read, was
   * allocated by the threads that read and stayed in their malloc arenas after it was freed
   * (with 50,000 pods stored, about 12 MiB of RSS).
   */
  once?: boolean;
}

/**
 * Told, while a store opens, each stored key's latest value when that is not a deletion: what a
 * range at the opened revision returns (attributes included), in key order, read by the scan
 * that builds the key index, so a consumer (the watch cache) needs no second read of them.
 * `done` follows the last value with the revision they are at; an open that fails never calls it.
 */
export interface OpenScanConsumer {
  value(kv: KeyValue): void;
  done(revision: number): void;
}

export interface RangeResult {
  kvs: KeyValue[];
  /** True when results were cut by `limit`. */
  more: boolean;
  /** The revision the range was read at. */
  revision: number;
  /** Matches after `after` (returned or not), when requested. */
  count?: number;
}

/** The store contract the registry and watch cache build on. */
export interface RevisionStore {
  /** The last applied revision on this replica (may be stale on a follower: see consistentRevision). */
  currentRevision(): number;
  /**
   * A revision at least as new as every write acknowledged anywhere before the call, once this
   * replica has applied it: the local store answers at once, a Raft replica after ReadIndex.
   * Throws STORE_READ_UNAVAILABLE when that cannot be confirmed in time.
   */
  consistentRevision(): Promise<number>;
  /**
   * Throws STORE_UNAVAILABLE when the store refuses writes for good (an apply failed and the
   * replica must restart), so health checks stop reporting a store that cannot write as ready.
   */
  assertWritable(): void;
  /** History at or below this revision is unavailable. */
  compactedRevision(): number;
  /** The key at a revision (default latest). Throws STORE_COMPACTED / STORE_FUTURE_REVISION. */
  get(key: string, revision?: number): Promise<KeyValue | undefined>;
  /** Keys with `prefix`, in key order, at a revision. */
  range(prefix: string, options?: RangeOptions): Promise<RangeResult>;
  /**
   * Proposes a command; resolves once it is durably committed and applied. `decoded` maps
   * keys of put ops to the values' decoded form, handed to subscribers as a hint.
   */
  execute(command: Command, decoded?: ReadonlyMap<string, unknown>): Promise<TxnResult>;
  /**
   * Subscribes to applied batches, in revision order, delivered synchronously after the
   * batch is durable and before execute() resolves. Returns an unsubscribe function.
   */
  subscribe(listener: (batch: AppliedBatch) => void): () => void;
  /**
   * Applied events for keys under `prefix` with revision > `afterRevision`, in revision order,
   * from retained history. Throws STORE_COMPACTED when afterRevision < compactedRevision().
   */
  eventsSince(prefix: string, afterRevision: number): Promise<StoreEvent[]>;
  close(): Promise<void>;
}
