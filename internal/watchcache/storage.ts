// internal/watchcache/storage owns the read side of the storage seam: the one interface every
// read of stored objects goes through, with the API's resourceVersion semantics (ReadMode). The
// store answers it directly (StoreReader); this replica's watch cache answers it from memory and
// goes to the store only for history (Cacher), as upstream's cacher wraps its storage.Interface.
// Failures are StoreErrors, which the registry turns into Status errors: STORE_COMPACTED (410),
// STORE_FUTURE_REVISION (504 with the ResourceVersionTooLarge cause), STORE_READ_UNAVAILABLE (503).
// Imports: store (types), types, watcher (types).

import { StoreError } from '../store/types.js';
import type { CacheEntry, EntryFilter } from './types.js';
import type { CacheWatcher } from './watcher.js';

/** How a read must relate to the store's state (spec §4.5). */
export type ReadMode =
  /** As new as every write acknowledged anywhere before the read (resourceVersion unset). */
  | { kind: 'consistent' }
  /** Whatever this replica has (resourceVersion=0). */
  | { kind: 'any' }
  /** At least `revision`; a revision not reached in time is "too large". */
  | { kind: 'notOlderThan'; revision: number }
  /** The state at exactly `revision`, from history when it is not the current one. */
  | { kind: 'exact'; revision: number };

export interface StorageListOptions {
  mode: ReadMode;
  /** Start strictly after this key (a continuation: with mode exact at the token's revision). */
  after?: string;
  /** At most this many matching entries (0 or absent = all); `more` tells whether others match. */
  limit?: number;
  filter?: EntryFilter;
  /** Report in `remaining` how many entries follow the page (the store pays a counting range for it). */
  count?: boolean;
}

export interface StorageList {
  /** The revision the list was read at (its resourceVersion). */
  revision: number;
  /** Matching entries in key order; corrupt entries are included for the caller to refuse. */
  entries: CacheEntry[];
  /** True when matching entries follow the last one returned. */
  more: boolean;
  /**
   * With `count` and `more`: entries under the prefix after the page. Without a filter that is
   * what remainingItemCount reports; with one it is only an upper bound.
   */
  remaining?: number;
}

/** Reads of stored objects: what the store and this replica's watch cache both answer. */
export interface StorageReader {
  /** The object at `key` as the mode requires, or undefined when there is none. */
  get(key: string, mode: ReadMode): Promise<CacheEntry | undefined>;
  /** Objects under `keyPrefix` (a resource, or one namespace of it) in key order. */
  list(keyPrefix: string, options: StorageListOptions): Promise<StorageList>;
}

export interface StorageWatchOptions {
  /** Resource prefix (`/registry/core/pods/`). */
  prefix: string;
  /** Restrict every event to keys under this sub-prefix (a namespace). */
  keyPrefix?: string;
  filter: EntryFilter;
  /** 0 = the current state as synthetic ADDED events, then changes; n > 0 = changes after n. */
  fromRevision: number;
  /** The current state sent first (fromRevision 0) must be consistent, not this replica's latest. */
  consistent: boolean;
}

/** The reader the registry uses: reads, plus watches and waits served by this replica's cache. */
export interface CachedStorage extends StorageReader {
  /**
   * Waits until this replica can serve reads in `mode` (at once for exact reads, which history
   * answers) and resolves with the revision it serves them at.
   */
  waitUntilFresh(mode: ReadMode): Promise<number>;
  watch(options: StorageWatchOptions): Promise<CacheWatcher>;
  /**
   * What this replica holds for `key` right now, without waiting: a hint for the write path (the
   * bytes of a write it has just applied, a dry run's name clash), never the answer to a read.
   */
  peek(key: string): CacheEntry | undefined;
}

/** A revision this replica has not reached (in time): 504 with the ResourceVersionTooLarge cause. */
export function tooLargeRevision(revision: number, current: number): StoreError {
  return new StoreError('STORE_FUTURE_REVISION', `Too large resource version: ${revision}, current: ${current}`, { revision, currentRevision: current });
}

/** A read that waited while the cache was (re)loading (upstream's "storage is (re)initializing"): 503 with Retry-After. */
export function reinitializing(): StoreError {
  return new StoreError('STORE_READ_UNAVAILABLE', 'storage is (re)initializing: this replica is loading its cache (after installing a snapshot of the store)', { retryAfterSeconds: 1 });
}
