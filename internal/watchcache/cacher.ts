// internal/watchcache/cacher owns serving the storage read interface from this replica's watch
// cache, as upstream's cacher serves storage.Interface: it decides when a read may be answered
// from memory (after waiting for the revision the mode needs: the consistent revision, which a
// Raft store confirms with ReadIndex, or the requested one, "too large" after a bounded wait),
// keeps snapshots for the chunks of paginated lists, and delegates to the store (StoreReader)
// for history: exact reads at other revisions, continuations without a snapshot. Versions below
// the compacted revision expire here, snapshot or not.
// Imports: store (types), storage, store-reader, types, watch-cache, watcher.

import { StoreError } from '../store/types.js';
import type { CachedStorage, ReadMode, StorageList, StorageListOptions, StorageWatchOptions } from './storage.js';
import { StoreReader, type StoreReads } from './store-reader.js';
import type { CacheEntry } from './types.js';
import type { WatchCache } from './watch-cache.js';
import type { CacheWatcher } from './watcher.js';

export interface CacherOptions {
  /** How long a read waits for a revision the cache has not reached before it is too large. */
  tooLargeWaitMs: number;
  /** How long a paginated list's snapshot is kept (gate ListFromCacheSnapshot); 0 = never. */
  listSnapshotTtlMs: number;
  /** Clock of snapshot expiry (tests move it). */
  now?: () => number;
}

export class Cacher implements CachedStorage {
  /** The store's own answers, for history the cache does not hold. */
  private readonly storage: StoreReader;
  private readonly now: () => number;

  constructor(
    private readonly store: StoreReads,
    private readonly cache: WatchCache,
    private readonly options: CacherOptions,
  ) {
    this.storage = new StoreReader(store, (kv) => cache.entryFromKv(kv));
    this.now = options.now ?? Date.now;
  }

  async waitUntilFresh(mode: ReadMode): Promise<number> {
    const { cache } = this;
    const wait = this.options.tooLargeWaitMs;
    if (mode.kind === 'consistent') await cache.waitForRevision(await this.store.consistentRevision(), wait);
    else if (mode.kind === 'notOlderThan') await cache.waitForRevision(mode.revision, wait);
    else if (mode.kind === 'any' && !cache.ready) await cache.waitForRevision(0, wait);
    return cache.revision;
  }

  /**
   * An exact version this replica has not applied yet but the cluster has (a client that wrote
   * through another replica): wait for it rather than answer "too large". A version nobody has
   * reached is refused by the store at once, as before; a single replica never waits here.
   */
  private async reachExact(revision: number): Promise<void> {
    if (revision <= this.cache.revision) return;
    if ((await this.store.consistentRevision()) < revision) return;
    await this.cache.waitForRevision(revision, this.options.tooLargeWaitMs);
  }

  async get(key: string, mode: ReadMode): Promise<CacheEntry | undefined> {
    const prefix = this.cache.prefixOf(key);
    // Exact reads are history (upstream's cacher delegates them too); keys outside the object
    // root are not cached.
    if (mode.kind === 'exact') await this.reachExact(mode.revision);
    if (mode.kind === 'exact' || prefix === undefined) return this.storage.get(key, mode);
    await this.waitUntilFresh(mode);
    return this.cache.resource(prefix).get(key);
  }

  async list(keyPrefix: string, options: StorageListOptions): Promise<StorageList> {
    const prefix = this.cache.prefixOf(keyPrefix);
    if (prefix === undefined) return this.storage.list(keyPrefix, options);
    const { mode, after, limit = 0, filter, count = false } = options;
    const rc = this.cache.resource(prefix);
    const now = this.now();
    const listOptions = { keyPrefix, after, limit, filter };
    const exact = mode.kind === 'exact' && mode.revision > 0 ? mode.revision : undefined;
    if (exact !== undefined) {
      await this.reachExact(exact);
      // Versions outside the retention window are gone even where a snapshot survives, so
      // tokens and exact reads expire with the window, as documented.
      const compacted = this.store.compactedRevision();
      if (exact < compacted) {
        throw new StoreError('STORE_COMPACTED', `revision ${exact} has been compacted (compacted revision ${compacted})`, { revision: exact, compactedRevision: compacted });
      }
      const snapshot = rc.snapshotAt(exact, now);
      if (snapshot) return listed(exact, snapshot.list(listOptions), count);
      if (exact !== this.cache.revision) return this.storage.list(keyPrefix, options);
    } else {
      await this.waitUntilFresh(mode);
    }
    const revision = this.cache.revision;
    const result = rc.list(listOptions);
    // The next chunks of this list come from the snapshot, not the store's history.
    if (result.more && limit > 0 && this.options.listSnapshotTtlMs > 0) rc.takeSnapshot(revision, now, this.options.listSnapshotTtlMs);
    return listed(revision, result, count);
  }

  async watch(options: StorageWatchOptions): Promise<CacheWatcher> {
    const { prefix, keyPrefix, filter, fromRevision, consistent } = options;
    if (fromRevision === 0 && consistent) await this.waitUntilFresh({ kind: 'consistent' });
    else if (!this.cache.ready) await this.waitUntilFresh({ kind: 'any' });
    return this.cache.watch(keyPrefix !== undefined ? { prefix, filter, fromRevision, keyPrefix } : { prefix, filter, fromRevision });
  }

  peek(key: string): CacheEntry | undefined {
    const prefix = this.cache.prefixOf(key);
    return prefix === undefined ? undefined : this.cache.resource(prefix).get(key);
  }
}

function listed(revision: number, r: { entries: CacheEntry[]; more: boolean; remaining: number }, count: boolean): StorageList {
  const out: StorageList = { revision, entries: r.entries, more: r.more };
  if (count && r.more) out.remaining = r.remaining;
  return out;
}
